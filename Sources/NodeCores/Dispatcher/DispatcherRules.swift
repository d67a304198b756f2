import FluxCore

/// What ``DispatcherCore`` decides by: the apps it admits and its limits, with no endpoint, socket or
/// file in it. The dispatcher's shell builds it from its configuration; a simulator or a test builds it
/// directly.
public struct DispatcherRules: Sendable {
    /// The apps whose actions are accepted; anything else is NACKed.
    public var apps: [any AnyApp]
    /// How often a heartbeat announces the durable head.
    public var heartbeatMilliseconds = Defaults.heartbeatMilliseconds
    /// Actions per REPLAY-BATCH, and batches per replay answer before REPLAY-END. The replay ROUTER
    /// queues a few batches a peer (``ReplayScheduler/queueMessages``) and the dispatcher refills them
    /// once a turn, so a batch must hold enough small actions to keep a catching-up store busy between
    /// refills: at 512 a store applying generated decoders waited for its next batches a third of the
    /// time (`zflux journal bench --catch-up`); a batch still closes at ``ReplayPlan/maxBatchBytes``.
    public var replayBatchSize = 4096
    public var replayBatchesPerRequest = 64
    /// Dispatches remembered per client for deduplicating retries.
    public var dedupWindow = Defaults.dedupWindow
    /// Actions per second one client may dispatch (a burst of as many is allowed); more are NACKed
    /// "rate limited". nil: no limit.
    public var clientRate: Int? = nil
    /// Largest payload accepted, in bytes, unless `maxPayloadBytesByType["app.type"]` says otherwise.
    public var maxPayloadBytes = Defaults.maxPayloadBytes
    public var maxPayloadBytesByType: [String: Int] = [:]
    /// The most payload bytes the pending schedules may hold together (``ScheduleBook``).
    package var maxPendingScheduleBytes = ScheduleBook.defaultMaxPendingBytes
    /// The journal's size on disk past which its oldest segments go by themselves, as far as what
    /// still needs them allows (``JournalRetention``); nil: the journal keeps everything
    /// (`[journal] retain_mb`).
    package var retainBytes: Int? = nil

    /// The keys no topology field carries.
    package mutating func read(_ values: SettingValues) {
        retainBytes = values[Settings.Journal.retainMb].map { $0 << 20 }
    }
    /// Where the actions are kept, as the status shows it ("memory", or a directory and its fsync policy).
    public var journalDescription = "memory"
    /// With a standby: whether an ACK waits for the standby to hold the action durable too (`sync`), or
    /// only for this journal (`async`). nil: no standby.
    public var replication: Replication? = nil
    /// Records sent to the standby and not yet acknowledged by it, at most: what a slow standby can
    /// hold back in the leader's queue stays bounded.
    public var replicationWindow: UInt64 = 65_536
    /// The cluster's effect token, a secret the nodes share and clients do not have: an action an app
    /// marks as its effects' (`.effect(…)` in its catalog) is taken only with it in the DISPATCH's
    /// `ref`, as stores' effects send it. Nil: not checked (a cluster over tcp without `[security]`).
    public var effectToken: UInt64? = nil
    /// A pair's member token, a secret only its members hold (over ipc, and tcp on loopback, a file in
    /// the private run directory): a REPLICA-HELLO is answered only when it carries its proof
    /// (``StandbyLink/helloProof(token:seq:seen:history:)``). Nil: not checked (under CURVE the
    /// replication endpoint admits the other member's key alone).
    public var memberToken: UInt64? = nil

    /// How a leader waits for its standby (`[ha] replication` in the cluster config).
    public enum Replication: String, Sendable, CaseIterable {
        /// An ACK waits until the leader's journal and the standby's hold the action durable: losing
        /// either loses nothing acknowledged.
        case sync
        /// An ACK waits for the leader's journal alone; the standby follows as fast as it can: losing the
        /// leader's disk loses what the standby had not written yet.
        case async
    }

    public init(apps: [any AnyApp]) {
        self.apps = apps
    }
}
