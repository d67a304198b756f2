/// How long the journal's syncs took, as the dispatcher saw them: what a durable ACK waits on,
/// measured where it is waited for (under load a sync takes longer than the same sync on a quiet
/// disk). The count of syncs since the dispatcher started, and the newest ``kept`` durations, from
/// which the dispatcher's status gives `journal_sync_p50_us`, `…_p99_us` and `…_max_us`. The host
/// times the syncs (the cores read no clock).
package struct SyncTimes: Sendable, Equatable {
    /// How many of the newest syncs the percentiles are read from.
    package static let kept = 1024

    /// Syncs that returned since the dispatcher started (failed ones included).
    package private(set) var count: UInt64 = 0
    /// The newest durations in microseconds: a ring of at most ``kept``, `next` its oldest slot once full.
    private var recent: [UInt32] = []
    private var next = 0

    package init() {}

    /// One sync of `nanoseconds`.
    package mutating func record(nanoseconds: UInt64) {
        count += 1
        keep(UInt32(clamping: nanoseconds / 1000))
    }

    /// Adds `other`'s syncs (another thread's), as if they came after these.
    package mutating func add(_ other: SyncTimes) {
        count += other.count
        for micros in other.recent[other.next...] + other.recent[..<other.next] { keep(micros) }
    }

    private mutating func keep(_ micros: UInt32) {
        if recent.count < Self.kept {
            recent.append(micros)
        } else {
            recent[next] = micros
            next = (next + 1) % Self.kept
        }
    }

    /// How many durations the percentiles are read from: the newest ``kept`` at most.
    package var sampled: Int { recent.count }

    /// The median, the 99th percentile and the longest of the newest ``kept`` syncs, in microseconds
    /// (nil before the first). The percentile q is the duration at index ⌊n·q⌋ of the n sorted, the rule
    /// of `zflux-floor fsync`'s probe, so that the two read alike side by side.
    package var percentiles: (p50: UInt64, p99: UInt64, max: UInt64)? {
        guard !recent.isEmpty else { return nil }
        let sorted = recent.sorted()
        func at(_ share: Double) -> UInt64 { UInt64(sorted[min(sorted.count - 1, Int(Double(sorted.count) * share))]) }
        return (at(0.5), at(0.99), UInt64(sorted[sorted.count - 1]))
    }
}
