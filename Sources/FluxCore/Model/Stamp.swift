import Foundation

/// What the dispatcher stamped on an action when it sequenced it: its place in the one global order and
/// the time it was sequenced.
///
/// Reducers that need the time read it here, never from a clock: the stamp is journaled with the
/// action, so replaying the journal reduces to the same state, in any store, at any later time.
public struct Stamp: Sendable, Equatable, Hashable {
    /// The action's global sequence number.
    public var seq: UInt64
    /// When the dispatcher sequenced the action.
    public var time: Date

    public init(seq: UInt64, time: Date) {
        self.seq = seq
        self.time = time
    }

    /// A stamp from a header's wall-clock nanoseconds.
    public init(seq: UInt64, wallNanoseconds: Int64) {
        self.init(seq: seq, time: Date(timeIntervalSince1970: Double(wallNanoseconds) / 1e9))
    }

    /// The stamp a reducer gets when it is called outside a store (seq 0, the Unix epoch).
    public static let unstamped = Stamp(seq: 0, time: Date(timeIntervalSince1970: 0))
}

/// Time for effects, as an Environment member: `live` reads the system clock and really waits; `mock`
/// answers with a fixed time and never waits, so tests and `--mock` clusters run without delays.
///
/// Reducers never use this (they read the action's ``Stamp``); effects do, for delays and for
/// timestamps of what they fetch.
public struct EffectClock: Sendable {
    public var now: @Sendable () -> Date
    /// Waits for `duration`; throws `CancellationError` when the effect is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void

    public init(now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    public static let live = EffectClock(now: { Date() }, sleep: { try await Task.sleep(for: $0) })

    /// A clock stopped at `now` whose sleeps return at once (after checking for cancellation).
    public static func mock(now: Date = Date(timeIntervalSince1970: 1_767_225_600)) -> EffectClock {
        EffectClock(now: { now }, sleep: { _ in try Task.checkCancellation() })
    }
}
