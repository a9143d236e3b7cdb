public import GatewayRuntime

/// The whole configuration file's schema as its owners declare it (the catalog's plugins, the
/// sections other modules own), kept as the means to build it rather than built: loading a file
/// builds only the parts it uses (``parts(usedBy:)``), `config schema` and `config reference`
/// the whole (``whole``).
///
/// A value type with no state of its own: each property or call builds its schema again.
public struct ConfigurationFileSchema: Sendable {
    /// The compiled-in plugins, one alternative of `sources[]` or `sinks[]` each.
    public let catalog: PluginCatalog
    /// The sections other modules own, each built when read.
    public let sections: GatewayConfiguration.OwnedSections

    /// The schema of a file with the plugins of `catalog` and the sections of `sections`.
    public init(catalog: PluginCatalog, sections: GatewayConfiguration.OwnedSections) {
        self.catalog = catalog
        self.sections = sections
    }

    /// Every part: ``GatewayConfiguration/schema(catalog:sections:)``.
    public var whole: ConfigurationSchema {
        GatewayConfiguration.schema(catalog: catalog, sections: sections)
    }

    /// The parts `file` uses: ``GatewayConfiguration/schema(catalog:sections:usedBy:)``.
    public func parts(usedBy file: JSONValue) -> ConfigurationSchema {
        GatewayConfiguration.schema(catalog: catalog, sections: sections, usedBy: file)
    }
}
