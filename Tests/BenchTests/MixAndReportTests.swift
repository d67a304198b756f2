import FluxCore
import Foundation
import Testing

@testable import Bench

@Suite("The mix a run sends, a ramp under --max, what the report says of a workload")
struct MixAndReportTests {
    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    static func identity(_ app: String, _ type: String, _ arguments: [UInt8]) -> [UInt8] { arguments }

    @Test("${seq} is the action's index in the run: each action of a numbering entry has its own payload")
    func seqNumbersActions() throws {
        let workload = try Workload.parse(
            toml: """
                [[action]]
                app = "ledger"
                type = "post"
                weight = 3
                payload = '{"account": "${int 0 9}", "amount": 1}'

                [[action]]
                app = "todo"
                type = "addTodo"
                payload = { title = "task ${seq}", id = "${seq}" }
                """, source: "seq.toml")
        #expect(!workload.mix[0].payload.numbersActions && workload.mix[1].payload.numbersActions)
        let mix = try LoadMix(workload, seed: 3, actions: 10_000, encode: Self.identity)
        #expect(!mix.kinds[0].perAction && mix.kinds[0].payloads.count == LoadMix.poolSize, "no ${seq}: a pool")
        #expect(mix.kinds[1].perAction)
        var todos = 0
        for index in 0..<10_000 where mix.kind(of: index) == 1 {
            let object = try Self.object(mix.payload(of: index))
            #expect(object["id"] as? Int == index && object["title"] as? String == "task \(index)")
            todos += 1
        }
        #expect(abs(Double(todos) / 10_000 - 0.25) < 0.02, "weight 1 of 4: \(todos)")
        // Past what was generated, the payloads repeat in turn and still belong to the action's kind.
        let covered = mix.kinds[1].payloads.count
        #expect(covered >= 10_000 && covered % mix.picks.count == 0)
        for index in covered..<(covered + 500) where mix.kind(of: index) == 1 {
            #expect(try Self.object(mix.payload(of: index))["id"] as? Int == index - covered)
        }
        // Without the run's length (the check before a run), ${seq} numbers the pool.
        let pool = try LoadMix(workload, seed: 3, encode: Self.identity)
        #expect(!pool.kinds[1].perAction && pool.kinds[1].payloads.count == LoadMix.poolSize)
    }

    @Test("a refused payload names the file and the line its [[action]] starts at")
    func refusedPayloadNamesItsLine() throws {
        let workload = try Workload.parse(
            toml: "[[action]]\napp = \"ledger\"\ntype = \"post\"\n\n[[action]]\napp = \"todo\"\ntype = \"addTodo\"\npayload = '{\"titel\": \"x\"}'\n",
            source: "typo.toml")
        do {
            _ = try LoadMix(workload) { app, type, arguments in
                guard app != "todo" else { throw ActionError("todo.addTodo has no field 'titel'") }
                return arguments
            }
            Issue.record("the refused payload was accepted")
        } catch {
            #expect("\(error)".hasPrefix("typo.toml:5: "), "the entry's [[action]] line: \(error)")
            #expect("\(error)".contains("no field 'titel'"), "\(error)")
        }
    }

    @Test("a ramped trial holds its rate when it achieves what its schedule asked for on average")
    func rampedTrialHolds() {
        let schedule = OpenLoopSchedule(rate: 1000, seconds: 3, ramp: 2)
        #expect(abs(schedule.meanRate - 2000.0 / 3) < 0.5, "2,000 actions in 3 s")
        #expect(OpenLoopSchedule(rate: 1000, seconds: 3).meanRate == 1000)
        var log = TrialLog(schedule: schedule)
        log.sent = schedule.count
        var arrivals: [Arrival] = []
        for index in 0..<schedule.count {
            let at = schedule.offset(of: index) + 100_000
            log.acknowledge(index: index, seq: UInt64(index + 1), at: at, sequencedAtNanoseconds: 0)
            arrivals.append(Arrival(version: UInt64(index + 1), at: at))
        }
        var result = Accounting.evaluate(log, subscribers: [arrivals], warmUp: 0, startWall: 0)
        #expect(result.lost == 0 && result.rateAchieved < 700 && abs(result.rateScheduled - schedule.meanRate) < 0.001)
        #expect(BenchSession.held(result, rate: 1000), "667/s is all a 2 s ramp in a 3 s run sends")
        result.rateScheduled = 0
        #expect(!BenchSession.held(result, rate: 1000), "against the full rate it would not hold")
        result.rateScheduled = schedule.meanRate
        result.lost = 1
        #expect(!BenchSession.held(result, rate: 1000), "a loss never holds")
    }

