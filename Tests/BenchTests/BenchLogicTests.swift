import Foundation
import Testing

@testable import Bench

@Suite("Bench logic: schedule, accounting, histograms, report")
struct BenchLogicTests {
    @Test("--max searches down from a first rate that does not hold (it once reported 0/s), up while all hold, then into the gap")
    func maxSearch() {
        // A cluster that holds up to 9,000/s, searched from 25,000/s.
        var rate = 25_000.0, low = 0.0, high = Double.infinity
        var tried: [Double] = []
        while true {
            tried.append(rate)
            if rate <= 9_000 { low = max(low, rate) } else { high = min(high, rate) }
            guard let next = BenchSession.nextSearchRate(rate, low: low, high: high) else { break }
            rate = next
        }
        #expect(tried.prefix(3) == [25_000, 12_500, 6_250], "down by halving until one holds")
        #expect(low >= 0.9 * 9_000 && low <= 9_000, "ends within 10% below what holds: \(tried)")
        #expect(BenchSession.nextSearchRate(150, low: 0, high: 150) == nil, "never below 100/s")
        #expect(BenchSession.nextSearchRate(1_000, low: 1_000, high: .infinity) == 2_000)
    }

    @Test("the open-loop schedule spaces actions evenly and counts what is due")
    func schedule() {
        let schedule = OpenLoopSchedule(rate: 10_000, seconds: 2)
        #expect(schedule.count == 20_000)
        #expect(schedule.offset(of: 0) == 0)
        #expect(schedule.offset(of: 1) == 100_000)
        #expect(schedule.offset(of: 10_000) == 1_000_000_000)
        #expect(schedule.dueCount(atElapsed: 0) == 1)
        #expect(schedule.dueCount(atElapsed: 99_999) == 1)
        #expect(schedule.dueCount(atElapsed: 100_000) == 2)
        #expect(schedule.dueCount(atElapsed: 10_000_000_000) == 20_000, "never more than the run holds")
        #expect(schedule.span == 1_999_900_000)
    }

    @Test("latency counts from the scheduled instant, so a stall shows in every action behind it")
    func coordinatedOmission() {
        // 10 actions at 1,000/s; the system stalls and answers all of them at 20 ms.
        let schedule = OpenLoopSchedule(rate: 1000, count: 10)
        var log = TrialLog(schedule: schedule)
        log.sent = 10
        for i in 0..<10 { log.acknowledge(index: i, seq: UInt64(i + 1), at: 20_000_000, sequencedAtNanoseconds: 0) }
        let result = Accounting.evaluate(log, subscribers: [[Arrival(version: 10, at: 20_000_000)]], warmUp: 0, startWall: 0)
        #expect(result.ack.stats.maxUs >= 19_900 && result.ack.stats.maxUs <= 20_100, "the first action waited 20 ms")
        #expect(result.ack.stats.p50Us >= 14_900 && result.ack.stats.p50Us <= 16_100, "the median one waited 15-16 ms, not 0")
        #expect(result.e2e.count == 10 && result.lost == 0)
    }

    @Test("loss: an acked action no subscriber version covers is lost once, whichever subscriber missed it")
    func loss() {
        let schedule = OpenLoopSchedule(rate: 1000, count: 6)
        var log = TrialLog(schedule: schedule)
        log.sent = 6
        for i in 0..<5 { log.acknowledge(index: i, seq: UInt64(100 + i), at: schedule.offset(of: i) + 50_000, sequencedAtNanoseconds: 0) }
        log.nacked = 1
        // Subscriber A saw everything; B stopped at 102, so 103 and 104 are lost.
        let a = [Arrival(version: 101, at: 1_100_000), Arrival(version: 104, at: 4_100_000)]
        let b = [Arrival(version: 102, at: 2_100_000)]
        let result = Accounting.evaluate(log, subscribers: [a, b], warmUp: 0, startWall: 0)
        #expect(result.acked == 5 && result.nacked == 1 && result.sent == 6)
        #expect(result.lost == 2)
        #expect(result.e2e.count == 5 + 3, "A covers 5 actions, B covers 3")
        // Version 101 covers seqs 100 and 101 (the first arrival at or past each seq).
        #expect(result.e2e.stats.p50Us > 0)
    }

