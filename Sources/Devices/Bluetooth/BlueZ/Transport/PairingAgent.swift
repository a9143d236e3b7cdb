import BLETransport
import DBus
import GatewayRuntime
import Synchronization

/// Asks a person for the passkey a device shows, for the device at the given upper-case
/// address; nil when nobody can answer (`healthgate pair` asks on its terminal).
public typealias PasskeyPrompt = @Sendable (_ address: String) async -> UInt32?

/// The pairings a transport has under way, by upper-case address: what its agent may answer.
final class PairingsUnderWay: Sendable {
    struct Request: Sendable {
        var pairing: DevicePairing
        var prompt: PasskeyPrompt?
    }

    private let requests = Mutex<[String: Request]>([:])

    func begin(_ address: String, _ request: Request) {
        requests.withLock { $0[address.uppercased()] = request }
    }

    func end(_ address: String) {
        requests.withLock { _ = $0.removeValue(forKey: address.uppercased()) }
    }

    func request(for address: String) -> Request? {
        requests.withLock { $0[address.uppercased()] }
    }
}

/// Our org.bluez.Agent1 (BlueZ doc/org.bluez.Agent.rst): bluetoothd calls it for the pairings
/// the transport starts with Device1.Pair.
///
/// It registers with the capability KeyboardOnly: a device without input or output pairs with
/// "just works"; a device that shows a passkey (or asks both sides to type one) makes bluetoothd
/// ask us for it (RequestPasskey), answered from the device's `passkey`, else from the prompt,
/// else refused with a log line that says what to configure. It answers only for devices the
/// transport is pairing at that moment and refuses every other request, so a stranger cannot
/// pair with the gateway through it.
struct PairingAgent: Sendable {
    static let path = "/org/healthgate/pairing_agent"
    static let capability = "KeyboardOnly"

    let pairings: PairingsUnderWay
    let logger: Logger

    /// Answers `calls` until the stream ends (the object is unexported or the bus closed).
    func serve(_ calls: AsyncThrowingStream<DBusIncomingCall, any Error>) async {
        do {
            for try await call in calls {
                await answer(call)
            }
        } catch {
            logger.debug("pairing agent stopped: \(error)")
        }
    }

    func answer(_ call: DBusIncomingCall) async {
        guard call.interface == BlueZInterface.agent else {
            call.fail(name: DBusError.unknownMethod, message: "\(call.interface).\(call.member) is not implemented")
            return
        }
        switch call.member {
        case "Release":
            logger.debug("bluetoothd released the pairing agent")
            call.reply()
        case "Cancel":
            logger.warning("bluetoothd cancelled the pairing request (the device gave up or timed out)")
            call.reply()
        case "RequestPasskey":
            guard let (address, request) = underWay(call) else { return }
            if let passkey = request.pairing.passkey {
                logger.info("entering the configured passkey", device: address)
                call.reply([.uint32(passkey)])
            } else if let prompt = request.prompt, let passkey = await prompt(address) {
                call.reply([.uint32(passkey)])
            } else {
                logger.error(
                    "the device asks for a passkey and none is configured: add \"passkey\": N to its device entry, "
                        + "or pair it once with 'healthgate pair \(address) --passkey N'", device: address)
                call.fail(name: DBusError.bluezRejected, message: "no passkey for \(address)")
            }
        case "RequestPinCode":
            // Legacy BR/EDR pairing: the PIN is the passkey's digits.
            guard let (address, request) = underWay(call) else { return }
            if let passkey = request.pairing.passkey {
                call.reply([.string(DevicePairing.format(passkey))])
            } else {
                logger.error("the device asks for a PIN code and no passkey is configured", device: address)
                call.fail(name: DBusError.bluezRejected, message: "no PIN code for \(address)")
            }
        case "DisplayPasskey", "DisplayPinCode":
            guard let (address, _) = underWay(call) else { return }
            let shown = call.arguments.dropFirst().first.flatMap { value -> String? in
                if case .uint32(let passkey) = value { return DevicePairing.format(passkey) }
                return value.string
            } ?? "?"
            logger.notice("type \(shown) on the device to pair it", device: address)
            call.reply()
        case "RequestConfirmation":
            // Numeric comparison needs a display on both sides; with KeyboardOnly bluetoothd
            // asks this only for "just works" confirmations, which the pairing we started implies.
            guard let (address, _) = underWay(call) else { return }
            logger.info("confirming the pairing", device: address)
            call.reply()
        case "RequestAuthorization", "AuthorizeService":
            guard underWay(call) != nil else { return }
            call.reply()
        default:
            call.fail(name: DBusError.unknownMethod, message: "Agent1.\(call.member) is not implemented")
        }
    }

    /// The device and pairing of a call about a device we are pairing; otherwise refuses it.
    private func underWay(_ call: DBusIncomingCall) -> (String, PairingsUnderWay.Request)? {
        guard let path = call.arguments.first?.string, let address = Self.address(ofDevice: path) else {
            call.fail(name: DBusError.bluezRejected, message: "\(call.member) without a device")
            return nil
        }
        guard let request = pairings.request(for: address) else {
            logger.warning("refused \(call.member) for \(address): the gateway is not pairing with it", device: address)
            call.fail(name: DBusError.bluezRejected, message: "healthgate is not pairing with \(address)")
            return nil
        }
        return (address, request)
    }

    /// `AA:BB:CC:DD:EE:FF` from a device path `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    static func address(ofDevice path: String) -> String? {
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        let address = String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 }).uppercased()
        return BluetoothAddress.isValid(address) ? address : nil
    }
}
