import FluxCore
import Foundation
import NodeCores
import NodeSupport

/// One bench run as `--json` prints it (keys in snake_case: `rate_target`, `e2e.p99_us`, …).
public struct BenchReport: Codable, Sendable {
    public struct Setup: Codable, Sendable {
        public var transport: String
        public var stores: Int
        public var views: Int
        public var clients: Int
        public var codec: String
        public var fsync: String
        public var payloadBytes: Int
        public var stateItems: Int
        public var durationS: Double
        public var warmUpS: Double
        /// What was dispatched (`ledger.post`, an app's action, a workload file's name).
        public var workload: String? = nil
        /// Seconds of ramp from no load to the full rate.
        public var rampS: Double? = nil
        /// The mix by share of the actions (`ledger.post 80%`, `todo.addTodo 20%`).
        public var actions: [String]? = nil

        public init(
            transport: String, stores: Int, views: Int, clients: Int, codec: String, fsync: String,
            payloadBytes: Int, stateItems: Int, durationS: Double, warmUpS: Double, workload: String? = nil, rampS: Double? = nil,
            actions: [String]? = nil
        ) {
            self.workload = workload
            self.rampS = rampS
            self.actions = actions
            self.transport = transport
            self.stores = stores
            self.views = views
            self.clients = clients
            self.codec = codec
            self.fsync = fsync
            self.payloadBytes = payloadBytes
            self.stateItems = stateItems
            self.durationS = durationS
            self.warmUpS = warmUpS
        }
    }

    public struct Floor: Codable, Sendable {
        public var rateAchieved: Double
        public var acked: Int
        public var lost: Int
        public var e2e: LatencyStats
        public var ack: LatencyStats
        /// CPU seconds of the floor's processes (C client, relays, sinks) in the measured run.
        public var cpuSeconds: [String: Double]
        /// All of them together, per acknowledged message.
        public var cpuUsPerAction: Double
        /// Context switches of all of them together (threads included), per acknowledged message.
        package var contextSwitchesPerAction: Double? = nil
        /// The share of the machine's CPU time the hypervisor took during the floor's run (``HostCPU``).
        public var hostStealPercent: Double? = nil
    }

    /// The journal's syncs in a run, as the dispatcher timed them: how many, how many per action, and
    /// the median, 99th percentile and longest of the dispatcher's newest (`sampled`, at most 1,024,
    /// read at the run's end: a long run's last ones, and in a run of fewer syncs some from before it).
    /// Beside ``FsyncProbe``, it tells what a sync costs under the run's load from what it costs on a
    /// quiet disk.
    package struct JournalSyncs: Codable, Sendable, Equatable {
        package var syncs: UInt64
        package var perAction: Double
        package var sampled: UInt64
        package var p50Us: Double
        package var p99Us: Double
        package var maxUs: Double

        package init(syncs: UInt64, perAction: Double, sampled: UInt64, p50Us: Double, p99Us: Double, maxUs: Double) {
            (self.syncs, self.perAction, self.sampled, self.p50Us, self.p99Us, self.maxUs) = (syncs, perAction, sampled, p50Us, p99Us, maxUs)
        }

        /// From the dispatcher's status before and after a run of `actions` actions; nil when either is
        /// missing (no answer) or the journal did not sync during the run.
        package init?(before: NodeStatus?, after: NodeStatus?, actions: Int) {
            guard let before, let after, let count = after.journalSyncs, let p50 = after.journalSyncP50Us, let p99 = after.journalSyncP99Us,
                let max = after.journalSyncMaxUs, actions > 0
            else { return nil }
            // A dispatcher that had not synced before the run answered without the field.
            let syncs = count - Swift.min(count, before.journalSyncs ?? 0)
            guard syncs > 0 else { return nil }
            self.init(
                syncs: syncs, perAction: Double(syncs) / Double(actions), sampled: Swift.min(count, UInt64(SyncTimes.kept)), p50Us: Double(p50),
                p99Us: Double(p99),
                maxUs: Double(max))
        }
    }

    /// What `write` + `fdatasync` of one record costs on the journal's filesystem (the floor of
    /// fsync `batch` and `always`).
    public struct FsyncProbe: Codable, Sendable {
        public var count: Int
        public var bytes: Int
        public var p50Us: Double
        public var p90Us: Double
        public var p99Us: Double
        public var maxUs: Double
    }

