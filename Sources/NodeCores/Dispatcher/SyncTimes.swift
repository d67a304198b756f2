import Foundation

/// How long the journal's syncs took, as the dispatcher saw them: what a durable ACK waits on,
/// measured where it is waited for (under load a sync takes longer than the same sync on a quiet
/// disk). The count of syncs since the dispatcher started, and the newest ``kept`` durations, from
/// which the dispatcher's status gives `journal_sync_p50_us`, `…_p99_us` and `…_max_us`.
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
        let micros = UInt32(clamping: nanoseconds / 1000)
        if recent.count < Self.kept {
            recent.append(micros)
        } else {
            recent[next] = micros
            next = (next + 1) % Self.kept
        }
    }

    /// Runs `sync`, and records how long it took whether it returned or threw.
    package mutating func timing<T>(_ sync: () throws -> T) rethrows -> T {
        let start = Self.now()
        defer { record(nanoseconds: Self.now() &- start) }
        return try sync()
    }

    /// The median, the 99th percentile and the longest of the newest ``kept`` syncs, in microseconds
    /// (nil before the first). A percentile is the duration at or below which that share of them fell.
    package var percentiles: (p50: UInt64, p99: UInt64, max: UInt64)? {
        guard !recent.isEmpty else { return nil }
        let sorted = recent.sorted()
        func at(_ share: Double) -> UInt64 { UInt64(sorted[min(sorted.count - 1, Int((Double(sorted.count) * share).rounded(.up)) - 1)]) }
        return (at(0.5), at(0.99), UInt64(sorted[sorted.count - 1]))
    }

    /// The monotonic clock, in nanoseconds.
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
