'''python3-dbusmock template: the bluez5 template plus heart-rate monitors with GATT objects.

Run it on a private bus:

    DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/x/bus /usr/bin/python3 -m dbusmock \
        --template Tests/Fixtures/bluez_gatt.py

It keeps everything the bluez5 template offers (org.bluez.Mock.AddAdapter, ...) and adds a
control interface, org.healthgate.Test, on "/" that the Swift tests call over D-Bus:

  AddHeartRateMonitor(adapter s, address s, name s, acquire b) -> o
      A Device1 advertising 180d/180a/180f. On Device1.Connect it exports GattService1 and
      GattCharacteristic1 objects (HR 180d: 2A37 notify, 2A38 read, 2A39 write; DIS 180a:
      2A29 and 2A24 read; Battery 180f: 2A19 read+notify) and Battery1, then sets
      ServicesResolved. `acquire` false makes AcquireNotify fail with NotSupported.
  FailNextConnect(device o, error s)      the next Connect replies with that D-Bus error
  FailNextStartNotify(device o, error s)  the next StartNotify on one of its characteristics
                                          replies with that D-Bus error (bluetoothd's InProgress
                                          while it enables a cached subscription itself)
  ResolveBeforeObjects(device o, b)       announce ServicesResolved before exporting GATT
  Notify(characteristic o, value ay)      one notification: a datagram on the acquired
                                          socket if any, else PropertiesChanged "Value"
  NotifyState(characteristic o) -> (bb)   (acquired, notifying)
  Written(characteristic o) -> aay        values written with WriteValue (a descriptor's too)
  ConnectAttempts(device o) -> u
  DropLink(device o)                      the link drops: GATT objects go, Connected false
  RemoveMonitor(device o)                 the device object goes (InterfacesRemoved)
  AddGlucoseMeter(adapter s, address s, name s) -> o
      A Device1 advertising 1808/180a. Its GATT: Glucose 1808 (2A18 notify, 2A52 Record Access
      Control Point write+indicate) and DIS 180a (2A29, 2A24, 2A25 read). A write to the RACP
      "report stored records" (01 01: all; 01 03 01 nn nn: sequence number >= nnnn) sends the
      matching records on 2A18, then the response 06 00 01 01 on the RACP.
  AddGlucoseRecord(device o, value ay)    a stored record (its sequence number in octets 1-2)
  AddHealthSensor(adapter s, address s, name s) -> o
      A Device1 advertising 1840/180a. Its GATT: Generic Health Sensor 1840 (2BF3 Health Sensor
      Features read, with GattDescriptor1 objects below it: two Observation Schedule 2910,
      read+write, and two Valid Range and Accuracy 2911, read; 2B8B Live Health Observations
      notify) and DIS 180a (2A29 read). A descriptor's WriteValue is recorded (Written) and
      becomes its value; a schedule whose measurement period (octets 4-7, a FLOAT) is 0 is
      refused as bluetoothd reports an ATT error it has no name for: org.bluez.Error.Failed,
      "Operation failed with ATT error: 0xff" (Out of Range, CSS Part B §1.2).
  RequirePairing(device o, passkey i)     the device requires bonding: its GATT refuses reads,
                                          writes and subscriptions with NotPermitted until it
                                          is paired. Device1.Pair then asks the agent the
                                          CALLER registered (AgentManager1.RegisterAgent from
                                          the same connection, as bluetoothd does) for the
                                          passkey with Agent1.RequestPasskey, and fails with
                                          AuthenticationFailed when it differs; passkey -1
                                          pairs with "just works" without asking. Paired stays
                                          true across dropped links, as a bond does.
  PairingState(device o) -> (bbu)         (Paired, Trusted, passkey requests made)
  Advertise(adapter s, address s, name s, manufacturer a{qay}, service a{say}) -> o
      An advertiser heard by discovery: the Device1 is added on its first advertisement (no
      UUIDs, not connectable here), then each call sets ManufacturerData (a{qv}) and
      ServiceData (a{sv}) with one PropertiesChanged, as bluetoothd reports a changed
      advertisement. On an adapter that offers the Advertisement Monitor (OfferAdvertisementMonitor)
      an advertisement is reported only while the adapter discovers or a registered monitor's
      pattern matches it, as bluetoothd's passive scanning reports only what a monitor selects;
      a monitor with RSSI thresholds is told DeviceFound the first time it selects a device, one
      without them every time (bluetoothd 5.66).
  OfferAdvertisementMonitor(adapter s, refuse b)
      The adapter gains org.bluez.AdvertisementMonitorManager1 (bluetoothd -E) with Supported-
      MonitorTypes ["or_patterns"]. RegisterMonitor(o) does what bluetoothd 5.66 does: it reads the
      caller's application with GetManagedObjects BEFORE it replies (so a caller that blocks its
      connection while it waits never answers), checks each AdvertisementMonitor1's Type,
      Patterns and RSSI thresholds (their ranges as 5.66 checks them), replies, then calls Activate on each monitor. `refuse` makes it fail with
      org.bluez.Error.Failed after reading the application. UnregisterMonitor(o) calls Release on
      each monitor before it replies.
  DeviceOnStartDiscovery(adapter s, address s, name s)
                                          the next StartDiscovery adds a heart-rate monitor
                                          (InterfacesAdded) before it replies, as btvirt answers
                                          a scan's start with one report at once
  SlowStopDiscovery(adapter s, seconds d) the next StopDiscovery answers only after SECONDS (the
                                          mock is busy meanwhile, as a bluetoothd too loaded to
                                          answer), then stops discovery as usual
  ReleaseMonitors(adapter s)              bluetoothd drops every monitor on its own (the kernel
                                          refused them): Release on each, none registered after
  MonitorEvents(adapter s) -> (u, as)     the applications registered now, and what happened in
                                          order: "GetManagedObjects", "registered PATTERNS" (as
                                          "ff:6b00 16:1d18"), "Activate", "DeviceFound ADDRESS",
                                          "Release", "unregistered", "refused"
'''