    /// `--max`: the highest rate that held, and every trial of the search.
    public struct MaxRate: Codable, Sendable {
        public var rate: Double
        public var trials: [SearchStep]
    }

    /// zflux's figure divided by the floor's, per percentile of e2e and ack.
    public struct Ratios: Codable, Sendable {
        public var e2eP50: Double
        public var e2eP99: Double
        public var e2eP999: Double
        public var ackP50: Double
        public var ackP99: Double
        /// Achieved rates: with `--max`, the highest rate zflux sustained over the floor's.
        public var rateAchieved: Double
        /// CPU per action, every zflux process and the bench together, over the floor's.
        public var cpuPerAction: Double
        /// Context switches per action, every zflux process and the bench together, over the floor's.
        package var contextSwitchesPerAction: Double? = nil
    }

    public var setup: Setup
    public var rateTarget: Double
    public var rateAchieved: Double
    public var sent: Int
    public var acked: Int
    public var nacked: Int
    /// What the dispatcher said to the first refused action (none: every action was acknowledged).
    public var firstRefusal: String?
    public var lost: Int
    /// Acknowledged actions their store refused (``TrialResult/refusedByStore``), and the first one's
    /// reason; nil in reports from before they were counted.
    package var refusedByStore: Int?
    package var firstStoreRefusal: String?
    /// Dispatches sent again (unanswered for a second, or turned away by a pair's old leader); nil in
    /// reports from before there were resends.
    public var resent: Int?
    public var e2e: LatencyStats
    public var ack: LatencyStats
    public var stages: [String: LatencyStats]
    /// Mean bytes of one STATE update on the wire, and how many the subscribers received.
    public var stateUpdateBytes: Double?
    /// CPU seconds (user + system) each process used during the measured run.
    public var cpuSeconds: [String: Double]
    /// The same per acknowledged action, in µs, and `all` of them together.
    public var cpuUsPerAction: [String: Double]
    /// Context switches (voluntary and involuntary, every thread's) per acknowledged action, by
    /// process, and `all`: how often an action's path wakes a thread. Nil in reports from before.
    package var contextSwitchesPerAction: [String: Double]?
    public var floor: Floor?
    public var fsyncProbe: FsyncProbe?
    /// The journal's own syncs during the run, from the dispatcher's status (nil: none, or with `--max`).
    package var journalSyncs: JournalSyncs?
    /// The share of the machine's CPU time the hypervisor took during zflux's run (``HostCPU``): a VM
    /// out of CPU quota is paused, and the pauses show in the tails.
    public var hostStealPercent: Double?
    /// With `--max`: the highest rate with zero loss, and the trials (`max` in JSON).
    public var maxRate: MaxRate?
    public var ratios: Ratios?
    /// The e2e latency by percentile (`e2e_percentiles`), at the resolution `--svg` plots: what the
    /// devtools page draws. Nil in reports from before.
    package var e2ePercentiles: [PercentilePoint]?
    /// Each second of the run after the warm-up (by when its actions were scheduled): how many were
    /// seen and their e2e p50 and p99. Nil in reports from before.
    package var timeline: [TimelineSecond]?
    /// The e2e latencies counted in buckets, eight a decade (`e2e_histogram`): what the devtools page
    /// draws as bars. Nil in reports from before.
    package var e2eHistogram: [HistogramBucket]?

    package struct HistogramBucket: Codable, Sendable, Equatable {
        package var fromUs: Double
        package var toUs: Double
        package var count: UInt64
    }

    package struct PercentilePoint: Codable, Sendable, Equatable {
        package var percentile: Double
        package var us: Double
    }

    package struct TimelineSecond: Codable, Sendable, Equatable {
        package var second: Int
        package var count: UInt64
        package var p50Us: Double
        package var p99Us: Double
    }
    /// With `--max`: every rate tried and whether it held (zero loss, achieved ≥ 95% of target).
    public var search: [SearchStep]? {
        didSet { maxRate = search.map { steps in MaxRate(rate: steps.filter(\.held).map(\.rateTarget).max() ?? 0, trials: steps) } }
    }

    public struct SearchStep: Codable, Sendable {
        public var rateTarget: Double
        public var rateAchieved: Double
        public var lost: Int
        public var e2eP99Us: Double
        public var held: Bool

