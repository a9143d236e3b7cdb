#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem

/// The kernel's Bluetooth management socket: an HCI socket bound to the control channel, on
/// which the kernel sends the management API's events (BlueZ `doc/mgmt-api.txt`).
///
/// It is made with socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI) and bound with a
/// `struct sockaddr_hci` built here from the kernel UAPI (include/net/bluetooth/hci_sock.h), so
/// libbluetooth (GPL) is never linked. Any process may bind it; only a socket bound by a process
/// holding `CAP_NET_ADMIN` is *trusted* (net/bluetooth/hci_sock.c, hci_sock_bind), and only
/// trusted sockets receive events such as Device Found (net/bluetooth/mgmt.c, mgmt_event: the
/// `HCI_SOCK_TRUSTED` flag). Check ``ProcessCapabilities`` before relying on it.
public enum BluetoothManagementSocket {
    // include/linux/socket.h and include/net/bluetooth/bluetooth.h, hci.h, hci_sock.h (UAPI).
    /// AF_BLUETOOTH.
    static let addressFamily: Int32 = 31
    /// BTPROTO_HCI.
    static let protocolHCI: Int32 = 1
    /// HCI_DEV_NONE: the control channel is bound to no single controller.
    static let deviceNone: UInt16 = 0xFFFF
    /// HCI_CHANNEL_CONTROL: the management API.
    static let channelControl: UInt16 = 3

    /// The bytes of a `struct sockaddr_hci` (hci_sock.h): `sa_family_t hci_family`,
    /// `unsigned short hci_dev`, `unsigned short hci_channel`, each in host order, 6 bytes in all
    /// (hci_sock_bind rejects a shorter address: `addr_len < sizeof(struct sockaddr_hci)`).
    static func socketAddress(device: UInt16 = deviceNone, channel: UInt16 = channelControl) -> [UInt8] {
        [UInt16(addressFamily), device, channel].flatMap { value in withUnsafeBytes(of: value) { Array($0) } }
    }

    /// The receive buffer asked for: the kernel drops an event for a socket whose buffer is full,
    /// and answers a command with ENOMEM then (sock_queue_rcv_skb), so the buffer holds a few
    /// seconds of Device Found events (each skb costs about 1 KiB of the buffer) with the
    /// controller's duplicate filter off.
    static let receiveBufferBytes: Int32 = 4 << 20

    /// Opens a non-blocking, close-on-exec management socket bound to the control channel, with
    /// a receive buffer of ``receiveBufferBytes`` (SO_RCVBUFFORCE, which CAP_NET_ADMIN allows
    /// beyond net.core.rmem_max; else SO_RCVBUF, which the kernel caps at rmem_max).
    /// Does not block (bind on an HCI socket does no I/O).
    /// - Throws: ``SystemError``: `EAFNOSUPPORT` without kernel Bluetooth (or where a sandbox's
    ///   RestrictAddressFamilies leaves AF_BLUETOOTH out), `EPERM`/`EACCES` where a sandbox
    ///   forbids it, `EINVAL` on a kernel without the control channel.
    public static func open() throws(SystemError) -> FileDescriptor {
        let raw: Int32
        do {
            raw = try Errno.retryingInterrupts {
                socket(addressFamily, Int32(SOCK_RAW.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                    | Int32(SOCK_CLOEXEC.rawValue), protocolHCI)
            }
        } catch {
            throw SystemError("socket AF_BLUETOOTH BTPROTO_HCI", errno: error)
        }
        let descriptor = FileDescriptor(owning: raw)
        let address = socketAddress()
        let result = address.withUnsafeBytes { buffer in
            Glibc.bind(raw, buffer.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(buffer.count))
        }
        if result != 0 {
            let error = Errno.lastError
            descriptor.close()
            throw SystemError("bind", target: "HCI_CHANNEL_CONTROL", errno: error)
        }
        var size = receiveBufferBytes
        let length = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(raw, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0,
            setsockopt(raw, SOL_SOCKET, SO_RCVBUF, &size, length) != 0
        {
            let error = Errno.lastError
            descriptor.close()
            throw SystemError("setsockopt SO_RCVBUF", target: "HCI_CHANNEL_CONTROL", errno: error)
        }
        return descriptor
    }
}