import socket
import time

import dbus

from dbusmock import OBJECT_MANAGER_IFACE, mockobject
from gi.repository import GLib
from dbusmock.templates import bluez5
# Re-exported so that dbusmock attaches them to "/" (org.bluez.Mock) as the bluez5 template does.
from dbusmock.templates.bluez5 import AddAdapter, AddDevice, RemoveAdapter  # noqa: F401

BUS_NAME = bluez5.BUS_NAME
MAIN_OBJ = bluez5.MAIN_OBJ
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

CONTROL_IFACE = 'org.healthgate.Test'
DEVICE_IFACE = 'org.bluez.Device1'
SERVICE_IFACE = 'org.bluez.GattService1'
CHAR_IFACE = 'org.bluez.GattCharacteristic1'
DESC_IFACE = 'org.bluez.GattDescriptor1'
BATTERY_IFACE = 'org.bluez.Battery1'


def uuid16(short):
    return f'0000{short:04x}-0000-1000-8000-00805f9b34fb'


# service UUID -> [(characteristic UUID, flags, initial value)]
HEART_RATE_GATT = [
    (0x180d, [(0x2a37, ['notify'], b''), (0x2a38, ['read'], b'\x01'), (0x2a39, ['write'], b'')]),
    (0x180a, [(0x2a29, ['read'], b'Healthgate Labs'), (0x2a24, ['read'], b'HG-1')]),
    (0x180f, [(0x2a19, ['read', 'notify'], b'\x57')]),
]

# A Generic Health Sensor: Health Sensor Features (an oximeter: SpO2 150456 and pulse rate
# 149530) with one Observation Schedule and one Valid Range and Accuracy descriptor per type.
# characteristic: (UUID, flags, value[, [(descriptor UUID, flags, value)]])
GHS_GATT = [
    (0x1840, [
        (0x2bf3, ['read'], b'\x01\x02\xb8\x4b\x02\x00\x1a\x48\x02\x00', [
            (0x2910, ['read', 'write'], b'\xb8\x4b\x02\x00' + b'\x01\x00\x00\x00' * 2),
            (0x2911, ['read'], b'\xb8\x4b\x02\x00\x20\x02' + b'\x00\x00\x00\x00' + b'\x64\x00\x00\x00' + b'\x01\x00\x00\x00'),
            (0x2910, ['read', 'write'], b'\x1a\x48\x02\x00' + b'\x05\x00\x00\x00' * 2),
            (0x2911, ['read'], b'\x1a\x48\x02\x00\xa0\x0a' + b'\x1e\x00\x00\x00' + b'\xfa\x00\x00\x00' + b'\x02\x00\x00\x00'),
        ]),
        (0x2b8b, ['notify'], b''),
    ]),
    (0x180a, [(0x2a29, ['read'], b'Healthgate Labs')]),
]

GLUCOSE_GATT = [
    (0x1808, [(0x2a18, ['notify'], b''), (0x2a52, ['write', 'indicate'], b'')]),
    (0x180a, [(0x2a29, ['read'], b'Healthgate Labs'), (0x2a24, ['read'], b'GM-1'), (0x2a25, ['read'], b'GM-000042')]),
]


def emit_added(path, interfaces):
    mockobject.objects['/'].EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}',
                                       [dbus.ObjectPath(path), interfaces])


def emit_removed(path, names):
    mockobject.objects['/'].EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesRemoved', 'oas',
                                       [dbus.ObjectPath(path), dbus.Array(names, signature='s')])


def set_props(obj, interface, changes):
    for key, value in changes.items():
        obj.props[interface][key] = value
    obj.EmitSignal(dbus.PROPERTIES_IFACE, 'PropertiesChanged', 'sa{sv}as',
                   [interface, dbus.Dictionary(changes, signature='sv'), dbus.Array([], signature='s')])


# AgentManager1 and pairing: the agent registered by each caller, by its unique bus name.
AGENTS = {}