    @Test("warm-up actions count for loss but not for latency; stages come from the nodes' stamps")
    func warmUpAndStages() {
        let schedule = OpenLoopSchedule(rate: 1000, count: 4)
        var log = TrialLog(schedule: schedule)
        log.sent = 4
        let startWall: Int64 = 1_000_000_000_000
        for i in 0..<4 {
            let sent = startWall + Int64(schedule.offset(of: i))
            log.acknowledge(index: i, seq: UInt64(i + 1), at: schedule.offset(of: i) + 30_000, sequencedAtNanoseconds: sent + 10_000)
        }
        let arrivals = (0..<4).map { i in
            Arrival(
                version: UInt64(i + 1), at: schedule.offset(of: i) + 60_000,
                publishedAtNanoseconds: startWall + Int64(schedule.offset(of: i)) + 50_000)
        }
        let result = Accounting.evaluate(log, subscribers: [arrivals], warmUp: 2_000_000, startWall: startWall)
        #expect(result.ack.count == 2 && result.e2e.count == 2)
        #expect(abs(result.e2e.stats.p50Us - 60) < 0.5)
        #expect(abs((result.stages["sequence"]?.stats.p50Us ?? 0) - 10) < 0.5)
        #expect(abs((result.stages["publish"]?.stats.p50Us ?? 0) - 40) < 0.5)
        #expect(abs((result.stages["deliver"]?.stats.p50Us ?? 0) - 10) < 0.5)
    }

    @Test("histograms merge their counts; percentiles stay within the histogram's precision")
    func histogramMerge() {
        var a = LatencyHistogram(), b = LatencyHistogram()
        for i in 1...1000 { a.record(nanoseconds: UInt64(i) * 1000) }
        for _ in 1...1000 { b.record(nanoseconds: 5_000_000) }
        a.merge(b)
        #expect(a.count == 2000)
        let stats = a.stats
        #expect(abs(stats.p50Us - 1000) <= 1)
        #expect(abs(stats.p99Us - 5000) <= 5)
        #expect(abs(stats.maxUs - 5000) <= 5)
        #expect(a.percentileDistribution.contains("Percentile"))
    }

