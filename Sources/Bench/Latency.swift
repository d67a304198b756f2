import Foundation
import Histogram

/// Percentiles of one stage's latency, in microseconds (what `--json` prints).
public struct LatencyStats: Codable, Sendable, Equatable {
    public var count: UInt64
    public var p50Us: Double
    public var p90Us: Double
    public var p99Us: Double
    public var p999Us: Double
    public var p9999Us: Double
    public var maxUs: Double
    public var meanUs: Double

    public static let empty = LatencyStats(count: 0, p50Us: 0, p90Us: 0, p99Us: 0, p999Us: 0, p9999Us: 0, maxUs: 0, meanUs: 0)
}

/// A latency histogram in nanoseconds, from 1 µs to 100 s at three significant digits.
public struct LatencyHistogram: Sendable {
    public private(set) var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000_000, numberOfSignificantValueDigits: .three)

    public init() {}

    public mutating func record(nanoseconds: UInt64) {
        _ = histogram.record(min(max(nanoseconds, 1), 100_000_000_000))
    }

    /// Adds another histogram's counts (per-subscriber histograms merge into one per stage).
    public mutating func merge(_ other: LatencyHistogram) { histogram.add(other.histogram) }

    public var count: UInt64 { histogram.totalCount }

    public var stats: LatencyStats {
        guard count > 0 else { return .empty }
        func us(_ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1000 }
        return LatencyStats(
            count: count, p50Us: us(50), p90Us: us(90), p99Us: us(99), p999Us: us(99.9), p9999Us: us(99.99),
            maxUs: Double(histogram.max) / 1000, meanUs: histogram.mean / 1000)
    }

    /// The HdrHistogram percentile distribution (`.hgrm`), in microseconds.
    public var percentileDistribution: String {
        var text = ""
        histogram.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1000)
        return text
    }

    /// (percentile, microseconds) points for plotting, at HdrHistogram's usual resolution.
    public var percentilePoints: [(Double, Double)] {
        guard count > 0 else { return [] }
        return histogram.percentiles(ticksPerHalfDistance: 5).map { ($0.percentile, Double($0.value) / 1000) }
    }

    /// How many latencies fell in each bucket, eight buckets a decade from 1 µs (each ×1.33 the one
    /// before), as (from µs, to µs, count) from the first bucket that holds any to the last: the
    /// histogram itself, which the devtools page draws as bars.
    package var buckets: [(fromUs: Double, toUs: Double, count: UInt64)] {
        guard count > 0 else { return [] }
        var buckets: [(fromUs: Double, toUs: Double, count: UInt64)] = []
        var from = 0.0
        for step in histogram.logarithmicBucketValues(valueUnitsInFirstBucket: 1000, logBase: pow(10, 1.0 / 8)) {
            let to = Double(step.value) / 1000
            if step.countAddedInThisIterationStep > 0 || !buckets.isEmpty { buckets.append((from, to, step.countAddedInThisIterationStep)) }
            from = to
        }
        while buckets.last?.count == 0 { buckets.removeLast() }
        return buckets
    }
}
