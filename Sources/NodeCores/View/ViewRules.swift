import FluxCore

/// What ``ViewCore`` decides by: the store it follows, how it holds the state, and its timers, with no
/// endpoint or socket in it. The view's shell builds it from its configuration; a simulator or a test
/// builds it directly.
public struct ViewRules: Sendable {
    public var store: String
    /// The store's app, to apply changes-only updates. Without it, such an update makes the view ask
    /// for a whole snapshot instead, unless the view ``tracksVersionsOnly``.
    public var app: (any AnyApp)?
    /// Follow only this part of the state (nil: all of it).
    public var select: StatePath? = nil
    /// False: the state is not encoded again after changes: updates carry its bytes only when a whole
    /// state arrived, and otherwise versions and, with the ``app``, the replica's typed value
    /// (``ViewUpdate/typedState``), which a typed screen reads.
    public var materializesState = true
    /// What the replica encodes the state in (it reads both codecs).
    public var codec: WireCodec.Format = .binary
    /// The longest the view waits between turns.
    public var heartbeatMilliseconds = Defaults.heartbeatMilliseconds
    /// Silence from the store past this makes the view stale and re-snapshot.
    public var silenceTimeoutMilliseconds = Defaults.silenceTimeoutMilliseconds

    public init(store: String, app: (any AnyApp)? = nil) {
        self.store = store
        self.app = app
    }

    /// What the view subscribes to and asks snapshots of: the store, or a selection of it.
    public var topic: String { select?.topic(store: store) ?? store }

    /// The view follows versions only: it neither materializes the state nor has an app to apply
    /// changes with, so a changes-only update that follows the shown version advances the version
    /// without being applied.
    public var tracksVersionsOnly: Bool { !materializesState && app == nil }
}
