public import BLETransport
import ANTHeartRate
import BLEProfileKit
import BroadcastDevices
public import SampleBus
import ContinuousGlucose
import ExecAdapter
import FitnessEquipment
import GenericHealthSensor
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
    ///
    /// - Parameter bluetooth: the gateway's Bluetooth adapters, which every Bluetooth LE source
    ///   shares (the executable makes them once per run); nil for a catalog that validates, lists
    ///   or describes plugins, whose Bluetooth sources get adapters of their own.
    public static func make(bluetooth: BluetoothAdapters? = nil) -> PluginCatalog {
        PluginCatalog([
            .bluetoothSource(HeartRateSource.self, bluetooth: bluetooth),
            .bluetoothSource(FitnessEquipmentSource.self, bluetooth: bluetooth),
            .bluetoothSource(HealthDeviceSource.self, bluetooth: bluetooth),
            .bluetoothSource(CGMSource.self, bluetooth: bluetooth),
            .bluetoothSource(GHSSource.self, bluetooth: bluetooth),
            .source(PolarBroadcastSource.self) { settings, environment in
                PolarBroadcastSource(
                    settings: settings, environment: environment, bluetooth: bluetooth ?? BluetoothAdapters(clock: environment.clock))
            },
            .source(MiScaleSource.self) { settings, environment in
                MiScaleSource(settings: settings, environment: environment, bluetooth: bluetooth ?? BluetoothAdapters(clock: environment.clock))
            },
            .source(SerialPedometerSource.self),
            .source(ANTHeartRateSource.self),
            .source(ExecSource.self),
            .sink(SQLiteSink.self),
            .follower(HTTPRepositorySink.self),
            .follower(MQTTBrokerSink.self),
        ], exportFormats: [FHIRPersonExport.self])
    }
}