        public init(rateTarget: Double, rateAchieved: Double, lost: Int, e2eP99Us: Double, held: Bool) {
            self.rateTarget = rateTarget
            self.rateAchieved = rateAchieved
            self.lost = lost
            self.e2eP99Us = e2eP99Us
            self.held = held
        }
    }

    public init(
        setup: Setup, rateTarget: Double, result: TrialResult, cpuSeconds: [String: Double], contextSwitches: [String: Double] = [:],
        floor: TrialResult?, stateUpdateBytes: Double?, floorCPU: [String: Double] = [:]
    ) {
        self.setup = setup
        self.rateTarget = rateTarget
        rateAchieved = result.rateAchieved
        sent = result.sent
        acked = result.acked
        nacked = result.nacked
        firstRefusal = result.firstRefusal
        lost = result.lost
        refusedByStore = result.refusedByStore
        firstStoreRefusal = result.firstStoreRefusal
        resent = result.resent
        e2e = result.e2e.stats
        ack = result.ack.stats
        stages = result.stages.mapValues(\.stats)
        let points = result.e2e.percentilePoints.map { PercentilePoint(percentile: $0.0, us: $0.1) }
        e2ePercentiles = points.isEmpty ? nil : points
        let buckets = result.e2e.buckets.map { HistogramBucket(fromUs: $0.fromUs, toUs: $0.toUs, count: $0.count) }
        e2eHistogram = buckets.isEmpty ? nil : buckets
        let seconds = result.timeline.enumerated().compactMap { second, histogram in
            histogram.count == 0
                ? nil : TimelineSecond(second: second, count: histogram.count, p50Us: histogram.stats.p50Us, p99Us: histogram.stats.p99Us)
        }
        timeline = seconds.isEmpty ? nil : seconds
        self.cpuSeconds = cpuSeconds
        cpuUsPerAction = BenchReport.perAction(cpuSeconds, actions: result.acked)
        let switches = BenchReport.perAction(contextSwitches, actions: result.acked, scale: 1)
        contextSwitchesPerAction = switches.isEmpty ? nil : switches
        self.stateUpdateBytes = stateUpdateBytes
        if let floor { attachFloor(floor, cpu: floorCPU) }
    }

    /// Adds the floor measured in the same run, and every ratio to it.
    public mutating func attachFloor(
        _ floor: TrialResult, cpu floorCPU: [String: Double], contextSwitches floorSwitches: [String: Double] = [:], hostStealPercent: Double? = nil
    ) {
        let f = Floor(
            rateAchieved: floor.rateAchieved, acked: floor.acked, lost: floor.lost, e2e: floor.e2e.stats, ack: floor.ack.stats,
            cpuSeconds: floorCPU, cpuUsPerAction: BenchReport.perAction(floorCPU, actions: floor.acked)["all"] ?? 0,
            contextSwitchesPerAction: BenchReport.perAction(floorSwitches, actions: floor.acked, scale: 1)["all"],
            hostStealPercent: hostStealPercent)
        self.floor = f
        func ratio(_ a: Double, _ b: Double) -> Double { b > 0 ? a / b : 0 }
        ratios = Ratios(
            e2eP50: ratio(e2e.p50Us, f.e2e.p50Us), e2eP99: ratio(e2e.p99Us, f.e2e.p99Us), e2eP999: ratio(e2e.p999Us, f.e2e.p999Us),
            ackP50: ratio(ack.p50Us, f.ack.p50Us), ackP99: ratio(ack.p99Us, f.ack.p99Us),
            rateAchieved: ratio(rateAchieved, f.rateAchieved), cpuPerAction: ratio(cpuUsPerAction["all"] ?? 0, f.cpuUsPerAction))
        if let ours = contextSwitchesPerAction?["all"], let theirs = f.contextSwitchesPerAction, theirs > 0 {
            ratios?.contextSwitchesPerAction = ours / theirs
        }
    }

    /// Per action by process, and `all`: CPU seconds as µs (`scale` 1e6), or counts as they are (1).
    static func perAction(_ totals: [String: Double], actions: Int, scale: Double = 1e6) -> [String: Double] {
        guard actions > 0, !totals.isEmpty else { return [:] }
        var out = totals.mapValues { $0 * scale / Double(actions) }
        out["all"] = totals.values.reduce(0, +) * scale / Double(actions)
        return out
    }