    @Test("a trial whose e2e p99 passes 20 ms did not hold: its queue was growing")
    func slowTrialDoesNotHold() {
        let schedule = OpenLoopSchedule(rate: 1000, seconds: 2)
        func trial(visibleAfter delay: UInt64) -> TrialResult {
            var log = TrialLog(schedule: schedule)
            log.sent = schedule.count
            var arrivals: [Arrival] = []
            for index in 0..<schedule.count {
                let at = schedule.offset(of: index) + delay
                log.acknowledge(index: index, seq: UInt64(index + 1), at: at, sequencedAtNanoseconds: 0)
                arrivals.append(Arrival(version: UInt64(index + 1), at: at))
            }
            return Accounting.evaluate(log, subscribers: [arrivals], warmUp: 0, startWall: 0)
        }
        let quick = trial(visibleAfter: 19_000_000)
        #expect(quick.lost == 0 && quick.e2e.stats.p99Us < 20_000)
        #expect(BenchSession.held(quick, rate: 1000), "19 ms behind is within the limit")
        let slow = trial(visibleAfter: 25_000_000)
        #expect(slow.lost == 0 && slow.rateAchieved >= 950, "everything arrived, at nearly the full rate")
        #expect(!BenchSession.held(slow, rate: 1000), "25 ms behind is a queue, not a held rate")
    }

    static func setup(workload: String?, actions: [String]?, ramp: Double? = nil) -> BenchReport.Setup {
        BenchReport.Setup(
            transport: "ipc", stores: 2, views: 1, clients: 4, codec: "binary", fsync: "batch", payloadBytes: 64, stateItems: 10, durationS: 5,
            warmUpS: 1, workload: workload, rampS: ramp, actions: actions)
    }

    @Test("the report names the workload and its mix; the ledger default keeps its payload and state size")
    func reportNamesTheMix() throws {
        let workload = try Workload.parse(toml: WorkloadTests.mixFile, source: "/tmp/mix.toml")
        #expect(workload.name == "mix.toml" && workload.shares == ["ledger.post 80%", "todo.addTodo 20%"])
        let mixed = BenchReport(
            setup: Self.setup(workload: workload.name, actions: workload.shares, ramp: 2), rateTarget: 2000, result: TrialResult(),
            cpuSeconds: [:], floor: nil, stateUpdateBytes: nil)
        let line = try #require(mixed.table().split(separator: "\n").first)
        #expect(line.contains("workload mix.toml: ledger.post 80%, todo.addTodo 20% (ramp 2 s)"), "\(line)")
        #expect(!line.contains("state 10 items") && !line.contains("payload 64 B"))
        let single = try Workload.single(app: "counter", action: "addTapped", payload: #"{"amount": 1}"#)
        let singleLine = BenchReport(
            setup: Self.setup(workload: single.name, actions: single.shares), rateTarget: 10, result: TrialResult(), cpuSeconds: [:], floor: nil,
            stateUpdateBytes: nil
        ).table()
        #expect(singleLine.contains("workload counter.addTapped, "), "the name says it all: \(singleLine)")
        let ledger = Workload.ledger(stateItems: 10, payloadBytes: 64, probeBytes: 40)
        let ledgerLine = BenchReport(
            setup: Self.setup(workload: ledger.name, actions: ledger.shares), rateTarget: 10, result: TrialResult(), cpuSeconds: [:], floor: nil,
            stateUpdateBytes: nil
        ).table()
        #expect(!ledgerLine.contains("workload") && ledgerLine.contains("payload 64 B") && ledgerLine.contains("state 10 items"))
    }

    @Test("the report tells the journal's own syncs in the run from the dispatcher's status before and after it")
    func journalSyncs() throws {
        func status(syncs: UInt64?, p50: UInt64 = 240, p99: UInt64 = 400, max: UInt64 = 900) -> NodeStatus {
            var status = NodeStatus(role: .dispatcher, pid: 1, uptimeMs: 0, subscribers: 0, rejected: 0)
            if let syncs { (status.journalSyncs, status.journalSyncP50Us, status.journalSyncP99Us, status.journalSyncMaxUs) = (syncs, p50, p99, max) }
            return status
        }
        let syncs = try #require(BenchReport.JournalSyncs(before: status(syncs: 100), after: status(syncs: 350), actions: 1000))
        #expect(syncs == BenchReport.JournalSyncs(syncs: 250, perAction: 0.25, sampled: 350, p50Us: 240, p99Us: 400, maxUs: 900))
        // A dispatcher that had not synced before the run answered without the field: it counts from nothing.
        #expect(BenchReport.JournalSyncs(before: status(syncs: nil), after: status(syncs: 5000), actions: 1000)?.sampled == 1024)
        // No answer before or after the run, no sync in it (fsync none), or no action: nothing to tell.
        #expect(BenchReport.JournalSyncs(before: nil, after: status(syncs: 100), actions: 1000) == nil)
        #expect(BenchReport.JournalSyncs(before: status(syncs: 100), after: nil, actions: 1000) == nil)
        #expect(BenchReport.JournalSyncs(before: status(syncs: 100), after: status(syncs: 100), actions: 1000) == nil)
        #expect(BenchReport.JournalSyncs(before: status(syncs: nil), after: status(syncs: 100), actions: 0) == nil)
        var report = BenchReport(
            setup: Self.setup(workload: "ledger", actions: []), rateTarget: 10, result: TrialResult(), cpuSeconds: [:], floor: nil,
            stateUpdateBytes: nil)
        report.journalSyncs = syncs
        #expect(
            report.table().contains(
                "the journal's own syncs in the run: 250 (0.250 per action); the dispatcher's newest 350 at its end: p50 240 µs, p99 400 µs, max 900 µs"
            ))
        let json = try Self.object(Array(report.json().utf8))
        #expect((json["journal_syncs"] as? [String: Any])?["per_action"] as? Double == 0.25, "\(json)")
    }