@dbus.service.method('org.bluez.AgentManager1', in_signature='os', out_signature='', sender_keyword='sender')
def agent_register(_manager, agent_path, capability, sender=None):
    if sender in AGENTS:
        raise dbus.exceptions.DBusException('Already Exists', name='org.bluez.Error.AlreadyExists')
    if capability not in ['DisplayOnly', 'DisplayYesNo', 'KeyboardOnly', 'NoInputNoOutput', 'KeyboardDisplay']:
        raise dbus.exceptions.DBusException('Invalid arguments', name='org.bluez.Error.InvalidArguments')
    AGENTS[sender] = str(agent_path)


@dbus.service.method(DEVICE_IFACE, in_signature='', out_signature='', sender_keyword='sender')
def device_pair(device, sender=None):
    props = device.props[DEVICE_IFACE]
    if props['Paired']:
        raise dbus.exceptions.DBusException('Already Exists', name='org.bluez.Error.AlreadyExists')
    if not props['Connected']:
        device_connect(device)
    required = device.hg['passkey']
    if required is not None and required >= 0:
        agent = AGENTS.get(sender)
        if agent is None:
            raise dbus.exceptions.DBusException('Authentication Failed', name='org.bluez.Error.AuthenticationFailed')
        device.hg['passkey_requests'] += 1
        proxy = dbus.SystemBus().get_object(sender, agent, introspect=False)
        try:
            entered = int(proxy.RequestPasskey(dbus.ObjectPath(device.path), dbus_interface='org.bluez.Agent1', timeout=30))
        except dbus.exceptions.DBusException as error:
            raise dbus.exceptions.DBusException('Authentication Rejected: ' + str(error.get_dbus_name()),
                                                name='org.bluez.Error.AuthenticationRejected')
        if entered != required:
            raise dbus.exceptions.DBusException('Authentication Failed', name='org.bluez.Error.AuthenticationFailed')
    set_props(device, DEVICE_IFACE, {'Paired': dbus.Boolean(True, variant_level=1),
                                     'Bonded': dbus.Boolean(True, variant_level=1)})


def require_bond(char):
    device = char.hg['device']
    if device.hg['passkey'] is not None and not device.props[DEVICE_IFACE]['Paired']:
        raise dbus.exceptions.DBusException('Insufficient Encryption', name='org.bluez.Error.NotPermitted')


# Device1 methods

def device_connect(device):
    state = device.hg
    state['attempts'] += 1
    if state['fail']:
        name = state['fail'].pop(0)
        raise dbus.exceptions.DBusException('injected failure', name=name)
    if device.props[DEVICE_IFACE]['Connected']:
        raise dbus.exceptions.DBusException('Already Connected', name='org.bluez.Error.AlreadyConnected')
    if state['silent']:
        # Seen once in the device lab: a reconnect whose Connected and ServicesResolved no
        # signal announced. The properties change; only a fresh read shows it.
        device.props[DEVICE_IFACE]['Connected'] = dbus.Boolean(True, variant_level=1)
        export_gatt(device)
        device.props[DEVICE_IFACE]['ServicesResolved'] = dbus.Boolean(True, variant_level=1)
        return
    set_props(device, DEVICE_IFACE, {'Connected': dbus.Boolean(True, variant_level=1)})
    if state['resolve_early']:
        set_props(device, DEVICE_IFACE, {'ServicesResolved': dbus.Boolean(True, variant_level=1)})
    export_gatt(device)
    if not state['resolve_early']:
        set_props(device, DEVICE_IFACE, {'ServicesResolved': dbus.Boolean(True, variant_level=1)})
    notify_on_connect(device)


def notify_on_connect(device):
    # As bluetoothd does for a client whose StartNotify outlived a link loss of a device whose
    # attributes it caches: it enables notifications again itself, and the device's first values
    # arrive before that client subscribes on the new connection.
    for uuid, value in device.hg['on_connect']:
        char = next(mockobject.objects[path] for path in device.hg['gatt']
                    if getattr(mockobject.objects.get(path), 'hg', {}).get('uuid') == uuid)
        set_props(char, CHAR_IFACE, {'Notifying': dbus.Boolean(True, variant_level=1)})
        set_props(char, CHAR_IFACE, {'Value': dbus.Array(value, signature='y', variant_level=1)})
    device.hg['on_connect'] = []


def device_disconnect(device):
    if not device.props[DEVICE_IFACE]['Connected']:
        raise dbus.exceptions.DBusException('Not Connected', name='org.bluez.Error.NotConnected')
    drop_link(device)


