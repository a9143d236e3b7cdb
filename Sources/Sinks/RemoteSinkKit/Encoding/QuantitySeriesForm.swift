public import GatewayRuntime
public import HealthModel

/// How a remote sink carries a quantity series (config key `quantitySeries`, declared once for
/// every remote sink: ``RemoteSinkConfiguration/quantitySeriesKey``).
///
/// - ``series``: the series as one object, sent again in each version as it grows (the rule
///   growing heartbeat series follow: one uuid, a rising `syncVersion`, `healthgate.provisional`
///   while it is open; a receiver keeps the highest version).
/// - ``expand``: each quantity as a sample of its own (``QuantitySeriesSample/quantitySample(at:)``:
///   an id derived from the series' uuid and the quantity's index, `healthgate.series` naming
///   the series), the form receivers of the releases before series know. A quantity goes once:
///   a series is sent only when it is closed, so a receiver gets each quantity up to the
///   series' span (a minute for the built-in stream types) plus its gap after it was measured.
///
/// Either way the payload is a pure function of a batch's changes and the receiver's payload
/// identity: a series' change is one version of it, and its expansion depends on nothing else.
public enum QuantitySeriesForm: String, Sendable, Hashable, Encodable, ConfigurationChoice {
    case series
    case expand

    /// Whether a receiver in this form carries `change`: in ``expand``, a series still open is
    /// passed over (its closed version follows, at a later anchor, with every quantity).
    public func admits(_ change: FollowedChange) -> Bool {
        guard self == .expand, case .stored(.quantitySeries(let series), _) = change else { return true }
        return !series.isProvisional
    }

    /// What `record` travels as: itself, or in ``expand`` a series' quantities as samples, in order.
    public func records(_ record: HealthRecord) -> [HealthRecord] {
        guard self == .expand, case .quantitySeries(let series) = record else { return [record] }
        return series.quantitySamples.map(HealthRecord.quantity)
    }

    /// The part of a payload identity (``RemoteReceiver/payloadIdentity``) that names the form,
    /// for a receiver whose bodies carry series: empty in ``expand``, whose bodies have the shape
    /// of the releases before series (so a batch begun before the upgrade keeps its key, its
    /// body unchanged), ` quantitySeries=series` in ``series``, whose bodies are new.
    public var identity: String {
        switch self {
        case .series: " quantitySeries=series"
        case .expand: ""
        }
    }
}

extension RemoteSinkConfiguration {
    /// The `quantitySeries` key, declared here once for every remote sink.
    public static func quantitySeriesKey(_ keyPath: any WritableKeyPath<Self, QuantitySeriesForm> & Sendable) -> ConfigurationKey<Self> {
        ConfigurationKey(
            "quantitySeries", keyPath, QuantitySeriesForm.configurationShape,
            "How a quantity series travels: one object in every version as it grows (series), or, once it is closed, "
                + "each quantity as a sample of its own (expand: the form of the releases before series)")
    }
}
