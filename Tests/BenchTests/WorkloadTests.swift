import Examples
import FluxCore
import Foundation
import Testing

@testable import Bench

@Suite("Workloads: the mix, its templates, its file, the ramp, accounting per app, baselines")
struct WorkloadTests {
    static let mixFile = """
        [load]
        clients = 4
        rate_per_client = 500
        ramp_seconds = 2

        [[prepare]]
        app = "ledger"
        action = "open"
        payload = '{"count": 100}'

        [[action]]
        app = "ledger"
        type = "post"
        weight = 8
        payload = '{"account": "${int 0 99}", "amount": 1, "memo": "${pick rent food fuel}"}'

        [[action]]
        app = "todo"
        type = "addTodo"
        weight = 2
        payload = { title = "task ${seq}" }
        """

    /// This checkout's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// docs/reference/workload.md's table rows, by section ("load", "prepare", "action"): key and "allowed" cell.
    static func referenceRows() throws -> [(section: String, key: String, allowed: String)] {
        var rows: [(section: String, key: String, allowed: String)] = []
        var section: String?
        for line in try String(contentsOfFile: root + "/docs/reference/workload.md", encoding: .utf8).components(separatedBy: "\n") {
            if line.hasPrefix("## ") {
                let heading = line.dropFirst(3)
                section = heading.hasPrefix("[") ? heading.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) : nil
                continue
            }
            guard let section, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 6 else { continue }
            rows.append((section, cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[4]))
        }
        return rows
    }

    /// A workload with one action and `key = value` in `section`.
    static func accepts(_ section: String, _ key: String, _ value: String) -> Bool {
        let text: String
        switch section {
        case "load": text = "[load]\n\(key) = \(value)\n[[action]]\napp = \"counter\"\ntype = \"incrementTapped\"\n"
        default: text = "[[action]]\napp = \"counter\"\ntype = \"incrementTapped\"\n\(key) = \(value)\n"
        }
        return (try? Workload.parse(toml: text, source: "probe.toml")) != nil
    }

    @Test("docs/reference/workload.md lists every key the workload parser accepts, and no other; each range it states is the parser's")
    func referencePage() throws {
        let rows = try Self.referenceRows()
        var documented: [String: Set<String>] = [:]
        for row in rows { documented[row.section, default: []].insert(row.key) }
        for (table, keys) in Workload.knownKeys where !table.isEmpty {
            #expect(
                documented[table] == Set(keys),
                "workload.md's [\(table)] lists \(documented[table]?.sorted() ?? []); the parser takes \(keys.sorted())")
        }
        #expect(Set(documented.keys) == Set(Workload.knownKeys[""] ?? []), "workload.md's tables: \(documented.keys.sorted())")
        // "A–B" ranges: each bound accepted, one past it refused.
        var ranged: [String] = []
        for row in rows {
            let bounds = row.allowed.split(separator: " ").first.map { $0.split(separator: "–").compactMap { Int($0) } } ?? []
            guard bounds.count == 2 else { continue }
            ranged.append("\(row.section).\(row.key)")
            #expect(
                Self.accepts(row.section, row.key, String(bounds[0])) && Self.accepts(row.section, row.key, String(bounds[1])),
                "\(row.key) at \(bounds)")
            #expect(
                !Self.accepts(row.section, row.key, String(bounds[0] - 1)) && !Self.accepts(row.section, row.key, String(bounds[1] + 1)),
                "\(row.key) past \(bounds)")
        }
        #expect(ranged.sorted() == ["action.weight", "load.clients", "load.ramp_seconds"], "ranges found: \(ranged)")
        #expect(Workload.clientRange == 1...64 && Workload.weightRange == 1...1_000_000 && Workload.rampRange == 0...3600)
        // rate_per_client: above 0, at most 5,000,000.
        let rate = try #require(rows.first { $0.key == "rate_per_client" }).allowed
        #expect(rate == "above 0, at most 5,000,000" && Workload.maxRatePerClient == 5_000_000, "\(rate)")
        #expect(Self.accepts("load", "rate_per_client", "0.5") && Self.accepts("load", "rate_per_client", "5000000"))
        #expect(!Self.accepts("load", "rate_per_client", "0") && !Self.accepts("load", "rate_per_client", "5000001"))
    }

    @Test("deploy/bench/examples-mix.toml, the mix BENCHMARKS.md runs: it parses, and the example apps accept every payload it makes")
    func examplesMix() throws {
        let path = "deploy/bench/examples-mix.toml"
        let workload = try Workload.parse(toml: try String(contentsOfFile: Self.root + "/" + path, encoding: .utf8), source: path)
        #expect(workload.mix.map { "\($0.app).\($0.type)" } == ["ledger.post", "counter.addTapped", "login.usernameChanged"])
        #expect(workload.mix.map(\.weight) == [6, 3, 1])
        #expect(workload.clients == 2 && workload.ratePerClient == 2500 && workload.rampSeconds == 1)
        #expect(workload.prepare == [Workload.Step(app: "ledger", action: "open", arguments: #"{"count":1000}"#)])
        // Every payload its templates make is checked by its app, as the bench does before it starts.
        func encode(_ app: String, _ type: String, _ arguments: [UInt8]) throws -> [UInt8] {
            let example = try #require(Catalog.app(named: app), "no example app '\(app)'")
            return try example.wirePayload(type: type, argumentsJSON: arguments, format: .binary)
        }
        let mix = try LoadMix(workload, encode: encode)
        #expect(mix.kinds.map(\.app) == ["ledger", "counter", "login"] && mix.kinds.allSatisfy { !$0.payloads.isEmpty })
        for step in workload.prepare { _ = try encode(step.app, step.action, Array(step.arguments.utf8)) }
        // The command BENCHMARKS.md gives is the one that reads this file.
        let benchmarks = try String(contentsOfFile: Self.root + "/BENCHMARKS.md", encoding: .utf8)
        #expect(benchmarks.contains("zflux bench --workload \(path)"))
    }

    /// Payload arguments as a JSON object, for looking inside.
    static func object(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("a workload file: [load], [[prepare]] and weighted [[action]]s, payloads as JSON strings or inline tables")
    func parse() throws {
        let workload = try Workload.parse(toml: Self.mixFile, source: "mix.toml")
        #expect(workload.clients == 4 && workload.ratePerClient == 500 && workload.rampSeconds == 2)
        #expect(workload.prepare == [Workload.Step(app: "ledger", action: "open", arguments: #"{"count":100}"#)])
        #expect(workload.mix.map(\.app) == ["ledger", "todo"] && workload.mix.map(\.type) == ["post", "addTodo"])
        #expect(workload.mix.map(\.weight) == [8, 2])
        #expect(workload.apps == ["ledger", "todo"])
        var rng = SplitMix64(seed: 1)
        #expect(workload.mix[1].payload.render(seq: 7, using: &rng) == #"{"title":"task 7"}"#)
    }

    @Test("${pick} words that Swift reads as numbers but JSON does not (nan, inf, 0x10, 007) are strings: every payload is JSON")
    func pickedNonJSONNumbers() throws {
        let words = ["nan", "inf", "-inf", "0x10", "007", "1.", ".5", "+1", "1e5", "-0.25", "3"]
        let template = try PayloadTemplate(json: #"{"v": "${pick \#(words.joined(separator: " "))}"}"#, source: "test", line: nil)
        var rng = SplitMix64(seed: 7)
        var seen = Set<String>()
        for seq in 0..<400 {
            let text = template.render(seq: seq, using: &rng)
            let object = try Self.object(text)
            switch object["v"] {
            case let number as NSNumber where !(object["v"] is String): seen.insert("number \(number)")
            case let string as String: seen.insert(string)
            default: Issue.record("not JSON, or no v: \(text)")
            }
        }
        #expect(seen.isSuperset(of: ["nan", "inf", "-inf", "0x10", "007", "1.", ".5", "+1"]), "\(seen.sorted())")
        #expect(seen.contains { $0.hasPrefix("number") } && !seen.contains("1e5") && !seen.contains("3"), "\(seen.sorted())")
    }

    @Test("templates: ${int A B} stays in its range, ${pick} draws from its words, numbers stay numbers, ${seq} counts")
    func templates() throws {
        let template = try PayloadTemplate(
            json: ##"{"n": "${int -3 4}", "w": "${pick rent food}", "x": "${pick 1 2.5}", "s": "#${seq}: ${int 7 7}", "keep": [true, null, "a"]}"##,
            source: "test", line: nil)
        var rng = SplitMix64(seed: 42)
        var seenN = Set<Int>(), seenW = Set<String>()
        for seq in 0..<500 {
            let object = try Self.object(template.render(seq: seq, using: &rng))
            let n = try #require(object["n"] as? Int)
            #expect((-3...4).contains(n))
            seenN.insert(n)
            seenW.insert(try #require(object["w"] as? String))
            #expect(object["x"] is NSNumber && !(object["x"] is String), "a picked number is a number")
            #expect(object["s"] as? String == "#\(seq): 7")
            #expect((object["keep"] as? [Any])?.count == 3)
        }
        #expect(seenN == Set(-3...4), "every value of the range is drawn")
        #expect(seenW == ["rent", "food"])
        // ${seq} counts from 0; ${seq FIRST} from FIRST, as a number alone or as text.
        let offset = try PayloadTemplate(json: ##"{"id": "${seq 1000}", "name": "user ${seq 1}"}"##, source: "test", line: nil)
        #expect(offset.numbersActions)
        #expect(offset.render(seq: 0, using: &rng) == #"{"id":1000,"name":"user 1"}"#)
        #expect(offset.render(seq: 41, using: &rng) == #"{"id":1041,"name":"user 42"}"#)
        for bad in [#"{"a": "${seq x}"}"#, #"{"a": "${seq 1 2}"}"#, #"{"a": "${seq 99999999999999999999}"}"#] {
            #expect(throws: WorkloadError.self) { try PayloadTemplate(json: bad, source: "test", line: nil) }
        }
    }

    @Test("the same seed draws the same payloads and order; the mix follows the weights")
    func mixIsDeterministicAndWeighted() throws {
        let workload = try Workload.parse(toml: Self.mixFile, source: "mix.toml")
        let encode: (String, String, [UInt8]) -> [UInt8] = { _, _, arguments in arguments }
        let a = try LoadMix(workload, seed: 9, encode: encode), b = try LoadMix(workload, seed: 9, encode: encode)
        #expect(a.picks == b.picks && a.kinds.map(\.payloads) == b.kinds.map(\.payloads))
        let share = Double((0..<10_000).filter { a.kind(of: $0) == 0 }.count) / 10_000
        #expect(abs(share - 0.8) < 0.02, "ledger.post has weight 8 of 10: \(share)")
        #expect(a.kinds[0].payloads.count == LoadMix.poolSize)
    }

    @Test(
        "bad workload files get an error naming the line",
        arguments: [
            ("[load]\nclients = 2\nrate = 5\n", "w.toml:3:", "unknown key 'rate'"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\nweight = 0\n", "w.toml:4:", "weight"),
            (
                "[[action]]\napp = \"a\"\ntype = \"b\"\n\n[[action]]\napp = \"a\"\ntype = \"c\"\npayload = '{\"n\": \"${int 5 1}\"}'\n", "w.toml:8:",
                "LOW ≤ HIGH"
            ),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\npayload = '[1, 2]'\n", "w.toml:4:", "must be a JSON object"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\npayload = '{\"n\": \"${nope}\"}'\n", "w.toml:4:", "unknown template"),
            ("[[action]]\napp = \"a\"\ntype = \"b c\"\n", "w.toml:3:", "not an action name"),
            ("[[action]]\napp = \"a\"\ntype = \"b\"\n[[action]]\napp = \"a\"\ntyp = \"c\"\n", "w.toml:6:", "unknown key 'typ'"),
            ("[[action]]\napp = \"a\"\ntype = = \"b\"\n", "w.toml:3:", "value"),
            ("[= \"x\"]\n", "w.toml:1:", "expected a key"),
            ("[load]\r\nclients = 2\r\n[[ [x] ]]\r\n", "w.toml:3:", "expected a key"),
            ("[load]\r\nclients = 2\r\n[\r\n", "w.toml:3:", "expected a key"),
            // A CR inside a header (found by libFuzzer's workload target): toml++, the parser zflux used
            // before its own, asserted on it, and on the value after it.
            ("[load]\nclients = 2\n[\r[action]]\n", "w.toml:3:", "expected a key"),
            // A byte-order mark, then a header whose name is not UTF-8 (found the same way).
            ("\u{FEFF}[\u{D2}]\n", "w.toml:1:", "expected a key"),
            ("[[action]]\napp =[ }f,\n", "w.toml:2:", "expected a value"),
            ("[load]\nclients = 2\n", "w.toml:", "no [[action]]"),
        ])
    func badFiles(text: String, location: String, message: String) {
        WorkloadTests.expectRefused(text, at: location, saying: message)
    }

    /// `text` is refused as a workload, with an error that starts at `location` and says `message`.
    static func expectRefused(_ text: String, at location: String, saying message: String) {
        do {
            _ = try Workload.parse(toml: text, source: "w.toml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.message.hasPrefix(location), "\(error.message)")
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test("a ramp climbs linearly to the rate: half the actions in the ramp, then the full rate; offsets and due counts agree")
    func ramp() {
        let schedule = OpenLoopSchedule(rate: 1000, seconds: 3, ramp: 2)
        #expect(schedule.count == 2000, "1,000 in the 2 s ramp, then 1,000 in the last second")
        #expect(schedule.offset(of: 0) == 0)
        #expect(schedule.offset(of: 500) == 1_414_213_562, "√(2·2·500/1000) s")
        #expect(schedule.offset(of: 1000) == 2_000_000_000)
        #expect(schedule.offset(of: 1500) == 2_500_000_000)
        for index in stride(from: 0, to: schedule.count, by: 37) {
            let at = schedule.offset(of: index)
            #expect(schedule.dueCount(atElapsed: at) == index + 1, "action \(index) is due at its own offset")
            if at > 0 { #expect(schedule.dueCount(atElapsed: at - 1) == index, "and not a nanosecond before") }
        }
        #expect(OpenLoopSchedule(rate: 1000, seconds: 3, ramp: 0) == OpenLoopSchedule(rate: 1000, seconds: 3), "no ramp: as before")
    }

    @Test("accounting per app: an action counts only in views of its own app's stores; unseen there, it is lost")
    func accountingPerApp() {
        let schedule = OpenLoopSchedule(rate: 1000, count: 4)
        var log = TrialLog(schedule: schedule)
        log.sent = 4
        // Actions 1 and 3 are app a's (kind 0), 2 and 4 app b's (kind 1).
        for index in 0..<4 {
            log.kind[index] = UInt16(index % 2)
            log.acknowledge(index: index, seq: UInt64(index + 1), at: 1_000_000, sequencedAtNanoseconds: 0)
        }
        let apps = (subscribers: ["a", "b"], kinds: ["a", "b"])
        // a's view shows version 3 (its actions 1 and 3); b's view moved to 3 on a heartbeat only, and
        // never saw b's action 4.
        let aView = [Arrival(version: 1, at: 2_000_000), Arrival(version: 3, at: 4_000_000)]
        let bView = [Arrival(version: 2, at: 3_000_000), Arrival(version: 3, at: 4_000_000)]
        let result = Accounting.evaluate(log, subscribers: [aView, bView], apps: apps, warmUp: 0, startWall: 0)
        #expect(result.lost == 1, "b's action 4 was never visible in b's view")
        #expect(result.e2e.count == 3, "each seen action counted once, in its own app's view")
        let perApp = Accounting.evaluate(
            log, subscribers: [aView, bView + [Arrival(version: 4, at: 5_000_000)]], apps: apps, warmUp: 0, startWall: 0)
        #expect(perApp.lost == 0 && perApp.e2e.count == 4)
    }

    static func report(e2eP99: Double, ackP50: Double = 100, samples: Int = 10_000) -> BenchReport {
        var result = TrialResult()
        for _ in 0..<samples {
            result.e2e.record(nanoseconds: UInt64(e2eP99 * 1000))
            result.ack.record(nanoseconds: UInt64(ackP50 * 1000))
        }
        result.sent = 100
        result.acked = 100
        let setup = BenchReport.Setup(
            transport: "ipc", stores: 1, views: 1, clients: 1, codec: "binary", fsync: "batch", payloadBytes: 64, stateItems: 10, durationS: 1,
            warmUpS: 0)
        return BenchReport(setup: setup, rateTarget: 100, result: result, cpuSeconds: ["bench": 0.01], floor: nil, stateUpdateBytes: nil)
    }

    @Test("a baseline catches a regression beyond the threshold and lets noise within it pass")
    func baseline() throws {
        let old = Data(Self.report(e2eP99: 1000).json().utf8)
        let noisy = try Baseline.compare(current: Self.report(e2eP99: 1080), baseline: old, source: "old.json", threshold: 0.1)
        #expect(noisy.regressions.isEmpty, "8% is within 10%")
        let worse = try Baseline.compare(current: Self.report(e2eP99: 1200), baseline: old, source: "old.json", threshold: 0.1)
        #expect(worse.regressions.map(\.name).contains("dispatch → view p99 µs"))
        #expect(!worse.regressions.contains { $0.name.hasPrefix("dispatch → ack") }, "ack did not change")
        #expect(worse.text().contains("REGRESSION"))
        #expect(throws: BenchError.self) {
            try Baseline.compare(current: Self.report(e2eP99: 1), baseline: Data(#"{"hello": 1}"#.utf8), source: "x.json", threshold: 0.1)
        }
    }

    @Test(
        "refusals by the store: counted once per acknowledged action however many views saw them, and a regression where the baseline had none or fewer"
    )
    func storeRefusals() throws {
        var log = TrialLog(schedule: OpenLoopSchedule(rate: 100, seconds: 0.05))
        for index in 0..<5 { log.acknowledge(index: index, seq: UInt64(index + 1), at: 1_000, sequencedAtNanoseconds: 0) }
        let view = ArrivalLog(name: "todo#1")
        view.recordRefusal(seq: 4, reason: "closed")
        view.recordRefusal(seq: 4, reason: "said again")
        #expect(view.refused == [4: "closed"])
        var result = TrialResult()
        // Two views saw seq 2 refused; one also saw seq 4, and seq 9 (not this run's) is left out.
        Accounting.countStoreRefusals(&result, log: log, refusals: [[2: "too low", 9: "other run"], [2: "too low", 4: "closed"]])
        #expect(result.refusedByStore == 2 && result.firstStoreRefusal == "too low")

        var refused = Self.report(e2eP99: 1000)
        refused.refusedByStore = 5
        #expect(refused.table().contains("refused by the store 5") && refused.table().contains("refused by the store: 5 of 100"))
        let none = Data(Self.report(e2eP99: 1000).json().utf8)
        let unexpected = try Baseline.compare(current: refused, baseline: none, source: "old.json", threshold: 0.1)
        #expect(unexpected.regressions.map(\.name) == ["refused by the store, %"], "\(unexpected.text())")
        // A workload that expects refusals keeps its share: 5% then, 5% now, is not a regression; 8% is.
        let expected = try Baseline.compare(current: refused, baseline: Data(refused.json().utf8), source: "old.json", threshold: 0.1)
        #expect(expected.regressions.isEmpty)
        var more = refused
        more.refusedByStore = 8
        #expect(try Baseline.compare(current: more, baseline: Data(refused.json().utf8), source: "old.json", threshold: 0.1).regressions.count == 1)
        // A baseline from before refusals were counted is not compared on them, and the text says so.
        var old = try #require(try JSONSerialization.jsonObject(with: none) as? [String: Any])
        old["refused_by_store"] = nil
        let predates = try Baseline.compare(
            current: refused, baseline: try JSONSerialization.data(withJSONObject: old), source: "old.json", threshold: 0.1)
        #expect(predates.regressions.isEmpty && predates.text().contains("not in the baseline: refused by the store"), "\(predates.text())")
        // Timing, not a regression: 1 refusal in 10,000, then 2 (0.01 percentage points more, under the margin).
        var one = Self.report(e2eP99: 1000), two = one
        (one.acked, one.refusedByStore, two.acked, two.refusedByStore) = (10_000, 1, 10_000, 2)
        #expect(try Baseline.compare(current: two, baseline: Data(one.json().utf8), source: "old.json", threshold: 0.1).regressions.isEmpty)
    }

    @Test(
        "${from APP PATH} picks among the values a path selects in the app's state after the prepare steps: fields, indexes and * over lists and objects; it stands alone, not in a [[prepare]] step, and a path that selects nothing or a list is refused by name"
    )
    func referencesToPreparedState() throws {
        let file = """
            [[prepare]]
            app = "auction"
            action = "openLots"
            payload = '{"count": 3}'

            [[action]]
            app = "auction"
            type = "bid"
            payload = '{"lot": "${from auction lots.*.id}", "amount": "${int 1 9}", "first": "${from auction lots.0.id}"}'
            """
        let workload = try Workload.parse(toml: file, source: "bids.toml")
        #expect(workload.references.map { "\($0.app) \($0.path)" } == ["auction lots.0.id", "auction lots.*.id"], "in key order")
        let state = JSONValue(parsing: Array(#"{"lots":[{"id":"L-7","open":true},{"id":"L-9"},{"id":"L-12"}],"byName":{"b":2,"a":1}}"#.utf8))
        #expect(Workload.select("lots.*.id", in: state) == [.string("L-7"), .string("L-9"), .string("L-12")])
        #expect(Workload.select("lots.1.id", in: state) == [.string("L-9")])
        #expect(Workload.select("byName.*", in: state) == [.number(1), .number(2)])
        #expect(Workload.select("lots.7.id", in: state).isEmpty && Workload.select("nothing.*", in: state).isEmpty)
        var asked: [String] = []
        let resolved = try workload.resolvingReferences { app in
            asked.append(app)
            return state
        }
        #expect(asked == ["auction"], "the state is read once per app")
        #expect(resolved.references.isEmpty)
        var rng = SplitMix64(seed: 1)
        var lots: Set<String> = []
        for seq in 0..<200 {
            let payload = try #require(JSONValue.parse(Data(resolved.mix[0].payload.render(seq: seq, using: &rng).utf8)))
            guard case .object(let fields) = payload, case .string(let lot)? = fields["lot"] else { Issue.record("\(payload)"); continue }
            lots.insert(lot)
            #expect(fields["first"] == .string("L-7"))
        }
        #expect(lots == ["L-7", "L-9", "L-12"], "every lot the prepare steps made is bid on")
        #expect(throws: WorkloadError.self) { try workload.resolvingReferences { _ in JSONValue(parsing: Array(#"{"lots":[]}"#.utf8)) } }
        let list = try Workload.parse(toml: "[[action]]\napp = \"a\"\ntype = \"t\"\npayload = '{\"x\": \"${from a lots}\"}'\n", source: "w.toml")
        #expect(throws: WorkloadError.self) { try list.resolvingReferences { _ in state } }
        for bad in [
            ("[[action]]\napp = \"a\"\ntype = \"t\"\npayload = '{\"x\": \"lot ${from a lots.*.id}\"}'\n", "stands for a whole value"),
            ("[[action]]\napp = \"a\"\ntype = \"t\"\npayload = '{\"x\": \"${from a}\"}'\n", "write ${from APP PATH}"),
            ("[[prepare]]\napp = \"a\"\naction = \"t\"\npayload = '{\"x\": \"${from a b}\"}'\n", "cannot use ${from"),
        ] {
            #expect(throws: WorkloadError.self) { try Workload.parse(toml: bad.0, source: "w.toml") }
            do {
                _ = try Workload.parse(toml: bad.0, source: "w.toml")
            } catch {
                #expect(error.description.contains(bad.1), "\(error)")
            }
        }
    }

    @Test(
        "--max-refused fails a run whose store refused more than that share of its acknowledged actions (1,374 of 1,700 passed before); at or under it, or with nothing counted, it passes"
    )
    func refusalGate() {
        var report = Self.report(e2eP99: 1000)
        (report.acked, report.refusedByStore) = (1_700, 1_374)
        #expect(
            report.refusalGateFailure(maxPercent: 10)
                == "80.8% of the acknowledged actions (1374 of 1700) were refused by the store, more than --max-refused 10%")
        #expect(report.refusalGateFailure(maxPercent: 2.5)?.hasSuffix("more than --max-refused 2.5%") == true)
        #expect(report.refusalGateFailure(maxPercent: 90) == nil)
        (report.acked, report.refusedByStore) = (200, 10)
        #expect(report.refusalGateFailure(maxPercent: 5) == nil, "exactly 5% is within 5%")
        #expect(report.refusalGateFailure(maxPercent: 0) != nil, "0%: any refusal fails")
        report.refusedByStore = nil
        #expect(report.refusalGateFailure(maxPercent: 0) == nil, "a report from before refusals were counted")
    }

    @Test("a percentile with fewer than ten samples beyond it is not compared: a 2 s run's p99.9 is its maximum")
    func baselineNeedsSamples() throws {
        // A new user's trial: 800 samples, p99.9 up 39% from one hiccup, reported as a regression.
        let old = Data(Self.report(e2eP99: 1000, samples: 800).json().utf8)
        let verdict = try Baseline.compare(current: Self.report(e2eP99: 5000, samples: 800), baseline: old, source: "old.json", threshold: 0.1)
        #expect(verdict.skipped == ["dispatch → ack p99", "dispatch → ack p99.9", "dispatch → view p99", "dispatch → view p99.9"])
        #expect(verdict.regressions.map(\.name) == ["dispatch → view p50 µs", "dispatch → view p90 µs"], "what has samples is still judged")
        #expect(verdict.text().contains("not compared, too few samples"))
    }
}