def export_gatt(device):
    main = mockobject.objects['/']
    for index, (service, characteristics) in enumerate(device.hg['layout']):
        service_path = f'{device.path}/service{index:04x}'
        service_props = {
            'UUID': dbus.String(uuid16(service), variant_level=1),
            'Primary': dbus.Boolean(True, variant_level=1),
            'Device': dbus.ObjectPath(device.path, variant_level=1),
        }
        main.AddObject(service_path, SERVICE_IFACE, service_props, [])
        emit_added(service_path, {SERVICE_IFACE: service_props})
        for offset, (uuid, flags, value, *descriptors) in enumerate(characteristics):
            char_path = f'{service_path}/char{offset:04x}'
            char_props = {
                'UUID': dbus.String(uuid16(uuid), variant_level=1),
                'Service': dbus.ObjectPath(service_path, variant_level=1),
                'Flags': dbus.Array(flags, signature='s', variant_level=1),
                'Value': dbus.Array(value, signature='y', variant_level=1),
                'Notifying': dbus.Boolean(False, variant_level=1),
            }
            if 'notify' in flags:
                char_props['NotifyAcquired'] = dbus.Boolean(False, variant_level=1)
            main.AddObject(char_path, CHAR_IFACE, char_props, [
                ('ReadValue', 'a{sv}', 'ay', char_read),
                ('WriteValue', 'aya{sv}', '', char_write),
                ('StartNotify', '', '', char_start_notify),
                ('StopNotify', '', '', char_stop_notify),
                ('AcquireNotify', 'a{sv}', 'hq', char_acquire_notify),
            ])
            char = mockobject.objects[char_path]
            char.hg = {'device': device, 'socket': None, 'written': [], 'uuid': uuid}
            device.hg['gatt'].append(char_path)
            emit_added(char_path, {CHAR_IFACE: char_props})
            # As bluetoothd names them: by handle, the characteristic's declaration and value
            # first (so its descriptors' objects sort in handle order).
            for number, (desc_uuid, desc_flags, desc_value) in enumerate(descriptors[0] if descriptors else []):
                desc_path = f'{char_path}/desc{offset * 16 + number + 2:04x}'
                desc_props = {
                    'UUID': dbus.String(uuid16(desc_uuid), variant_level=1),
                    'Characteristic': dbus.ObjectPath(char_path, variant_level=1),
                    'Flags': dbus.Array(desc_flags, signature='s', variant_level=1),
                    'Value': dbus.Array(desc_value, signature='y', variant_level=1),
                }
                main.AddObject(desc_path, DESC_IFACE, desc_props, [
                    ('ReadValue', 'a{sv}', 'ay', desc_read),
                    ('WriteValue', 'aya{sv}', '', desc_write),
                ])
                desc = mockobject.objects[desc_path]
                desc.hg = {'device': device, 'written': [], 'uuid': desc_uuid}
                device.hg['gatt'].append(desc_path)
                emit_added(desc_path, {DESC_IFACE: desc_props})
        device.hg['gatt'].append(service_path)
    if device.hg['layout'] is HEART_RATE_GATT:
        battery = {'Percentage': dbus.Byte(87, variant_level=1)}
        device.AddProperties(BATTERY_IFACE, battery)
        emit_added(device.path, {BATTERY_IFACE: battery})


def drop_link(device):
    main = mockobject.objects['/']
    for path in device.hg['gatt']:
        obj = mockobject.objects.get(path)
        if obj is None:
            continue
        sock = getattr(obj, 'hg', {}).get('socket')
        if sock is not None:
            sock.close()
            obj.hg['socket'] = None
        main.RemoveObject(path)
        emit_removed(path, [DESC_IFACE if '/desc' in path else CHAR_IFACE if '/char' in path else SERVICE_IFACE])
    device.hg['gatt'] = []
    if BATTERY_IFACE in device.props:
        del device.props[BATTERY_IFACE]
        emit_removed(device.path, [BATTERY_IFACE])
    set_props(device, DEVICE_IFACE, {
        'ServicesResolved': dbus.Boolean(False, variant_level=1),
        'Connected': dbus.Boolean(False, variant_level=1),
    })


# GattCharacteristic1 methods

def char_read(char, _options):
    require_bond(char)
    return dbus.Array(char.props[CHAR_IFACE]['Value'], signature='y')


def char_write(char, value, _options):
    require_bond(char)
    char.hg['written'].append(bytes(value))
    if char.hg['uuid'] == 0x2a52:
        racp_request(char, bytes(value))


# GattDescriptor1 methods

def desc_read(desc, _options):
    require_bond(desc)
    return dbus.Array(desc.props[DESC_IFACE]['Value'], signature='y')


def desc_write(desc, value, _options):
    require_bond(desc)
    data = bytes(value)
    desc.hg['written'].append(data)
    if 'write' not in desc.props[DESC_IFACE]['Flags']:
        raise dbus.exceptions.DBusException('Write not permitted', name='org.bluez.Error.NotPermitted')
    # An Observation Schedule with a measurement period of 0 (a FLOAT whose mantissa is 0).
    if desc.hg['uuid'] == 0x2910 and len(data) == 12 and data[4:7] == b'\x00\x00\x00':
        raise dbus.exceptions.DBusException('Operation failed with ATT error: 0xff', name='org.bluez.Error.Failed')
    desc.props[DESC_IFACE]['Value'] = dbus.Array(data, signature='y', variant_level=1)


def racp_request(racp, request):
    device = racp.hg['device']
    if request == b'\x01\x01':
        first = 0
    elif len(request) == 5 and request[:3] == b'\x01\x03\x01':
        first = int.from_bytes(request[3:5], 'little')
    else:
        control_notify(None, racp.path, b'\x06\x00' + request[:1] + b'\x02')  # op code not supported
        return
    measurement = next(path for path in device.hg['gatt']
                       if getattr(mockobject.objects.get(path), 'hg', {}).get('uuid') == 0x2a18)
    for record in device.hg['records']:
        if int.from_bytes(record[1:3], 'little') >= first:
            control_notify(None, measurement, record)
    control_notify(None, racp.path, b'\x06\x00\x01\x01')


