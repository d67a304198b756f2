import FluxCore

/// What ``StoreCore`` decides by: the store's name and app, its timers and its snapshot cadence, with
/// no endpoint, socket or file in it. The store's shell builds it from its configuration; a simulator
/// or a test builds it directly.
public struct StoreRules: Sendable {
    public var name: String
    public var app: any AnyApp
    /// How often the store heartbeats its version.
    public var heartbeatMilliseconds = Defaults.heartbeatMilliseconds
    /// How long a replay may go unanswered before it is asked again.
    public var replayTimeoutMilliseconds = 1000
    /// Silence from the dispatcher past this makes the store reconnect, and marks it disconnected in its status.
    public var dispatcherTimeoutMilliseconds = Defaults.silenceTimeoutMilliseconds
    /// Whether this store runs its reducer's effects. Exactly one store per app should: a replica
    /// of an app that runs effects too would send every follow-up action twice.
    public var runsEffects = true
    /// An effect's action that gets no ACK within this is sent again (same client seq: deduplicated).
    public var effectRetryMilliseconds = 1000
    /// Whether the store keeps snapshots (false: a restart replays everything).
    public var writesSnapshots = false
    /// A snapshot is written after this many actions, and when the store stops.
    public var snapshotEveryActions = Defaults.snapshotEveryActions
    /// The cluster's effect token, a secret of the nodes' (``DispatcherRules/effectToken``): sent with
    /// every action of this store's effects, so that the intake takes an action only an effect may send.
    public var effectToken: UInt64? = nil

    public init(name: String, app: any AnyApp) {
        self.name = name
        self.app = app
    }
}