    @Test("the stock ledger workload: open the accounts first, then post to accounts spread over them, padded")
    func ledgerDefault() throws {
        let workload = Workload.ledger(stateItems: 100, payloadBytes: 64, probeBytes: 40)
        #expect(workload.prepare == [Workload.Step(app: "ledger", action: "open", arguments: #"{"count":100}"#)])
        #expect(workload.apps == ["ledger"] && workload.mix.map(\.type) == ["post"])
        let mix = try LoadMix(workload, encode: Self.identity)
        var accounts = Set<Int>()
        for index in 0..<2000 {
            let object = try Self.object(mix.payload(of: index))
            accounts.insert(try #require(object["account"] as? Int))
            #expect(object["amount"] as? Int == 1 && (object["memo"] as? String)?.count == 24)
        }
        #expect(accounts.allSatisfy { (0..<100).contains($0) } && accounts.count > 90, "spread over the accounts")
    }

    @Test("--app/--action/--payload: one action; a bad name or payload is refused with the option it came from")
    func single() throws {
        let workload = try Workload.single(app: "poll", action: "voteCast", payload: #"{"option": "${pick a b}"}"#)
        #expect(workload.name == "poll.voteCast" && workload.apps == ["poll"] && workload.prepare.isEmpty)
        #expect(try Workload.single(app: "poll", action: "closed", payload: "").mix[0].payload == .empty)
        #expect(throws: WorkloadError.self) { try Workload.single(app: "poll", action: "vote cast", payload: "{}") }
        do {
            _ = try Workload.single(app: "poll", action: "voteCast", payload: "[1]")
            Issue.record("an array was accepted")
        } catch {
            #expect(error.message.hasPrefix("--payload: ") && error.message.contains("JSON object"), "\(error.message)")
        }
    }

    @Test(
        "more bad files: each error names the line of the offending key",
        arguments: [
            (
                "[[prepare]]\napp = \"ledger\"\naction = \"open\"\n\n[[prepare]]\napp = \"ledger\"\nactoin = \"open\"\n", "w.toml:7:",
                "unknown key 'actoin'"
            ),
            ("# a mix\nduration = 5\n[[action]]\napp = \"a\"\ntype = \"b\"\n", "w.toml:2:", "unknown key 'duration'"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\nweight = -2\n", "w.toml:4:", "weight"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\nweight = 1.5\n", "w.toml:4:", "whole number"),
            ("[load]\nramp_seconds = \"two\"\n[[action]]\napp = \"a\"\ntype = \"b\"\n", "w.toml:2:", "ramp_seconds"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\npayload = '{\"n\": \"${int 1}\"}'\n", "w.toml:4:", "${int LOW HIGH}"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\npayload = '{\"n\": \"${pick}\"}'\n", "w.toml:4:", "at least one word"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\npayload = '{\"n\": 1'\n", "w.toml:4:", "not JSON"),
            ("[[action]]\napp = \"a\"\n", "w.toml:1:", "no 'type'"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\n\n[load\nclients = 2\n", "w.toml:5:", "a table header must end with ]"),
        ])
    func moreBadFiles(text: String, location: String, message: String) {
        WorkloadTests.expectRefused(text, at: location, saying: message)
    }

    @Test("an inline table payload keeps its numbers, booleans, arrays and nested tables")
    func inlineTables() throws {
        let workload = try Workload.parse(
            toml: """
                [[action]]
                app = "shop"
                type = "orderPlaced"
                payload = { qty = 3, price = 2.5, gift = true, tags = ["a", "${pick x y}"], ship = { city = "${pick Oslo Rome}" } }
                """, source: "inline.toml")
        var rng = SplitMix64(seed: 5)
        let object = try Self.object(Array(workload.mix[0].payload.render(seq: 0, using: &rng).utf8))
        #expect(object["qty"] as? Int == 3 && object["price"] as? Double == 2.5 && object["gift"] as? Bool == true)
        let tags = try #require(object["tags"] as? [String])
        #expect(tags.count == 2 && tags[0] == "a" && ["x", "y"].contains(tags[1]))
        #expect(["Oslo", "Rome"].contains((object["ship"] as? [String: Any])?["city"] as? String ?? ""))
    }

    @Test("a --json report reads back as a report: every figure a baseline compares survives the trip")
    func reportRoundTrip() throws {
        var original = WorkloadTests.report(e2eP99: 700, ackP50: 90)
        original.setup.workload = "mix.toml"
        original.setup.actions = ["ledger.post 80%", "todo.addTodo 20%"]
        original.search = [.init(rateTarget: 1000, rateAchieved: 990, lost: 0, e2eP99Us: 700, held: true)]
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let decoded = try decoder.decode(BenchReport.self, from: Data(original.json().utf8))
        #expect(decoded.e2e == original.e2e && decoded.ack == original.ack)
        #expect(decoded.cpuUsPerAction == original.cpuUsPerAction && decoded.maxRate?.rate == 1000)
        #expect(decoded.setup.actions == original.setup.actions && decoded.setup.workload == "mix.toml")
    }

    @Test("a baseline lists every percentile, the CPU per action and the store's refusals, old and new, and holds to its threshold exactly")
    func baselineFigures() throws {
        let old = WorkloadTests.report(e2eP99: 1000)
        let verdict = try Baseline.compare(current: old, baseline: Data(old.json().utf8), source: "same.json", threshold: 0)
        #expect(verdict.figures.count == 10, "ack and e2e at p50, p90, p99, p99.9, CPU per action, and refusals by the store")
        #expect(verdict.regressions.isEmpty, "the same figures are not a regression, even at 0%")
        #expect(verdict.figures.contains { $0.name == "CPU µs per action" && $0.old == $0.new })
        #expect(verdict.text().contains("no regression"))
        // An older report without CPU figures: the comparison leaves CPU out rather than failing.
        var withoutCPU = try #require(try JSONSerialization.jsonObject(with: Data(old.json().utf8)) as? [String: Any])
        withoutCPU["cpu_us_per_action"] = nil
        let trimmed = try JSONSerialization.data(withJSONObject: withoutCPU)
        let partial = try Baseline.compare(current: old, baseline: trimmed, source: "old.json", threshold: 0.1)
        #expect(partial.figures.count == 9 && !partial.figures.contains { $0.name.hasPrefix("CPU") })
        // Faster is never a regression, however large the change.
        let faster = try Baseline.compare(
            current: WorkloadTests.report(e2eP99: 100), baseline: Data(old.json().utf8), source: "old.json", threshold: 0.1)
        #expect(faster.regressions.isEmpty && faster.figures.contains { $0.change < -0.5 })
        #expect(throws: BenchError.self) {
            try Baseline.compare(current: old, baseline: Data("not json".utf8), source: "notes.txt", threshold: 0.1)
        }
    }
}
