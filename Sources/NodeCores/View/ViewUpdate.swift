/// What a view shows: the store's state at a version, and whether it can be trusted right now.
public struct ViewUpdate: Sendable, Equatable {
    public enum Connection: Sendable, Equatable, CustomStringConvertible {
        /// Following the store's updates.
        case live
        /// Waiting for a snapshot (joining, or resynchronising after a gap); the reason says which.
        case catchingUp(String)
        /// Nothing heard from the store past the timeout; what is shown may be old.
        case stale(String)

        public var description: String {
            switch self {
            case .live: "live"
            case .catchingUp(let why): "catching up (\(why))"
            case .stale(let why): "stale (\(why))"
            }
        }
    }

    /// An action the store refused (its state did not change).
    public struct Rejection: Sendable, Equatable {
        public var seq: UInt64
        public var actionType: String
        public var clientID: UInt64
        public var reason: String
    }

    public var store: String
    /// The version of the newest update shown: the seq of the last action that changed the state.
    public var version: UInt64
    /// How far the store has applied the global sequence with this state still current (its heartbeats
    /// say so; a store publishes only when its state changes): at least `version`.
    public var currentThrough: UInt64 = 0
    /// The whole state in wire form.
    public var state: [UInt8]
    public var connection: Connection
    /// Set on the update that reports a rejection; the state is the unchanged one.
    public var rejection: Rejection? = nil
    /// When the store published the newest update applied (its wall clock, nanoseconds since the epoch).
    public var publishedAtNanoseconds: Int64 = 0
    /// Wire bytes of the newest update applied (a whole state or only its changes).
    public var updateBytes: Int = 0
    /// The history (``HistoryID``) the shown state comes from; 0 when the store does not say.
    public var history: UInt64 = 0
    /// The shown state as the app's own `State` value, when the view holds a replica of the app: what a
    /// typed screen renders, with nothing encoded or decoded on the way. nil without the app, or while
    /// the replica could not load the last whole state.
    package var typedState: TypedState? = nil
}

/// A state as the app's own value, beside an update's bytes (``ViewUpdate/typedState``).
package struct TypedState: Sendable, Equatable {
    package let value: any Sendable
    /// The version and history it is the state at: two are the same state when these are the same.
    package let version: UInt64
    package let history: UInt64

    package static func == (a: TypedState, b: TypedState) -> Bool { a.version == b.version && a.history == b.history }
}
