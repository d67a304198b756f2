import Histogram
import Synchronization

/// One second of a trial as the load's receiving thread saw it: the ACKs that came in that second
/// (counted from the trial's start by when they arrived) and their latency from the due instant, with
/// the totals sent and acknowledged when the second ended. What `bench --attach` writes to its live
/// feed; the figures are ACK latency, since what views saw is only matched up after the run.
package struct LiveSecond: Sendable, Equatable {
    package var second: Int
    package var sent: Int
    package var acked: Int
    /// ACKs that arrived in this second.
    package var acks: UInt64
    package var p50Us: Double
    package var p99Us: Double
    package var maxUs: Double
}

/// The receiving thread's histogram of the second under way. Recording is a histogram increment; a
/// second is closed (its percentiles read and the histogram cleared) once, when the thread first
/// notices the clock past it, and handed to ``LoadProgress`` through its lock, once a second.
struct LiveSecondRecorder {
    /// Two significant digits: a live figure within 1% is plenty, and the histogram stays small.
    private var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000_000, numberOfSignificantValueDigits: .two)
    private var second = 0

    mutating func record(latencyNanoseconds: UInt64) {
        _ = histogram.record(min(max(latencyNanoseconds, 1), 100_000_000_000))
    }

    /// Closes every second that ended before `elapsed` (ns since the trial's start), quiet ones too.
    mutating func advance(toElapsed elapsed: UInt64, sent: Int, acked: Int, progress: LoadProgress) {
        let now = Int(elapsed / 1_000_000_000)
        while second < now { close(sent: sent, acked: acked, progress: progress) }
    }

    /// Closes the second under way (the trial's last, cut short).
    mutating func finish(sent: Int, acked: Int, progress: LoadProgress) {
        close(sent: sent, acked: acked, progress: progress)
    }

    private mutating func close(sent: Int, acked: Int, progress: LoadProgress) {
        let count = histogram.totalCount
        func us(_ percentile: Double) -> Double { count == 0 ? 0 : Double(histogram.valueAtPercentile(percentile)) / 1000 }
        progress.publish(
            LiveSecond(
                second: second, sent: sent, acked: acked, acks: count, p50Us: us(50), p99Us: us(99),
                maxUs: count == 0 ? 0 : Double(histogram.max) / 1000))
        if count > 0 { histogram.reset() }
        second += 1
    }
}

extension LoadProgress {
    /// Seconds kept for a reader that has not taken them (a run nobody follows keeps only these).
    static let keptSeconds = 120

    func publish(_ second: LiveSecond) {
        finished.withLock { seconds in
            seconds.append(second)
            if seconds.count > LoadProgress.keptSeconds { seconds.removeFirst(seconds.count - LoadProgress.keptSeconds) }
        }
    }

    /// The seconds closed since the last call, oldest first.
    package func takeFinishedSeconds() -> [LiveSecond] {
        finished.withLock { seconds in
            defer { seconds.removeAll(keepingCapacity: true) }
            return seconds
        }
    }
}
