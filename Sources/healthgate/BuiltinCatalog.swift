import FitnessEquipment
import HTTPRepository
import HealthDevices
import MQTTBroker
import HeartRateMonitor
import SQLiteStore
import SampleBus
import SerialPedometer

/// The compiled-in plugins. Adding a plugin is one folder under plugins/ and one line here.
enum BuiltinCatalog {
    static func make() -> PluginCatalog {
        PluginCatalog([
            .source(HeartRateSource.self),
            .source(FitnessEquipmentSource.self),
            .source(HealthDeviceSource.self),
            .source(SerialPedometerSource.self),
            .sink(SQLiteSink.self),
            .follower(HTTPRepositorySink.self),
            .follower(MQTTBrokerSink.self),
        ])
    }
}