    @Test("the histogram's buckets count every latency once, eight a decade, from the first bucket that holds one to the last")
    func histogramBuckets() {
        var latencies = LatencyHistogram()
        #expect(latencies.buckets.isEmpty)
        for _ in 1...100 { latencies.record(nanoseconds: 5_000) }
        for _ in 1...10 { latencies.record(nanoseconds: 500_000) }
        let buckets = latencies.buckets
        #expect(buckets.reduce(0) { $0 + $1.count } == 110)
        #expect(buckets.first.map { $0.fromUs <= 5 && 5 <= $0.toUs && $0.count == 100 } == true, "\(buckets.prefix(2))")
        #expect(buckets.last.map { $0.fromUs <= 500 && 500 <= $0.toUs * 1.001 && $0.count == 10 } == true, "\(buckets.suffix(2))")
        // Two decades apart, eight buckets a decade: about 16 buckets, the empty ones between kept.
        #expect((15...18).contains(buckets.count), "\(buckets.count)")
        for (earlier, later) in zip(buckets, buckets.dropFirst()) { #expect(earlier.toUs == later.fromUs) }
    }

    @Test("the report: JSON has the documented keys, the table shows ratios to the floor, the SVG is a plot")
    func report() throws {
        var zflux = TrialResult(), floor = TrialResult()
        for _ in 0..<100 { zflux.e2e.record(nanoseconds: 30_000); zflux.ack.record(nanoseconds: 20_000) }
        for _ in 0..<100 { floor.e2e.record(nanoseconds: 20_000); floor.ack.record(nanoseconds: 10_000) }
        zflux.acked = 100
        zflux.sent = 100
        zflux.rateAchieved = 9_990
        let setup = BenchReport.Setup(
            transport: "ipc", stores: 1, views: 1, clients: 1, codec: "binary", fsync: "batch",
            payloadBytes: 64, stateItems: 10, durationS: 1, warmUpS: 0)
        floor.acked = 100
        var report = BenchReport(
            setup: setup, rateTarget: 10_000, result: zflux, cpuSeconds: ["dispatcher": 0.5, "bench": 0.25], floor: floor, stateUpdateBytes: 40,
            floorCPU: ["floor client": 0.1, "floor sinks": 0.05])
        report.search = [
            .init(rateTarget: 10_000, rateAchieved: 9_990, lost: 0, e2eP99Us: 30, held: true),
            .init(rateTarget: 20_000, rateAchieved: 12_000, lost: 0, e2eP99Us: 900, held: false),
        ]
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        for key in ["rate_target", "rate_achieved", "acked", "lost", "e2e", "ack", "floor", "cpu_us_per_action", "max"] {
            #expect(object[key] != nil, "\(key)")
        }
        // CPU per action: 0.75 s over 100 actions; the floor's 0.15 s over its 100 messages.
        let perAction = try #require(object["cpu_us_per_action"] as? [String: Double])
        #expect(perAction["all"] == 7500 && perAction["dispatcher"] == 5000)
        #expect(abs(((object["floor"] as? [String: Any])?["cpu_us_per_action"] as? Double ?? 0) - 1500) < 0.001)
        #expect(abs((report.ratios?.cpuPerAction ?? 0) - 5) < 0.001)
        // --max: the highest rate that held, with the trials.
        let max = try #require(object["max"] as? [String: Any])
        #expect(max["rate"] as? Double == 10_000 && (max["trials"] as? [Any])?.count == 2)
        let e2e = try #require(object["e2e"] as? [String: Any])
        for key in ["p50_us", "p99_us", "p999_us", "max_us"] { #expect(e2e[key] != nil, "e2e.\(key)") }
        let floorE2E = try #require((object["floor"] as? [String: Any])?["e2e"] as? [String: Any])
        #expect(floorE2E["p50_us"] as? Double == 20)
        #expect(abs((report.ratios?.e2eP50 ?? 0) - 1.5) < 0.01)
        report.hostStealPercent = 6.5
        report.floor?.hostStealPercent = 0
        let withSteal = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect(withSteal["host_steal_percent"] as? Double == 6.5)
        #expect((withSteal["floor"] as? [String: Any])?["host_steal_percent"] as? Double == 0)
        let table = report.table()
        #expect(table.contains("the hypervisor took 6.5% of the CPUs' time during the run (steal), 0.0% during the floor's"))
        #expect(table.contains("1.50×"))
        #expect(table.contains("lost 0"))
        let svg = PercentilePlot.svg(title: "t <1>", series: [("zflux e2e", zflux.e2e), ("floor e2e", floor.e2e)])
        #expect(svg.hasPrefix("<svg") && svg.contains("<polyline") && svg.contains("t &lt;1&gt;"))
    }

    @Test("context switches: per action by process and in all, beside the floor's per message, with their ratio")
    func contextSwitchesPerAction() throws {
        var zflux = TrialResult(), floor = TrialResult()
        (zflux.acked, zflux.sent, floor.acked) = (200, 200, 100)
        let setup = BenchReport.Setup(
            transport: "ipc", stores: 1, views: 1, clients: 1, codec: "binary", fsync: "none",
            payloadBytes: 64, stateItems: 10, durationS: 1, warmUpS: 0)
        var report = BenchReport(
            setup: setup, rateTarget: 2_000, result: zflux, cpuSeconds: ["dispatcher": 0.1], contextSwitches: ["dispatcher": 600, "bench": 1_000],
            floor: nil, stateUpdateBytes: nil)
        report.attachFloor(floor, cpu: ["floor client": 0.01], contextSwitches: ["floor client": 500, "floor sinks": 300])
        // 1,600 switches over 200 actions; the floor's 800 over its 100 messages.
        #expect(report.contextSwitchesPerAction == ["dispatcher": 3, "bench": 5, "all": 8])
        #expect(report.floor?.contextSwitchesPerAction == 8)
        #expect(report.ratios?.contextSwitchesPerAction == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect((object["context_switches_per_action"] as? [String: Double])?["all"] == 8)
        #expect((object["floor"] as? [String: Any])?["context_switches_per_action"] as? Double == 8)
        #expect(report.table().contains("context switches per action: 8 (bench 5, dispatcher 3); floor 8 per message (1.00×)"), "\(report.table())")
        // This process's own count comes from getrusage and only grows.
        let before = try #require(contextSwitches(pid: getpid()))
        usleep(1_000)
        let after = try #require(contextSwitches(pid: getpid()))
        #expect(after > before)
        // A floor program's FILE.cpu: `µs switches`.
        let file = NSTemporaryDirectory() + "/zf-usage-\(getpid())"
        try "2500000 1234\n".write(toFile: file + ".cpu", atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file + ".cpu") }
        #expect(FloorFiles.usage(file) == (2.5, 1234))
    }

    @Test("steal: the share of the machine's CPU time the hypervisor took, from two readings of /proc/stat")
    func hostSteal() throws {
        let before = try #require(HostCPU.parse("cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 50 0 25 400 5 0 2 17 0 0\n"))
        #expect(before == HostCPU(total: 1000, steal: 35))
        let after = HostCPU(total: 2000, steal: 100)
        #expect(after.stealPercent(since: before) == 6.5)
        #expect(after.stealPercent(since: nil) == nil)
        #expect(before.stealPercent(since: after) == nil, "readings out of order give nothing")
        #expect(HostCPU.parse("intr 1 2 3\n") == nil && HostCPU.parse("cpu  1 2 3\n") == nil)
        #expect(HostCPU.now() != nil, "this is Linux: /proc/stat has a cpu line")
    }

    @Test("the plot's legend fits inside the picture, however long the names")
    func legendFits() {
        let names = ["dispatch → ack", "dispatch → view", "floor → sink", "zflux dispatch → view at 10k/s"]
        let box = PercentilePlot.legendBox(names: names, left: 82, top: 52)
        #expect(box.x + box.width <= PercentilePlot.width && box.width >= 34 + 30 * 7.5)
        var series: [(name: String, histogram: LatencyHistogram)] = []
        for name in names {
            var histogram = LatencyHistogram()
            histogram.record(nanoseconds: 50_000)
            series.append((name, histogram))
        }
        let svg = PercentilePlot.svg(title: "legend", series: series)
        for name in names { #expect(svg.contains(PercentilePlot.escape(name))) }
    }
}
