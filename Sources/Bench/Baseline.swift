import FluxCore
import Foundation

/// A run compared with an earlier one (`zflux bench --baseline OLD.json`): each latency percentile and
/// the CPU per action, old and new, and which grew beyond the threshold.
public struct BaselineVerdict: Sendable, Equatable {
    public struct Figure: Sendable, Equatable {
        public var name: String
        public var old: Double
        public var new: Double
        /// new / old − 1 (0.1 is 10% worse); 0 when there is no old figure.
        public var change: Double { old > 0 ? new / old - 1 : 0 }
        public var regressed: Bool
    }

    public var figures: [Figure]
    /// The growth allowed before a figure counts as a regression (0.1: 10%).
    public var threshold: Double
    /// The baseline's name, for the text.
    public var baseline: String

    /// Percentiles left out because either run had too few samples to place them (see `Baseline`).
    public var skipped: [String] = []
    /// Figures left out because the baseline does not have them.
    package var unknown: [String] = []

    public var regressions: [Figure] { figures.filter(\.regressed) }

    /// The comparison as a table for people.
    public func text() -> String {
        var lines = [
            "compared with \(baseline) (a regression is more than \(BenchReport.number(threshold * 100))% worse):",
            "  " + "".padding(toLength: 26, withPad: " ", startingAt: 0) + ["before", "now", "change"].map { $0.leftPadded(to: 10) }.joined(),
        ]
        for figure in figures {
            let change = figure.old > 0 ? String(format: "%+.1f%%", figure.change * 100) : "n/a"
            let cells = [BenchReport.number(figure.old), BenchReport.number(figure.new), change].map { $0.leftPadded(to: 10) }
            lines.append(
                "  " + figure.name.padding(toLength: 26, withPad: " ", startingAt: 0) + cells.joined() + "  "
                    + (figure.regressed ? "REGRESSION" : "ok"))
        }
        if !skipped.isEmpty {
            lines.append("  not compared, too few samples for a stable figure: " + skipped.joined(separator: ", "))
        }
        if !unknown.isEmpty { lines.append("  not compared, not in the baseline: " + unknown.joined(separator: ", ")) }
        lines.append(regressions.isEmpty ? "no regression" : "\(regressions.count) regression(s): " + regressions.map(\.name).joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}

public enum Baseline {
    /// The samples a percentile needs above it to be compared: p99 needs 1,000 samples, p99.9 10,000.
    public static let minimumTail = 10
    /// How many percentage points the share of refused actions must grow by, beyond the threshold, to
    /// count as a regression.
    package static let refusalMargin = 0.1

    /// What an earlier `--json` report must hold to be compared with.
    struct Earlier: Decodable {
        var e2e: LatencyStats
        var ack: LatencyStats
        var cpuUsPerAction: [String: Double]?
        var acked: Int?
        var refusedByStore: Int?
    }

    /// Compares `current` with the `--json` report in `data` (read from `source`); a figure regresses
    /// when it grew by more than `threshold` (0.1: 10%).
    public static func compare(current: BenchReport, baseline data: Data, source: String, threshold: Double) throws -> BaselineVerdict {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let earlier: Earlier
        do {
            earlier = try decoder.decode(Earlier.self, from: data)
        } catch {
            throw BenchError(
                "\(source) is not a `zflux bench --json` report (it needs e2e and ack percentiles): \((error as? DecodingError)?.shortDescription ?? "\(error)")"
            )
        }
        var figures: [BaselineVerdict.Figure] = []
        var skipped: [String] = []
        var unknown: [String] = []
        func add(_ name: String, _ old: Double, _ new: Double) {
            figures.append(.init(name: name, old: old, new: new, regressed: old > 0 && new > old * (1 + threshold)))
        }
        for (label, old, new) in [("dispatch → ack", earlier.ack, current.ack), ("dispatch → view", earlier.e2e, current.e2e)] {
            let samples = min(old.count, new.count)
            for (name, tail, before, now) in [
                ("p50", 0.5, old.p50Us, new.p50Us), ("p90", 0.1, old.p90Us, new.p90Us), ("p99", 0.01, old.p99Us, new.p99Us),
                ("p99.9", 0.001, old.p999Us, new.p999Us),
            ] {
                // A percentile is a figure only with samples beyond it: with fewer than `minimumTail`
                // above it, p99.9 of 800 samples is the maximum, which one hiccup of the host moves.
                guard Double(samples) * tail >= Double(minimumTail) else {
                    skipped.append("\(label) \(name)")
                    continue
                }
                add("\(label) \(name) µs", before, now)
            }
        }
        if let old = earlier.cpuUsPerAction?["all"], let new = current.cpuUsPerAction["all"] { add("CPU µs per action", old, new) }
        // Refusals by the store, as a share of the acknowledged actions: a workload that expects some
        // (bids after the close) keeps its share. A regression is a share beyond the threshold and at
        // least `refusalMargin` percentage points above the baseline's: one refusal more in 10,000 is
        // timing, not a regression; refusals that were not there before are.
        if let oldRefused = earlier.refusedByStore, let oldAcked = earlier.acked {
            func percent(_ refused: Int, _ acked: Int) -> Double { acked > 0 ? Double(refused) * 100 / Double(acked) : 0 }
            let old = percent(oldRefused, oldAcked), new = percent(current.refusedByStore ?? 0, current.acked)
            figures.append(
                .init(name: "refused by the store, %", old: old, new: new, regressed: new > old * (1 + threshold) && new - old >= refusalMargin))
        } else if (current.refusedByStore ?? 0) > 0 {
            unknown.append("refused by the store (the baseline is from before refusals were counted)")
        }
        return BaselineVerdict(figures: figures, threshold: threshold, baseline: source, skipped: skipped, unknown: unknown)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { count >= width ? " " + self : String(repeating: " ", count: width - count) + self }
}
