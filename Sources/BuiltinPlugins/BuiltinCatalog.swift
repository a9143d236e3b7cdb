public import SampleBus
import ContinuousGlucose
import FitnessEquipment
import HTTPRepository
import HealthDevices
import MQTTBroker
import HeartRateMonitor
import SQLiteStore
import SerialPedometer

/// The compiled-in plugins: the one list the executable and the fuzz targets build from. Adding
/// a plugin is one folder under plugins/ and one line here.
public enum BuiltinCatalog {
    /// A catalog of every compiled-in plugin, in the order `healthgate plugins` lists them.
    public static func make() -> PluginCatalog {
        PluginCatalog([
            .source(HeartRateSource.self),
            .source(FitnessEquipmentSource.self),
            .source(HealthDeviceSource.self),
            .source(CGMSource.self),
            .source(SerialPedometerSource.self),
            .sink(SQLiteSink.self),
            .follower(HTTPRepositorySink.self),
            .follower(MQTTBrokerSink.self),
        ])
    }
}