def char_start_notify(char):
    require_bond(char)
    failures = char.hg['device'].hg.get('fail_start_notify')
    if failures:
        name = failures.pop(0)
        raise dbus.exceptions.DBusException(name.rsplit('.', 1)[-1], name=name)
    set_props(char, CHAR_IFACE, {'Notifying': dbus.Boolean(True, variant_level=1)})


def char_stop_notify(char):
    set_props(char, CHAR_IFACE, {'Notifying': dbus.Boolean(False, variant_level=1)})


def char_acquire_notify(char, _options):
    require_bond(char)
    device = char.hg['device']
    if 'notify' not in char.props[CHAR_IFACE]['Flags']:
        # As bluetoothd: AcquireNotify serves notifications only, not indications.
        raise dbus.exceptions.DBusException('Operation is not supported', name='org.bluez.Error.NotSupported')
    if not device.hg['acquire']:
        raise dbus.exceptions.DBusException('AcquireNotify disabled', name='org.bluez.Error.NotSupported')
    if char.hg['socket'] is not None:
        raise dbus.exceptions.DBusException('already acquired', name='org.bluez.Error.NotPermitted')
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    char.hg['socket'] = ours
    # UnixFd duplicates the descriptor; our copy of the peer's end is closed right away.
    fd = dbus.types.UnixFd(theirs.fileno())
    theirs.close()
    set_props(char, CHAR_IFACE, {'NotifyAcquired': dbus.Boolean(True, variant_level=1)})
    return (fd, dbus.UInt16(23))


# AdvertisementMonitorManager1 (bluetoothd -E): per adapter path, the registered applications
# {(sender, application path): [(monitor path, [(start, AD type, content)])]}, the events in order,
# whether registrations are refused, and the devices each monitor was told about.
MONITOR_MANAGER_IFACE = 'org.bluez.AdvertisementMonitorManager1'
MONITOR_IFACE = 'org.bluez.AdvertisementMonitor1'
MONITORS = {}


def monitor_state(adapter_path):
    return MONITORS.setdefault(adapter_path, {'apps': {}, 'events': [], 'refuse': False, 'found': set(), 'rssi': {}})


RSSI_PROPERTIES = ('RSSIHighThreshold', 'RSSIHighTimeout', 'RSSILowThreshold', 'RSSILowTimeout', 'RSSISamplingPeriod')


def rssi_valid(props):
    """bluetoothd 5.66's parse_rssi_and_timeout: thresholds -127..20 dBm (high not below low),
    timeouts 1..300 s, sampling period 0..255; an unset one takes BlueZ's default."""
    if not any(key in props for key in RSSI_PROPERTIES):
        return True
    low = int(props.get('RSSILowThreshold', -127))
    high = int(props.get('RSSIHighThreshold', low))
    timeouts = [int(props.get('RSSIHighTimeout', 10)), int(props.get('RSSILowTimeout', 5))]
    period = int(props.get('RSSISamplingPeriod', 0))
    return -127 <= low <= high <= 20 and all(1 <= t <= 300 for t in timeouts) and 0 <= period <= 255


def call_monitor(sender, monitor_path, member, *arguments):
    """A call on a monitor without waiting for its answer, as bluetoothd's GDBus proxy calls."""
    proxy = dbus.SystemBus().get_object(sender, monitor_path, introspect=False)
    proxy.get_dbus_method(member, MONITOR_IFACE)(*arguments, reply_handler=lambda *_: None,
                                                 error_handler=lambda *_: None)


@dbus.service.method(MONITOR_MANAGER_IFACE, in_signature='o', out_signature='', sender_keyword='sender')
def monitor_register(adapter, app_path, sender=None):
    state = monitor_state(adapter.path)
    key = (sender, str(app_path))
    if key in state['apps']:
        raise dbus.exceptions.DBusException('Already Exists', name='org.bluez.Error.AlreadyExists')
    # Before the reply, as bluetoothd does: the caller must serve this while it waits.
    app = dbus.SystemBus().get_object(sender, app_path, introspect=False)
    objects = app.GetManagedObjects(dbus_interface=OBJECT_MANAGER_IFACE, timeout=10)
    state['events'].append('GetManagedObjects')
    if state['refuse']:
        state['events'].append('refused')
        raise dbus.exceptions.DBusException('Failed', name='org.bluez.Error.Failed')
    monitors = []
    for path, interfaces in objects.items():
        props = interfaces.get(MONITOR_IFACE)
        if props is None:
            continue
        patterns = [(int(start), int(kind), bytes(content)) for start, kind, content in props.get('Patterns', [])]
        if str(props.get('Type', '')) != 'or_patterns' or not patterns or not rssi_valid(props):
            raise dbus.exceptions.DBusException('Invalid arguments', name='org.bluez.Error.InvalidArguments')
        monitors.append((str(path), patterns))
        state['rssi'][str(path)] = any(key in props for key in RSSI_PROPERTIES)
    if not monitors:
        raise dbus.exceptions.DBusException('Invalid arguments', name='org.bluez.Error.InvalidArguments')
    state['apps'][key] = monitors
    state['events'].append('registered ' + ' '.join(
        f'{kind:02x}:{content.hex()}' for _, patterns in monitors for _, kind, content in patterns))

    def activate():
        for monitor_path, _ in monitors:
            state['events'].append('Activate')
            call_monitor(sender, monitor_path, 'Activate')
        return False
    # After the reply, once "the kernel" took the patterns.
    GLib.idle_add(activate)