    enum CodingKeys: String, CodingKey {
        case setup, rateTarget, rateAchieved, sent, acked, nacked, firstRefusal, lost, refusedByStore, firstStoreRefusal, resent, e2e, ack
        case stages, stateUpdateBytes, cpuSeconds
        case cpuUsPerAction, contextSwitchesPerAction, floor, fsyncProbe, journalSyncs, ratios, search, hostStealPercent, e2ePercentiles, timeline
        case e2eHistogram
        case maxRate = "max"
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The human table.
    public func table() -> String {
        var lines: [String] = []
        let s = setup
        lines.append(
            StandardOutput.programName + " bench: \(s.transport), \(s.stores) store(s) × \(s.views) view(s), \(s.clients) client(s), "
                + "\(Self.rate(rateTarget)) for \(Self.number(s.durationS)) s (+\(Self.number(s.warmUpS)) s warm-up), "
                + (s.workload.map {
                    $0 == "ledger.post" ? "" : "workload \($0)\(Self.mix(s))\(s.rampS.map { " (ramp \(Self.number($0)) s)" } ?? ""), "
                } ?? "")
                + (s.workload == nil || s.workload == "ledger.post" ? "payload \(s.payloadBytes) B, " : "")
                + "codec \(s.codec), fsync \(s.fsync)"
                + (s.workload == nil || s.workload == "ledger.post" ? ", state \(s.stateItems) items" : ""))
        lines.append("")
        lines.append(Self.row("latency (µs)", ["p50", "p90", "p99", "p99.9", "p99.99", "max"]))
        func statsRow(_ name: String, _ stats: LatencyStats) -> String {
            Self.row(name, [stats.p50Us, stats.p90Us, stats.p99Us, stats.p999Us, stats.p9999Us, stats.maxUs].map(Self.number))
        }
        lines.append(statsRow("dispatch → ack", ack))
        lines.append(statsRow("dispatch → view", e2e))
        for name in TrialResult.stageNames {
            if let stage = stages[name] { lines.append(statsRow("  \(name)", stage)) }
        }
        if let floor, let ratios {
            lines.append(statsRow("floor → ack", floor.ack))
            lines.append(statsRow("floor → sink", floor.e2e))
            lines.append(
                Self.row(
                    "e2e / floor",
                    [ratios.e2eP50, 0, ratios.e2eP99, ratios.e2eP999].enumerated()
                        .map { $0.offset == 1 ? "" : String(format: "%.2f×", $0.element) }))
        }
        lines.append("")
        var throughput =
            "throughput: target \(Self.rate(rateTarget)), achieved \(Self.rate(rateAchieved)); "
            + "sent \(sent), acked \(acked), nacked \(nacked), refused by the store \(refusedByStore ?? 0), lost \(lost)"
            + ((resent ?? 0) > 0 ? ", resent \(resent ?? 0)" : "")
        if let floor { throughput += "; floor achieved \(Self.rate(floor.rateAchieved)), lost \(floor.lost)" }
        lines.append(throughput)
        if let firstRefusal { lines.append("refused by the dispatcher: \(nacked) action(s), the first because: \(firstRefusal)") }
        if let refused = refusedByStore, refused > 0 {
            lines.append(
                "refused by the store: \(refused) of \(acked) acknowledged action(s) changed nothing"
                    + (firstStoreRefusal.map { ", the first because: \($0)" } ?? "")
                    + "; their latency is to the refusal, which views show at once")
        }
        if let ratios, search != nil {
            lines.append(
                String(
                    format: "highest rate with zero loss: %@, %.0f%% of the floor's %@ (latencies above are at those rates)",
                    Self.rate(rateAchieved), ratios.rateAchieved * 100, Self.rate(floor?.rateAchieved ?? 0)))
        }
        if let bytes = stateUpdateBytes { lines.append(String(format: "state updates: %.0f B on average", bytes)) }
        if !cpuSeconds.isEmpty {
            lines.append("cpu: " + cpuSeconds.sorted { $0.key < $1.key }.map { "\($0.key) \(Self.number($0.value)) s" }.joined(separator: ", "))
        }
        if let all = cpuUsPerAction["all"] {
            var line =
                "cpu per action: \(Self.number(all)) µs ("
                + cpuUsPerAction.filter { $0.key != "all" }.sorted { $0.key < $1.key }.map { "\($0.key) \(Self.number($0.value))" }
                .joined(separator: ", ") + ")"
            if let floor, let ratios, floor.cpuUsPerAction > 0 {
                line += "; floor \(Self.number(floor.cpuUsPerAction)) µs per message (\(String(format: "%.2f×", ratios.cpuPerAction)))"
            }
            lines.append(line)
        }
        if let switches = contextSwitchesPerAction, let all = switches["all"] {
            var line =
                "context switches per action: \(Self.number(all)) ("
                + switches.filter { $0.key != "all" }.sorted { $0.key < $1.key }.map { "\($0.key) \(Self.number($0.value))" }
                .joined(separator: ", ") + ")"
            if let theirs = floor?.contextSwitchesPerAction, let ratio = ratios?.contextSwitchesPerAction {
                line += "; floor \(Self.number(theirs)) per message (\(String(format: "%.2f×", ratio)))"
            }
            lines.append(line)
        }
        if let steal = hostStealPercent {
            var line = String(format: "host: the hypervisor took %.1f%% of the CPUs' time during the run (steal)", steal)
            if let floorSteal = floor?.hostStealPercent { line += String(format: ", %.1f%% during the floor's", floorSteal) }
            if steal >= 1 { line += "; its pauses show in the tails" }
            lines.append(line)
        }
        if let probe = fsyncProbe {
            lines.append(
                "write+fdatasync of \(probe.bytes) B on the journal's filesystem: p50 \(Self.number(probe.p50Us)) µs, "
                    + "p99 \(Self.number(probe.p99Us)) µs, max \(Self.number(probe.maxUs)) µs (\(probe.count) tries)")
        }
        if let syncs = journalSyncs {
            lines.append(
                "the journal's own syncs in the run: \(syncs.syncs) (\(String(format: "%.3f", syncs.perAction)) per action); the dispatcher's newest "
                    + "\(syncs.sampled) at its end: p50 \(Self.number(syncs.p50Us)) µs, p99 \(Self.number(syncs.p99Us)) µs, max \(Self.number(syncs.maxUs)) µs"
            )
        }
        if let search {
            lines.append("search for the highest rate with zero loss:")
            for step in search {
                lines.append(
                    "  \(Self.rate(step.rateTarget)): achieved \(Self.rate(step.rateAchieved)), lost \(step.lost), "
                        + "e2e p99 \(Self.number(step.e2eP99Us)) µs: \(step.held ? "held" : "did not hold")")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `: ledger.post 80%, todo.addTodo 20%` when the workload's name does not already say it.
    static func mix(_ setup: Setup) -> String {
        guard let actions = setup.actions, !actions.isEmpty, actions != [(setup.workload ?? "") + " 100%"] else { return "" }
        return ": " + actions.joined(separator: ", ")
    }

    static func row(_ name: String, _ cells: [String]) -> String {
        name.padding(toLength: 18, withPad: " ", startingAt: 0) + cells.map { String(repeating: " ", count: max(0, 10 - $0.count)) + $0 }.joined()
    }

    public static func number(_ value: Double) -> String {
        if value >= 100 || value == value.rounded() { return String(format: "%.0f", value) }
        return String(format: value >= 10 ? "%.1f" : "%.2f", value)
    }

    public static func rate(_ perSecond: Double) -> String {
        perSecond >= 10_000 ? String(format: "%.0fk/s", perSecond / 1000) : String(format: "%.0f/s", perSecond)
    }
}

/// A latency-by-percentile plot as a standalone SVG: percentile on a log scale of 1/(1−p), as
/// HdrHistogram's own plotter draws it, so the tail gets as much room as the median.
public enum PercentilePlot {
    public static func svg(title: String, series: [(name: String, histogram: LatencyHistogram)]) -> String {
        let width = PercentilePlot.width, height = 480.0, left = 70.0, right = 30.0, top = 40.0, bottom = 50.0
        let plotW = width - left - right, plotH = height - top - bottom
        let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
        let maxX = 5.0  // up to 99.999%
        func x(_ percentile: Double) -> Double {
            let p = min(percentile, 99.999) / 100
            return left + min(maxX, log10(1 / max(1e-9, 1 - p))) / maxX * plotW
        }
        let points = series.map { $0.histogram.percentilePoints }
        let maxValue = max(1, points.flatMap { $0.map(\.1) }.max() ?? 1)
        let yMax = pow(10, ceil(log10(maxValue)))
        let yMin = max(1, pow(10, floor(log10(max(1, points.flatMap { $0.map(\.1) }.min() ?? 1)))))
        func y(_ us: Double) -> Double {
            let v = log10(max(yMin, us)), lo = log10(yMin), hi = log10(yMax)
            return top + plotH - (v - lo) / max(1e-9, hi - lo) * plotH
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="24" font-size="15">\(escape(title))</text>

            """
        for (i, label) in ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"].enumerated() {
            let gx = left + Double(i) / maxX * plotW
            svg += "<line x1=\"\(gx)\" y1=\"\(top)\" x2=\"\(gx)\" y2=\"\(top + plotH)\" stroke=\"#ddd\"/>"
            svg += "<text x=\"\(gx)\" y=\"\(top + plotH + 18)\" text-anchor=\"middle\">\(label)</text>\n"
        }
        var decade = yMin
        while decade <= yMax {
            let gy = y(decade)
            svg += "<line x1=\"\(left)\" y1=\"\(gy)\" x2=\"\(left + plotW)\" y2=\"\(gy)\" stroke=\"#ddd\"/>"
            svg += "<text x=\"\(left - 6)\" y=\"\(gy + 4)\" text-anchor=\"end\">\(PercentilePlot.label(decade))</text>\n"
            decade *= 10
        }
        svg += "<text x=\"\(left + plotW / 2)\" y=\"\(height - 10)\" text-anchor=\"middle\">percentile</text>\n"
        svg +=
            "<text x=\"16\" y=\"\(top + plotH / 2)\" transform=\"rotate(-90 16 \(top + plotH / 2))\" text-anchor=\"middle\">latency (µs, log scale)</text>\n"
        for (index, line) in points.enumerated() where !line.isEmpty {
            let color = colors[index % colors.count]
            let path = line.map { String(format: "%.1f,%.1f", x($0.0), y($0.1)) }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(path)\"/>\n"
        }
        // The legend inside the plot's upper left, on white: the lines start low on the left.
        let legend = legendBox(names: series.map(\.name), left: left + 12, top: top + 12)
        svg += String(
            format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"white\" stroke=\"#bbb\"/>\n", legend.x, legend.y,
            legend.width, legend.height)
        for (index, name) in series.map(\.name).enumerated() {
            let color = colors[index % colors.count]
            let ly = legend.y + 18 + Double(index) * 18
            svg += "<line x1=\"\(legend.x + 8)\" y1=\"\(ly - 4)\" x2=\"\(legend.x + 28)\" y2=\"\(ly - 4)\" stroke=\"\(color)\" stroke-width=\"2\"/>"
            svg += "<text x=\"\(legend.x + 34)\" y=\"\(ly)\">\(escape(name))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    public static let width = 820.0

    /// Where the legend goes: its box holds each name at about 7.5 px a character (12 px sans-serif).
    public static func legendBox(names: [String], left: Double, top: Double) -> (x: Double, y: Double, width: Double, height: Double) {
        let longest = Double(names.map(\.count).max() ?? 0)
        return (left, top, 44 + longest * 7.5, 10 + Double(names.count) * 18)
    }

    static func label(_ us: Double) -> String {
        us >= 1_000_000 ? "\(Int(us / 1_000_000)) s" : us >= 1000 ? "\(Int(us / 1000)) ms" : "\(Int(us)) µs"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

extension BenchReport {
    /// Why the run fails the refusal gate: more than `maxPercent` of its acknowledged actions refused by
    /// their store (`bench --max-refused`); nil when it passes, or when nothing was acknowledged (the
    /// run fails for that already). A workload may refuse some actions on purpose (bids after a close):
    /// the gate is the share its author expects.
    package func refusalGateFailure(maxPercent: Double) -> String? {
        precondition(maxPercent >= 0 && maxPercent <= 100, "a share of the acknowledged actions")
        guard let refused = refusedByStore, acked > 0 else { return nil }
        let percent = Double(refused) / Double(acked) * 100
        guard percent > maxPercent else { return nil }
        return String(format: "%.1f%%", percent)
            + " of the acknowledged actions (\(refused) of \(acked)) were refused by the store, more than --max-refused \(Self.percentText(maxPercent))"
    }

    /// 10 as `10%`, 2.5 as `2.5%`.
    static func percentText(_ percent: Double) -> String {
        percent == percent.rounded() ? String(format: "%.0f%%", percent) : "\(percent)%"
    }
}
