import Foundation
import GatewayTesting

/// A recording HTTP repository and a `mosquitto` broker with a subscriber recording
/// `healthgate/#`, all on 127.0.0.1: the receivers an end-to-end test checks what the gateway
/// sent against.
struct RecordingReceivers {
    let server: RecordingServer
    let broker: MosquittoBroker
    let recorder: MQTTRecorder

    /// Starts the three in `directory`; the recorder is subscribed when this returns.
    static func started(in directory: URL) async throws -> RecordingReceivers {
        let server = try RecordingServer.started(in: directory)
        var broker: MosquittoBroker?
        var recorder: MQTTRecorder?
        do {
            let started = try MosquittoBroker(directory: directory)
            broker = started
            try await started.start()
            let subscriber = try MQTTRecorder(broker: started, filter: "healthgate/#")
            recorder = subscriber
            try await subscriber.waitUntilSubscribed(broker: started, probe: "healthgate/probe")
            return RecordingReceivers(server: server, broker: started, recorder: subscriber)
        } catch {
            recorder?.stop()
            broker?.stop()
            server.stop()
            throw error
        }
    }

    /// Stops the recorder, the broker and the server.
    func stop() {
        recorder.stop()
        broker.stop()
        server.stop()
    }
}
