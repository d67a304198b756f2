/// The cluster's defaults that more than one place starts from, each written once: the cores' rules,
/// the nodes' configurations, the topology and the cluster config read them here.
/// (`@usableFromInline`: public functions' default arguments name them.)
@usableFromInline package enum Defaults {
    /// How often a node says it is alive when it has nothing else to say: the dispatcher's heartbeats
    /// on the actions stream, a store's on its state stream, a view's to its store (`[cluster]
    /// heartbeat_ms`). Peers' silence timeouts count in it.
    @usableFromInline package static let heartbeatMilliseconds = 200
    /// Actions a store applies between two snapshots (`[journal] snapshot_every`): a restarting store
    /// replays at most this many, plus what was dispatched while it was down.
    @usableFromInline package static let snapshotEveryActions = 10_000
    /// The largest action payload the intake takes, in bytes (`[limits] max_payload_bytes`).
    @usableFromInline package static let maxPayloadBytes = 1 << 20
}