@dbus.service.method(MONITOR_MANAGER_IFACE, in_signature='o', out_signature='', sender_keyword='sender')
def monitor_unregister(adapter, app_path, sender=None):
    state = monitor_state(adapter.path)
    monitors = state['apps'].pop((sender, str(app_path)), None)
    if monitors is None:
        raise dbus.exceptions.DBusException('Does Not Exist', name='org.bluez.Error.DoesNotExist')
    # Release before the reply, waiting for its answer, as bluetoothd 5.66 does.
    for monitor_path, _ in monitors:
        state['events'].append('Release')
        proxy = dbus.SystemBus().get_object(sender, monitor_path, introspect=False)
        proxy.Release(dbus_interface=MONITOR_IFACE, timeout=10)
    state['events'].append('unregistered')


def monitor_selects(content, kind, data):
    """Whether the pattern (start, AD type, content) selects AD structures of `kind` with `data`."""
    start, pattern_kind, pattern = content
    return pattern_kind == kind and data[start:start + len(pattern)] == pattern


def heard(adapter_path, path, address, manufacturer, service):
    """Whether an advertisement is reported: always without the monitor manager; with it, while
    discovering, or when a registered monitor selects it. As bluetoothd 5.66 does, a monitor with
    RSSI thresholds is told DeviceFound once per device, one without them on every advertisement
    it selects (adv_monitor_filter_rssi)."""
    adapter = mockobject.objects[adapter_path]
    if MONITOR_MANAGER_IFACE not in adapter.props:
        return True
    structures = [(0xFF, int(k).to_bytes(2, 'little') + bytes(v)) for k, v in manufacturer.items()]
    structures += [(0x16, int(k[4:8], 16).to_bytes(2, 'little') + bytes(v)) for k, v in service.items()]
    selected = False
    state = monitor_state(adapter_path)
    for (sender, _), monitors in state['apps'].items():
        for monitor_path, patterns in monitors:
            if any(monitor_selects(p, kind, data) for p in patterns for kind, data in structures):
                selected = True
                if (monitor_path, address) not in state['found'] or not state['rssi'].get(monitor_path):
                    state['found'].add((monitor_path, address))
                    state['events'].append('DeviceFound ' + address)
                    call_monitor(sender, monitor_path, 'DeviceFound', dbus.ObjectPath(path))
    return selected or bool(adapter.props['org.bluez.Adapter1']['Discovering'])


def control_offer_advertisement_monitor(_main, adapter_name, refuse):
    adapter = mockobject.objects['/org/bluez/' + str(adapter_name)]
    adapter.AddProperties(MONITOR_MANAGER_IFACE, {
        'SupportedMonitorTypes': dbus.Array(['or_patterns'], signature='s', variant_level=1),
        'SupportedFeatures': dbus.Array([], signature='s', variant_level=1),
    })
    adapter.methods.setdefault(MONITOR_MANAGER_IFACE, {})
    adapter.methods[MONITOR_MANAGER_IFACE]['RegisterMonitor'] = ('o', '', None, monitor_register)
    adapter.methods[MONITOR_MANAGER_IFACE]['UnregisterMonitor'] = ('o', '', None, monitor_unregister)
    monitor_state(adapter.path)['refuse'] = bool(refuse)


def control_release_monitors(_main, adapter_name):
    state = monitor_state('/org/bluez/' + str(adapter_name))
    for (sender, _), monitors in state['apps'].items():
        for monitor_path, _ in monitors:
            state['events'].append('Release')
            call_monitor(sender, monitor_path, 'Release')
    state['apps'].clear()


def control_monitor_events(_main, adapter_name):
    state = monitor_state('/org/bluez/' + str(adapter_name))
    return (dbus.UInt32(len(state['apps'])), dbus.Array(state['events'], signature='s'))


# Control interface on "/"

def device_props(adapter_path, address, address_type, name, rssi, uuids, **more):
    # A Device1's properties in the order bluetoothd lists them, not paired; `more` follows.
    props = {
        'Address': dbus.String(address, variant_level=1),
        'AddressType': dbus.String(address_type, variant_level=1),
        'Name': dbus.String(name, variant_level=1),
        'Alias': dbus.String(name, variant_level=1),
        'Adapter': dbus.ObjectPath(adapter_path, variant_level=1),
        'RSSI': dbus.Int16(rssi, variant_level=1),
        'UUIDs': dbus.Array(uuids, signature='s', variant_level=1),
        'Paired': dbus.Boolean(False, variant_level=1),
    }
    props.update(more)
    return props


