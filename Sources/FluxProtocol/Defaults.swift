/// The cluster's defaults that more than one place starts from: the cores' rules, the nodes'
/// configurations and the topology read them here. Those of a config key are the key's own default,
/// written in ``Settings``; the others are written here. (`@usableFromInline`: public functions'
/// default arguments name them.)
@usableFromInline package enum Defaults {
    /// How often a node says it is alive when it has nothing else to say: the dispatcher's heartbeats
    /// on the actions stream, a store's on its state stream, a view's to its store (`[cluster]
    /// heartbeat_ms`). Peers' silence timeouts count in it.
    @usableFromInline package static let heartbeatMilliseconds = Settings.Cluster.heartbeatMs.fallback
    /// Actions a store applies between two snapshots (`[journal] snapshot_every`): a restarting store
    /// replays at most this many, plus what was dispatched while it was down.
    @usableFromInline package static let snapshotEveryActions = Settings.Journal.snapshotEvery.fallback
    /// Silence from a peer past this makes a store reconnect to its dispatcher and a view ask its store
    /// again (`[cluster] timeout_ms`; a cluster config's default is also at least ten heartbeats).
    @usableFromInline package static let silenceTimeoutMilliseconds = Settings.Cluster.timeoutMs.fallback
    /// Where tcp nodes listen and the first of their ports (`[cluster] host`, `base_port`).
    @usableFromInline package static let host = Settings.Cluster.host.fallback
    @usableFromInline package static let basePort = Settings.Cluster.basePort.fallback
    /// The journal's segment size, in bytes (`[journal] segment_mb`), and its fsync policy (`fsync`).
    @usableFromInline package static let segmentBytes = Settings.Journal.segmentMb.fallback << 20
    @usableFromInline package static let fsync = Settings.Journal.fsync.fallback
    /// The lease a pair's leader holds in etcd (`[ha] lease_ms`), and how it replicates (`replication`).
    @usableFromInline package static let leaseMilliseconds = Settings.HighAvailability.leaseMs.fallback
    @usableFromInline package static let replication = Settings.HighAvailability.replication.fallback
    /// Dispatches remembered per client for deduplicating its retries: a client must not resend anything
    /// older (the bench's load generator keeps to it).
    @usableFromInline package static let dedupWindow = 4096
    /// The largest action payload the intake takes, in bytes (`[limits] max_payload_bytes`).
    @usableFromInline package static let maxPayloadBytes = Settings.Limits.maxPayloadBytes.fallback
    /// Deaths in a row on one action before a store asks for it to be quarantined. The store's
    /// interpreter, the simulator's store and the supervisor (which does not count these deaths past
    /// the first against its restart intensity) all read it here.
    @usableFromInline package static let crashesBeforeQuarantine = 2
}
