#!/usr/bin/env python3
# kernel-monitors.py [INDEX] - prints how many advertisement monitors the kernel holds on
# controller INDEX (default 0): Read Advertisement Monitor Features (BlueZ doc/mgmt-api.txt,
# opcode 0x0051), its Number_Of_Handles, then the handles. Standard library only (the guest's
# python3): the management socket is an HCI socket bound to the control channel with a
# struct sockaddr_hci built here (hci_family, hci_dev HCI_DEV_NONE, hci_channel 3), which
# Python's own bind does not offer. Needs CAP_NET_ADMIN (root). Exit 0, or 1 with the reason.
import ctypes
import select
import socket
import struct
import sys

AF_BLUETOOTH, BTPROTO_HCI, HCI_DEV_NONE, HCI_CHANNEL_CONTROL = 31, 1, 0xFFFF, 3
READ_ADV_MONITOR_FEATURES, COMMAND_COMPLETE, COMMAND_STATUS = 0x0051, 0x0001, 0x0002

index = int(sys.argv[1]) if len(sys.argv) > 1 else 0
libc = ctypes.CDLL(None, use_errno=True)
sock = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW, BTPROTO_HCI)
address = struct.pack("=HHH", AF_BLUETOOTH, HCI_DEV_NONE, HCI_CHANNEL_CONTROL)
if libc.bind(sock.fileno(), ctypes.c_char_p(address), len(address)) != 0:
    sys.exit(f"bind HCI_CHANNEL_CONTROL: {ctypes.get_errno()}")
sock.send(struct.pack("<HHH", READ_ADV_MONITOR_FEATURES, index, 0))
while True:
    ready, _, _ = select.select([sock], [], [], 5)
    if not ready:
        sys.exit("no answer to Read Advertisement Monitor Features within 5 s")
    event = sock.recv(4096)
    code, controller, _ = struct.unpack_from("<HHH", event)
    if code not in (COMMAND_COMPLETE, COMMAND_STATUS) or controller != index:
        continue
    opcode, status = struct.unpack_from("<HB", event, 6)
    if opcode != READ_ADV_MONITOR_FEATURES:
        continue
    if status != 0 or code == COMMAND_STATUS:
        sys.exit(f"Read Advertisement Monitor Features on hci{index}: status 0x{status:02x}")
    # Supported_Features (4), Enabled_Features (4), Max_Num_Handles (2), Max_Num_Patterns (1),
    # Number_Of_Handles (2), then each handle (2).
    count = struct.unpack_from("<H", event, 9 + 11)[0]
    handles = struct.unpack_from(f"<{count}H", event, 9 + 13)
    print(count, *handles)
    break
