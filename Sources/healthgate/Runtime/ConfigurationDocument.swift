import BLETransport
import BuiltinPlugins
import GatewayRuntime
import SampleBus
import WebBoard
import Workouts

/// The whole configuration file's schema, assembled from each owner's declaration: the
/// gateway's keys (SampleBus), every compiled-in plugin's `config` (the catalog), `store` (the
/// executable), `web` (WebBoard), `bluetooth` (BLETransport), `profile` and `participants` (Workouts). Loading a file checks
/// its numbers against it; `healthgate config schema` prints it as JSON Schema.
enum ConfigurationDocument {
    static var schema: ConfigurationSchema {
        GatewayConfiguration.schema(
            catalog: BuiltinCatalog.make(),
            sections: GatewayConfiguration.OwnedSections(
                store: StoreConfiguration.configurationSchema, web: WebBoardConfiguration.configurationSchema,
                profile: UserProfile.configurationSchema, participants: ParticipantRoster.configurationSchema,
                bluetooth: BluetoothSettings.configurationSchema))
    }

    /// The JSON Schema (draft 2020-12) document `config schema` prints.
    static var jsonSchema: JSONValue {
        schema.jsonSchemaDocument(title: "healthgate configuration")
    }
}