def control_add_monitor(main, adapter, address, name, acquire):
    adapter_path = '/org/bluez/' + adapter
    path = adapter_path + '/dev_' + address.replace(':', '_').upper()
    props = device_props(
        adapter_path, address, 'random', name, -58, [uuid16(0x180d), uuid16(0x180a), uuid16(0x180f)],
        Trusted=dbus.Boolean(False, variant_level=1),
        Connected=dbus.Boolean(False, variant_level=1),
        ServicesResolved=dbus.Boolean(False, variant_level=1))
    main.AddObject(path, DEVICE_IFACE, props, [
        ('Connect', '', '', device_connect),
        ('Disconnect', '', '', device_disconnect),
    ])
    device = mockobject.objects[path]
    # Entered directly: device_pair needs the caller's name, which AddMethod's wrapper drops.
    device.methods[DEVICE_IFACE]['Pair'] = ('', '', None, device_pair)
    device.hg = {'fail': [], 'fail_start_notify': [], 'acquire': bool(acquire), 'resolve_early': False, 'silent': False, 'gatt': [], 'attempts': 0,
                 'on_connect': [],
                 'layout': HEART_RATE_GATT, 'records': [], 'passkey': None, 'passkey_requests': 0}
    emit_added(path, {DEVICE_IFACE: props})
    return dbus.ObjectPath(path)


def add_device_of_service(main, adapter, address, name, layout, service):
    # A monitor whose GATT is `layout`, advertising `service` and Device Information.
    path = control_add_monitor(main, adapter, address, name, True)
    device = mockobject.objects[path]
    device.hg['layout'] = layout
    set_props(device, DEVICE_IFACE, {
        'UUIDs': dbus.Array([uuid16(service), uuid16(0x180a)], signature='s', variant_level=1)})
    return path


def control_add_glucose_meter(main, adapter, address, name):
    return add_device_of_service(main, adapter, address, name, GLUCOSE_GATT, 0x1808)


def control_add_health_sensor(main, adapter, address, name):
    return add_device_of_service(main, adapter, address, name, GHS_GATT, 0x1840)


def control_add_glucose_record(_main, device_path, value):
    mockobject.objects[device_path].hg['records'].append(bytes(value))


def control_require_pairing(_main, device_path, passkey):
    mockobject.objects[device_path].hg['passkey'] = int(passkey)


def control_pairing_state(_main, device_path):
    device = mockobject.objects[device_path]
    props = device.props[DEVICE_IFACE]
    return (dbus.Boolean(props['Paired']), dbus.Boolean(props['Trusted']), dbus.UInt32(device.hg['passkey_requests']))


def control_fail_next_connect(_main, device_path, error_name):
    mockobject.objects[device_path].hg['fail'].append(str(error_name))


def control_fail_next_start_notify(_main, device_path, error_name):
    mockobject.objects[device_path].hg['fail_start_notify'].append(str(error_name))


def control_resolve_before_objects(_main, device_path, early):
    mockobject.objects[device_path].hg['resolve_early'] = bool(early)


def control_set_adapter_modalias(_main, adapter_name, modalias):
    # What bluetoothd's Device ID makes of its version (usb:v1D6Bp0246d0542 is 5.66).
    adapter = mockobject.objects['/org/bluez/' + str(adapter_name)]
    adapter.props['org.bluez.Adapter1']['Modalias'] = dbus.String(str(modalias), variant_level=1)


def control_connect_silently(_main, device_path):
    mockobject.objects[device_path].hg['silent'] = True


def control_notify_on_connect(_main, device_path, uuid, value):
    mockobject.objects[device_path].hg['on_connect'].append((int(uuid), bytes(value)))


def control_notify(_main, char_path, value):
    char = mockobject.objects[char_path]
    data = bytes(value)
    if char.hg['socket'] is not None:
        char.hg['socket'].send(data)
    elif char.props[CHAR_IFACE]['Notifying']:
        set_props(char, CHAR_IFACE, {'Value': dbus.Array(data, signature='y', variant_level=1)})
    else:
        raise dbus.exceptions.DBusException('nobody subscribed to ' + char_path,
                                            name='org.healthgate.Test.NotSubscribed')


def control_notify_state(_main, char_path):
    char = mockobject.objects.get(char_path)
    if char is None:
        return (dbus.Boolean(False), dbus.Boolean(False))
    return (dbus.Boolean(char.hg['socket'] is not None), dbus.Boolean(char.props[CHAR_IFACE]['Notifying']))


def control_written(_main, char_path):
    return dbus.Array([dbus.ByteArray(v) for v in mockobject.objects[char_path].hg['written']], signature='ay')


def control_connect_attempts(_main, device_path):
    return dbus.UInt32(mockobject.objects[device_path].hg['attempts'])


def control_drop_link(_main, device_path):
    drop_link(mockobject.objects[device_path])


def control_remove_monitor(main, device_path):
    device = mockobject.objects[device_path]
    if device.props[DEVICE_IFACE]['Connected']:
        drop_link(device)
    main.RemoveObject(device_path)
    emit_removed(device_path, [DEVICE_IFACE])


