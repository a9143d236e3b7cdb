# bumble_lab.py - what the lab's Bumble peripherals share (imported by bumble-hr.py and by the
# plugins' own Bumble peripherals under plugins/*/Lab/). Written against Bumble 0.0.236.
#
#   link, gateway_side = await open_gateway_link()   # inside `async with`, see below
#
# `gateway_link(transport)` makes the Bumble link and the gateway's controller on it: offered to
# the kernel over /dev/vhci, so that bluetoothd sees a new adapter (hci0 in the lab). A peripheral
# then puts its own controller and host stack on the same link.
import asyncio

from bumble.controller import Controller
from bumble.core import PhysicalTransport
from bumble.link import LocalLink

# The gateway controller's public address: the kernel treats a controller without one (all
# zeros) as unconfigured, and bluetoothd never lists it.
GATEWAY_ADDRESS = "00:BB:01:00:00:01"


class ConnectionAddressedLink(LocalLink):
    """A LocalLink whose LE data names the sending connection's own address. Bumble 0.0.236's
    names the sending controller's current random address instead, which is not the address a
    central connected with when it connected with its public one (as the kernel does) or set a
    new random address since (as it does to scan again): the peripheral then finds no
    connection for the data and drops it."""

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        connection = sender_controller.le_connections.get(destination_address)
        destination = self.find_le_controller(destination_address)
        if transport != PhysicalTransport.LE or connection is None or destination is None:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        source = connection.self_address
        asyncio.get_running_loop().call_soon(lambda: destination.on_link_acl_data(source, transport, data))


def gateway_link(gateway_side):
    """The link, with the gateway's controller on it, driven by the kernel through `gateway_side`
    (the transport `open_transport("vhci")` opened)."""
    link = ConnectionAddressedLink()
    Controller(
        "gateway", host_source=gateway_side.source, host_sink=gateway_side.sink, link=link,
        public_address=GATEWAY_ADDRESS)
    return link


def log(*words):
    print(*words, flush=True)
