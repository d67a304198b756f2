import FluxProtocol
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

    /// For an action a schedule fired (``Effect/schedule(_:after:id:)``): when it was due, and the seq
    /// of the request that made the schedule. nil for every other action.
    public var schedule: Schedule?

    /// What a scheduled action carries besides its own stamp.
    public struct Schedule: Sendable, Equatable, Hashable {
        /// When the schedule was due. The stamp's ``Stamp/time`` is when it fired: later by the
        /// dispatcher's turn, or by as long as the cluster was down when its time came.
        public var due: Date
        /// The seq of the action that asked for the schedule.
        public var requestSeq: UInt64

        package init(due: Date, requestSeq: UInt64) {
            self.due = due
            self.requestSeq = requestSeq
        }
    }

    public init(seq: UInt64, time: Date) {
        self.seq = seq
        self.time = time
    }

    /// A stamp of an action a schedule fired (a `TestStore`'s, by its clock).
    package init(seq: UInt64, time: Date, schedule: Schedule?) {
        self.init(seq: seq, time: time)
        self.schedule = schedule
    }

    /// A stamp from a header's wall-clock nanoseconds.
    public init(seq: UInt64, wallNanoseconds: Int64) {
        self.init(seq: seq, time: Date(timeIntervalSince1970: Double(wallNanoseconds) / 1e9))
    }

    /// The stamp of a sequenced ACTION: its seq and time, and for one a schedule fired, its due time
    /// (in `ref`) and its request (in `clientSeq`).
    package init(_ header: Header) {
        self.init(seq: header.seq, wallNanoseconds: header.timestamp)
        if header.flags.contains(.scheduled) {
            let due = Int64(bitPattern: header.ref)
            schedule = Schedule(due: Date(timeIntervalSince1970: Double(due) / 1e9), requestSeq: header.clientSeq)
        }
    }

    /// How long after its due time a scheduled action fired (zero for one on time or early, and for
    /// an action no schedule fired).
    public var lateness: Duration {
        guard let schedule, time > schedule.due else { return .zero }
        return .milliseconds(Int64((time.timeIntervalSince(schedule.due) * 1000).rounded()))
    }

    /// Whether a schedule fired this action more than a second after its time: the cluster was down,
    /// or its dispatcher was failing over, when it came.
    public var isLate: Bool { lateness > .seconds(1) }

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