def control_advertise(main, adapter, address, name, manufacturer, service):
    adapter_path = '/org/bluez/' + adapter
    path = adapter_path + '/dev_' + address.replace(':', '_').upper()
    manufacturer_data = dbus.Dictionary(
        {dbus.UInt16(k): dbus.Array(bytes(v), signature='y', variant_level=1) for k, v in manufacturer.items()},
        signature='qv', variant_level=1)
    service_data = dbus.Dictionary(
        {dbus.String(k): dbus.Array(bytes(v), signature='y', variant_level=1) for k, v in service.items()},
        signature='sv', variant_level=1)
    if not heard(adapter_path, path, address, manufacturer, service):
        return dbus.ObjectPath(path)
    if path not in mockobject.objects:
        props = device_props(
            adapter_path, address, 'public', name, -61, [],
            Connected=dbus.Boolean(False, variant_level=1),
            ManufacturerData=manufacturer_data,
            ServiceData=service_data)
        main.AddObject(path, DEVICE_IFACE, props, [])
        # As bluetoothd announces a device it hears for the first time.
        emit_added(path, {DEVICE_IFACE: props})
    else:
        set_props(mockobject.objects[path], DEVICE_IFACE, {'ManufacturerData': manufacturer_data, 'ServiceData': service_data})
    return dbus.ObjectPath(path)


def control_device_on_start_discovery(main, adapter_name, address, name):
    # As btvirt answers a scan's start with one advertising report at once: the next
    # StartDiscovery adds the heart-rate monitor (InterfacesAdded) before it replies, once.
    adapter = mockobject.objects['/org/bluez/' + adapter_name]
    original = adapter.methods[bluez5.ADAPTER_IFACE]['StartDiscovery']

    def start_discovery(obj):
        obj.methods[bluez5.ADAPTER_IFACE]['StartDiscovery'] = original
        control_add_monitor(main, adapter_name, address, name, True)
        bluez5.StartDiscovery(obj)

    adapter.methods[bluez5.ADAPTER_IFACE]['StartDiscovery'] = (original[0], original[1], start_discovery, original[3])


def control_slow_stop_discovery(main, adapter_name, seconds):
    # A bluetoothd too loaded to answer StopDiscovery for a while (the lab under TCG: 5.9 s at
    # the median beside a class), once.
    adapter = mockobject.objects['/org/bluez/' + adapter_name]
    original = adapter.methods[bluez5.ADAPTER_IFACE]['StopDiscovery']

    def stop_discovery(obj):
        obj.methods[bluez5.ADAPTER_IFACE]['StopDiscovery'] = original
        time.sleep(float(seconds))
        bluez5.StopDiscovery(obj)

    adapter.methods[bluez5.ADAPTER_IFACE]['StopDiscovery'] = (original[0], original[1], stop_discovery, original[3])


_CONTROL = [
    ('AddHeartRateMonitor', 'sssb', 'o', control_add_monitor),
    ('FailNextConnect', 'os', '', control_fail_next_connect),
    ('FailNextStartNotify', 'os', '', control_fail_next_start_notify),
    ('ResolveBeforeObjects', 'ob', '', control_resolve_before_objects),
    ('Notify', 'oay', '', control_notify),
    ('NotifyState', 'o', 'bb', control_notify_state),
    ('Written', 'o', 'aay', control_written),
    ('ConnectAttempts', 'o', 'u', control_connect_attempts),
    ('DropLink', 'o', '', control_drop_link),
    ('ConnectSilently', 'o', '', control_connect_silently),
    ('NotifyOnConnect', 'oqay', '', control_notify_on_connect),
    ('SetAdapterModalias', 'ss', '', control_set_adapter_modalias),
    ('RemoveMonitor', 'o', '', control_remove_monitor),
    ('AddGlucoseMeter', 'sss', 'o', control_add_glucose_meter),
    ('AddGlucoseRecord', 'oay', '', control_add_glucose_record),
    ('AddHealthSensor', 'sss', 'o', control_add_health_sensor),
    ('RequirePairing', 'oi', '', control_require_pairing),
    ('PairingState', 'o', 'bbu', control_pairing_state),
    ('Advertise', 'sssa{qay}a{say}', 'o', control_advertise),
    ('OfferAdvertisementMonitor', 'sb', '', control_offer_advertisement_monitor),
    ('MonitorEvents', 's', 'uas', control_monitor_events),
    ('ReleaseMonitors', 's', '', control_release_monitors),
    ('DeviceOnStartDiscovery', 'sss', '', control_device_on_start_discovery),
    ('SlowStopDiscovery', 'sd', '', control_slow_stop_discovery),
]

def load(mock, parameters):
    # The bluez5 template's own objects (/org/bluez with the agent manager), then our controls.
    bluez5.load(mock, parameters)
    manager = mockobject.objects['/org/bluez']
    manager.methods['org.bluez.AgentManager1']['RegisterAgent'] = ('os', '', None, agent_register)
    mock.AddMethods(CONTROL_IFACE, _CONTROL)
