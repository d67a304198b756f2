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
        lines.append(regressions.isEmpty ? "no regression" : "\(regressions.count) regression(s): " + regressions.map(\.name).joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}

public enum Baseline {
    /// What an earlier `--json` report must hold to be compared with.
    struct Earlier: Decodable {
        var e2e: LatencyStats
        var ack: LatencyStats
        var cpuUsPerAction: [String: Double]?
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
        func add(_ name: String, _ old: Double, _ new: Double) {
            figures.append(.init(name: name, old: old, new: new, regressed: old > 0 && new > old * (1 + threshold)))
        }
        for (label, old, new) in [("dispatch → ack", earlier.ack, current.ack), ("dispatch → view", earlier.e2e, current.e2e)] {
            add("\(label) p50 µs", old.p50Us, new.p50Us)
            add("\(label) p90 µs", old.p90Us, new.p90Us)
            add("\(label) p99 µs", old.p99Us, new.p99Us)
            add("\(label) p99.9 µs", old.p999Us, new.p999Us)
        }
        if let old = earlier.cpuUsPerAction?["all"], let new = current.cpuUsPerAction["all"] { add("CPU µs per action", old, new) }
        return BaselineVerdict(figures: figures, threshold: threshold, baseline: source)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { count >= width ? " " + self : String(repeating: " ", count: width - count) + self }
}
