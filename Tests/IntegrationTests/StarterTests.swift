import FluxTesting
import Foundation
import NodeSupport
import Spawn
import Testing

/// The framework's contract, from outside the tree, as docs/GUIDE.md §6 tells a reader: `zflux new Timer`
/// writes a package that builds against this checkout with the public products only and passes its own
/// tests; the guide's timer (its own code blocks) replaces the starter's sample app, builds and passes
/// the guide's tests; and the package's own binary runs a cluster that §6's commands drive, and that the
/// stock `zflux` reads, dispatches to and benchmarks like any other, and whose own `devtools` page shows
/// the app's catalog, travels in time with its reducer and dispatches its actions.
@Suite("zflux new: a package outside the tree", .serialized, .timeLimit(.minutes(15)))
struct StarterTests {
    /// This checkout: the package the generated one depends on.
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test(
        "new Timer, then GUIDE §6: the starter builds and passes its tests; the guide's timer replaces its sample, builds, passes §5's tests and runs its cluster with its own binary; §6's commands work; the stock zflux dispatches, reads and benches it"
    )
    func newPackage() async throws {
        let guide = try Guide(path: Self.checkout + "/docs/GUIDE.md")
        // Every command §6 shows is one this test runs (with this test's run directory for `.zflux`, and
        // shorter bench runs).
        for command in Self.guideCommands {
            #expect(guide.text.contains(command), "GUIDE.md no longer shows the command this test runs: \(command)")
        }
        // Short paths: the cluster's ipc socket paths must fit in 107 bytes.
        var template = Array("/tmp/zf-new-XXXXXX".utf8CString)
        let scratch = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let package = scratch + "/timer", run = scratch + "/run"

        let new = try zflux(["new", "Timer", "--output", package, "--zflux-path", Self.checkout])
        try #require(new.status == 0, "zflux new: \(new.stderr)")
        #expect(new.stdout.contains("Sources/TimerApp/Timer.swift") && new.stdout.contains(".build/debug/timer cluster up"), "\(new.stdout)")
        let refused = try zflux(["new", "Timer", "--output", package, "--zflux-path", Self.checkout])
        #expect(refused.status != 0 && refused.stderr.contains("is not empty"), "a second new into the same directory: \(refused)")
        // The guide shows main.swift as the starter writes it, and its timer keeps it as it is.
        let main = try String(contentsOfFile: package + "/Sources/timer/main.swift", encoding: .utf8)
        #expect(main == guide.firstBlock(in: "### Your `@main`", info: "swift main"), "GUIDE §6's @main is not the starter's main.swift:\n\(main)")

        // Only the products a team names: no module reached around them.
        let starterImports = try Self.imports(in: package)
        #expect(starterImports.isSubset(of: Self.publicModules), "\(starterImports)")
        let manifest = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        let products = Set(manifest.matches(of: /\.product\(name: "(\w+)"/).map { String($0.1) })
        #expect(products == ["ZFluxCLI", "FluxCore", "FluxWire", "ViewNode", "FluxTesting", "FluxClusterTesting"], "\(products)")

        // It builds in this checkout's own scratch directory, where `swift test` has just built zflux and
        // its dependencies: only the package's own modules are compiled, so the test proves what it
        // proves (it builds against the public products) without compiling the world a second time
        // beside every other suite. The checkout's Package.resolved pins the same versions, so that the
        // shared checkouts stay where they are. `--ignore-lock`: the `swift test` running this test
        // holds the scratch directory's lock until it ends, and has finished building by now.
        let swift = try #require(Self.swiftExecutable, "no swift on PATH")
        let scratchPath = Self.scratchPath
        if let resolved = FileManager.default.contents(atPath: Self.checkout + "/Package.resolved") {
            #expect(FileManager.default.createFile(atPath: package + "/Package.resolved", contents: resolved))
        }
        func swiftPM(_ command: String) async throws -> (result: CommandResult, time: Duration) {
            let started = ContinuousClock.now
            // SwiftPM's lock files go to TMPDIR: into the scratch directory, so that none is left behind.
            // 900 s bounds a hang (the suite's 15 minutes bound the whole test); the build itself compiles
            // only the package's few files.
            let result = try await onThread {
                try runProgram(
                    swift, [command, "--package-path", package, "--scratch-path", scratchPath, "--ignore-lock"], timeout: .seconds(900),
                    environment: ["TMPDIR": scratch])
            }
            return (result, ContinuousClock.now - started)
        }
        /// `swift build`: it must succeed without warnings in the package's own files, compiling nothing of zflux again.
        func build(_ what: String) async throws -> Duration {
            let build = try await swiftPM("build")
            try #require(
                build.result.status == 0,
                "swift build of \(what):\n\(build.result.stdout.suffix(6000))\n\(build.result.stderr.suffix(3000))")
            let output = build.result.stdout + build.result.stderr
            let ownWarnings = output.split(separator: "\n").filter { $0.contains(package + "/Sources") && $0.contains("warning:") }
            #expect(ownWarnings.isEmpty, "\(what) builds without warnings: \(ownWarnings)")
            // Nothing of zflux or its dependencies was compiled again: only the package's own modules.
            // ("plugin": SwiftPM compiles the package plugins' manifests, argument-parser's, on every new root.)
            let compiled = Set(output.matches(of: #/\] Compiling (\w+) /#).map { String($0.1) })
            #expect(compiled.isSubset(of: ["TimerApp", "timer", "plugin"]), "compiled again beside the package's own modules: \(compiled.sorted())")
            return build.time
        }
        func test(_ what: String, passing tests: [String]) async throws -> Duration {
            let test = try await swiftPM("test")
            #expect(
                test.result.status == 0 && tests.allSatisfy { test.result.stdout.contains("\($0) passed") },
                "swift test of \(what):\n\(test.result.stdout.suffix(6000))\n\(test.result.stderr.suffix(3000))")
            return test.time
        }

        // GUIDE §6, "The starter": the package as written, with its sample app (a tally named Timer).
        let starterBuild = try await build("the starter")
        let starterTest = try await test("the starter", passing: ["Suite \"Timer\"", "Suite \"Timer in a cluster\"", "Suite \"Timer's middleware\""])

        // "Your timer in the package": the three files, made of the guide's own code blocks as it says.
        let app = try ["## 1. ", "## 2. ", "## 3. ", "## 4. "].map { try #require(guide.firstBlock(in: $0, info: "swift"), "no code in \($0)") }
        #expect(app.first?.hasPrefix("import FluxCore\n") == true, "§1's block starts with the file's one import")
        let screen = try #require(guide.firstBlock(in: "### Your screen", info: "swift"), "no screen in GUIDE §6")
        let tests = guide.blocks(in: "## 5. ").filter { $0.info == "swift" }.map(\.code)
        #expect(tests.count == 2, "GUIDE §6 tells of §5's two code blocks: \(tests.count)")
        try app.joined(separator: "\n").write(toFile: package + "/Sources/TimerApp/Timer.swift", atomically: true, encoding: .utf8)
        try screen.write(toFile: package + "/Sources/TimerApp/TimerScreen.swift", atomically: true, encoding: .utf8)
        try (["import TimerApp\n"] + tests).joined(separator: "\n").write(
            toFile: package + "/Tests/TimerAppTests/TimerTests.swift", atomically: true, encoding: .utf8)
        let timerImports = try Self.imports(in: package)
        #expect(timerImports.isSubset(of: Self.publicModules), "\(timerImports)")
        let timerBuild = try await build("the guide's timer")
        let timerTest = try await test("the guide's timer", passing: ["Test countsDownAndStops()", "Test timerInACluster()"])
        let timing =
            "the starter's first swift build took \(Self.seconds(starterBuild)), its swift test \(Self.seconds(starterTest)); "
            + "with the guide's timer, swift build \(Self.seconds(timerBuild)), swift test \(Self.seconds(timerTest))"
        FileHandle.standardError.write(Data("StarterTests: \(timing)\n".utf8))
        let clusterStarted = ContinuousClock.now

        // "Your @main": its cluster, run by its own binary, and the guide's countdown of three seconds.
        let timer = scratchPath + "/debug/timer"
        let cluster = try OwnCluster(binary: timer, config: package + "/cluster.toml", runDir: run)
        defer { cluster.stop() }
        try await cluster.waitUntilReady()
        let reset = try runProgram(timer, ["dispatch", "timer", "resetTapped", #"{"seconds":3}"#, "--run-dir", run])
        #expect(reset.status == 0 && reset.stdout == "1\n", "\(reset)")
        let start = try runProgram(timer, ["dispatch", "timer", "startTapped", "--run-dir", run])
        #expect(start.status == 0 && start.stdout == "2\n", "\(start)")
        // Three ticks, each an action the effect sent back through the dispatcher: seqs 3, 4 and 5.
        let stopped = try await Self.state(run, version: 5)
        #expect(stopped == TimerState(remaining: 0, isRunning: false), "\(stopped)")
        let travel = try runProgram(timer, ["state", "timer", "--at", "3", "--run-dir", run])
        #expect(travel.status == 0 && travel.stdout == #"{"version":3,"state":{"isRunning":true,"remaining":2}}"# + "\n", "\(travel)")
        #expect(guide.text.contains("$ .build/debug/timer state timer --at 3\n" + travel.stdout), "GUIDE §6 shows what state --at 3 prints")
        let apps = try runProgram(timer, ["apps"])
        #expect(
            apps.status == 0 && ["startTapped", "pauseTapped", "resetTapped", #"{"seconds":90}"#, "ticked"].allSatisfy(apps.stdout.contains),
            "\(apps)")
        let simulating = ContinuousClock.now
        let simulated = try runProgram(timer, ["simulate", "--seeds", "100"], timeout: .seconds(300))
        let simulation = ContinuousClock.now - simulating
        #expect(simulated.status == 0 && simulated.stdout.contains("every invariant held"), "\(simulated)")

        // The stock zflux hosts no timer app: it sends JSON arguments, and the dispatcher judges them. An
        // action only the app's effects send is refused from a client (GUIDE §4), and takes no seq.
        let ticked = try zflux(["dispatch", "timer", "ticked", "--run-dir", run])
        #expect(ticked.status == 1 && ticked.stdout.isEmpty && ticked.stderr.contains("sent by the app's effects only"), "\(ticked)")
        let stockReset = try zflux(["dispatch", "timer", "resetTapped", #"{"seconds":10}"#, "--run-dir", run])
        #expect(stockReset.status == 0 && stockReset.stdout == "6\n", "\(stockReset)")
        let zero = try zflux(["dispatch", "timer", "resetTapped", #"{"seconds":0}"#, "--run-dir", run])
        #expect(
            zero.status == 1 && zero.stderr.contains("a timer needs at least 1 second"), "the app's validate, judged by the dispatcher: \(zero)")
        let state = try await Self.state(run, version: 6)
        #expect(state == TimerState(remaining: 10, isRunning: false), "\(state)")
        let stock = try zflux(["state", "timer", "--run-dir", run])
        let own = try runProgram(timer, ["state", "timer", "--run-dir", run])
        #expect(stock.status == 0 && own.status == 0 && stock.stdout == own.stdout, "stock: \(stock)\nown: \(own)")
        // The journal too: the ticks are binary payloads, which the stock zflux reads without their type.
        let stockDump = try zflux(["journal", "dump", "--run-dir", run])
        let ownDump = try runProgram(timer, ["journal", "dump", "--run-dir", run])
        #expect(stockDump.status == 0 && stockDump.stdout == ownDump.stdout, "stock: \(stockDump)\nown: \(ownDump)")
        #expect(stockDump.stdout.split(separator: "\n").count { $0.contains(#""type":"ticked""#) } == 3, "\(stockDump.stdout)")
        // What runs the app's reducer needs the app: the stock zflux refuses time travel, a session
        // export and `view --history`, says why in one line and writes nothing; the package's own binary
        // exports the session.
        let stockTravel = try zflux(["state", "timer", "--at", "3", "--run-dir", run])
        #expect(
            stockTravel.status == 1 && stockTravel.stderr.split(separator: "\n").count == 1 && stockTravel.stderr.contains("timer"),
            "\(stockTravel)")
        let stockExport = try zflux(["journal", "export", "--run-dir", run, "-o", scratch + "/stock-session.json"])
        #expect(stockExport.status == 1 && stockExport.stderr.split(separator: "\n").count == 1, "\(stockExport)")
        #expect(
            stockExport.stderr.contains("store 'timer' (app 'timer')") && stockExport.stderr.contains("the binary that runs the cluster"),
            "\(stockExport)")
        #expect(!FileManager.default.fileExists(atPath: scratch + "/stock-session.json"))
        let stockHistory = try zflux(["view", "timer", "--history", "--run-dir", run])
        #expect(stockHistory.status == 1 && stockHistory.stderr.contains("does not host that app"), "\(stockHistory)")
        let ownExport = try runProgram(timer, ["journal", "export", "--run-dir", run, "-o", scratch + "/session.json"])
        let session = FileManager.default.contents(atPath: scratch + "/session.json").flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        let sessionStores = (session?["stores"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(ownExport.status == 0 && sessionStores == ["timer"], "\(ownExport)")

        // The stock zflux follows the cluster too: `view --json` prints the state exactly as the package's
        // own `view timer` does when it is not on a terminal, `tail --json` the actions, `status` every
        // node. The followers run until stopped.
        let stockView = try Follower(zfluxBinary, ["view", "timer", "--json", "--run-dir", run])
        defer { #expect(stockView.stop(), "zflux view ends cleanly on SIGTERM: \(stockView.stderr)") }
        let ownView = try Follower(timer, ["view", "timer", "--run-dir", run])
        defer { #expect(ownView.stop(), "timer view ends cleanly on SIGTERM: \(ownView.stderr)") }
        let stockTail = try Follower(zfluxBinary, ["tail", "--json", "--run-dir", run])
        defer { #expect(stockTail.stop(), "zflux tail ends cleanly on SIGTERM: \(stockTail.stderr)") }
        let viewed = try await Self.sameView(stock: stockView, own: ownView, version: 6)
        #expect(viewed == TimerState(remaining: 10, isRunning: false), "\(viewed)")
        let status = try zflux(["status", "--run-dir", run])
        let nodes = status.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(status.status == 0 && nodes.count == 2, "\(status)")
        #expect(nodes.contains { $0["role"] as? String == "dispatcher" && ($0["head"] as? Int ?? 0) >= 6 }, "\(status.stdout)")
        #expect(
            nodes.contains { $0["role"] as? String == "store" && $0["name"] as? String == "timer" && $0["app"] as? String == "timer" },
            "\(status.stdout)")

        // "Load-testing your own actions": the stock bench drives the app's own action on the running
        // cluster, with the guide's payload template.
        let bench = try await onThread {
            try zflux(
                [
                    "bench", "--attach", "--run-dir", run, "--app", "timer", "--action", "resetTapped", "--payload",
                    #"{"seconds":"${int 1 3600}"}"#, "--rate", "500", "--duration", "2", "--warm-up", "0.5", "--json",
                ], timeout: .seconds(120))
        }
        #expect(bench.status == 0, "zflux bench --attach --app timer: \(bench.stderr)")
        if bench.status == 0 {
            let report = try #require(try JSONSerialization.jsonObject(with: Data(bench.stdout.utf8)) as? [String: Any], "\(bench.stdout)")
            #expect(report["lost"] as? Int == 0, "\(bench.stdout)")
            let acked = report["acked"] as? Int ?? 0
            #expect(acked > 0 && report["sent"] as? Int == acked, "\(bench.stdout)")
            for latency in ["e2e", "ack"] {
                let stats = report[latency] as? [String: Any] ?? [:]
                for percentile in ["p50_us", "p99_us", "p999_us"] {
                    #expect((stats[percentile] as? Double ?? 0) > 0, "\(latency).\(percentile) in \(bench.stdout)")
                }
            }
            // Every acknowledged reset reached the store, and none started the timer.
            let after = try await Self.state(run, version: 6 + UInt64(acked))
            #expect(!after.isRunning && (1...3600).contains(after.remaining), "\(after)")

            // The stock tail saw the bench's resets (so it is subscribed by now); a reset the package's own
            // binary sends goes as binary, which the stock tail reads without the app's types.
            try await eventually("the stock tail to show the bench's resets", timeout: .seconds(60)) {
                stockTail.lines.contains { Self.tailed($0, seq: nil) }
            }
            let seq = 7 + UInt64(acked)
            let ownReset = try runProgram(timer, ["dispatch", "timer", "resetTapped", #"{"seconds":10}"#, "--run-dir", run])
            #expect(ownReset.status == 0 && ownReset.stdout == "\(seq)\n", "\(ownReset)")
            do {
                try await eventually("the stock tail to show seq \(seq)", timeout: .seconds(60)) {
                    stockTail.lines.contains { Self.tailed($0, seq: seq) }
                }
            } catch {
                Issue.record("zflux tail --json printed: \(stockTail.lines.suffix(3))")
                throw error
            }
            // Both views followed every update to the last, and print it alike.
            let last = try await Self.sameView(stock: stockView, own: ownView, version: seq)
            #expect(last == TimerState(remaining: 10, isRunning: false), "\(last)")
        }

        // Actions the dispatcher refuses fail the run, with the app's reason, and are never a baseline.
        let refusedRun = try await onThread {
            try zflux(
                [
                    "bench", "--attach", "--run-dir", run, "--app", "timer", "--action", "resetTapped", "--payload", #"{"seconds":0}"#,
                    "--duration", "1", "--warm-up", "0.2", "--rate", "200",
                ], timeout: .seconds(120))
        }
        #expect(refusedRun.status == 3 && refusedRun.stderr.contains("a timer needs at least 1 second"), "\(refusedRun)")

        // The package's own devtools: the page's catalog is the app's, its time travel runs the app's
        // reducer, and its form dispatches the app's own action, which the store applies.
        let devtools = try DevtoolsProcess(runDir: run, binary: timer)
        defer { devtools.stop() }
        let page = try WebSocketClient(port: devtools.port, origin: "http://127.0.0.1:\(devtools.port)")
        let pageDeadline = ContinuousClock.now + .seconds(60)
        let hello = try #require(page.receiveJSON(until: pageDeadline) { $0["kind"] as? String == "hello" })
        let catalog = (hello["apps"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "timer" }
        let types = (catalog?["actions"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? String }
        #expect(types.contains("resetTapped") && types.contains("ticked"), "the page's catalog: \(hello)")
        func timerState(at seq: Int, id: Int) -> [String: Any]? {
            page.send(#"{"op":"at","id":\#(id),"seq":\#(seq),"token":"\#(devtools.token)"}"#)
            let answer = page.receiveJSON(until: ContinuousClock.now + .seconds(60)) { ($0["id"] as? Int) == id }
            return (answer?["stores"] as? [[String: Any]])?.first { $0["name"] as? String == "timer" }?["state"] as? [String: Any]
        }
        let third = timerState(at: 3, id: 1)
        #expect(third?["remaining"] as? Int == 2 && third?["isRunning"] as? Bool == true, "the page at seq 3: \(third ?? [:])")
        page.send(#"{"op":"dispatch","id":2,"app":"timer","type":"resetTapped","arguments":"{\"seconds\":42}","token":"\#(devtools.token)"}"#)
        let dispatched = page.receiveJSON(until: ContinuousClock.now + .seconds(60)) { ($0["id"] as? Int) == 2 }
        #expect(dispatched?["outcome"] as? String == "ack", "the page's dispatch: \(dispatched ?? [:])")
        if let seq = dispatched?["seq"] as? Int {
            #expect(timerState(at: seq, id: 3)?["remaining"] as? Int == 42)
            let live = try await Self.state(run, version: UInt64(seq))
            #expect(live == TimerState(remaining: 42, isRunning: false), "\(live)")
        }
        devtools.stop()

        // SIGTERM: the followers end, the supervisor exits cleanly, and no node and no socket file is left.
        for follower in [stockView, ownView, stockTail] { #expect(follower.stop(), "\(follower.arguments): \(follower.stderr)") }
        cluster.stop()

        // The guide's workload file, run by the package's own binary on a cluster of its own, then
        // compared with that run as a baseline: the comparison is printed, and a regression (the second
        // run is as short, on a busy machine) exits 1, which is the gate working.
        let workload = try #require(guide.firstBlock(after: "A workload file is a weighted mix", info: "toml"), "no workload in GUIDE §6")
        try workload.write(toFile: package + "/mix.toml", atomically: true, encoding: .utf8)
        let short = ["--duration", "0.5", "--warm-up", "0.2"]
        let benching = ContinuousClock.now
        let today = try await onThread {
            try runProgram(timer, ["bench", "--workload", package + "/mix.toml", "--json"] + short, timeout: .seconds(120))
        }
        #expect(today.status == 0, "timer bench --workload mix.toml --json: \(today.stderr)")
        let todayReport = try? JSONSerialization.jsonObject(with: Data(today.stdout.utf8)) as? [String: Any]
        #expect(todayReport?["lost"] as? Int == 0 && (todayReport?["acked"] as? Int ?? 0) > 0, "\(today.stdout)")
        #expect(FileManager.default.createFile(atPath: package + "/today.json", contents: Data(today.stdout.utf8)))
        let compared = try await onThread {
            try runProgram(
                timer, ["bench", "--workload", package + "/mix.toml", "--baseline", package + "/today.json", "--regression", "10%"] + short,
                timeout: .seconds(120))
        }
        #expect(
            (compared.status == 0 || compared.status == 1) && compared.stdout.contains("compared with \(package)/today.json"),
            "timer bench --workload mix.toml --baseline today.json: \(compared)")
        let phases =
            "its cluster and the commands took \(Self.seconds(benching - clusterStarted)) (simulate \(Self.seconds(simulation))), "
            + "the two workload benches \(Self.seconds(ContinuousClock.now - benching))"
        FileHandle.standardError.write(Data("StarterTests: \(phases)\n".utf8))
    }

    /// The commands of GUIDE §6 that this test runs, as the guide shows them.
    static let guideCommands = [
        "zflux new Timer --output timer --zflux-path /path/to/zflux\ncd timer\nswift build\nswift test\n",
        ".build/debug/timer cluster up --config cluster.toml\n",
        "$ .build/debug/timer dispatch timer resetTapped '{\"seconds\":3}'\n1\n$ .build/debug/timer dispatch timer startTapped\n2\n",
        "$ .build/debug/timer view timer\n$ .build/debug/timer apps\n$ .build/debug/timer simulate --seeds 100\n",
        "`zflux dispatch timer resetTapped '{\"seconds\":10}'`",
        "zflux bench --attach --run-dir .zflux --app timer --action resetTapped --payload '{\"seconds\":\"${int 1 3600}\"}' --rate 500\n",
        ".build/debug/timer bench --workload mix.toml --json > today.json\n",
        ".build/debug/timer bench --workload mix.toml --baseline today.json --regression 10%\n",
    ]

    /// The modules a package may import: its own, zflux's products, and the toolchain's.
    static let publicModules: Set<String> = [
        "TimerApp", "ZFluxCLI", "FluxCore", "FluxWire", "ViewNode", "FluxTesting", "FluxClusterTesting", "Foundation", "Testing",
    ]

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.0f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// The timer's state as the test knows it (the test does not link the generated package).
    struct TimerState: Decodable, Equatable, CustomStringConvertible {
        var remaining: Int
        var isRunning: Bool
        var description: String { "\(remaining) s, \(isRunning ? "running" : "stopped")" }
    }

    /// Polls the stock `zflux state timer` until the store reports `version` (bounded).
    static func state(_ run: String, version: UInt64) async throws -> TimerState {
        var last = "", state: TimerState? = nil
        do {
            try await eventually("store timer to reach version \(version)", timeout: .seconds(30), interval: .milliseconds(50)) {
                let result = try zflux(["state", "timer", "--run-dir", run])
                last = result.stdout + result.stderr
                guard result.status == 0, let reply = try? JSONDecoder().decode(StateReply<TimerState>.self, from: Data(result.stdout.utf8)) else {
                    return false
                }
                if reply.version == version { state = reply.state }
                return reply.version >= version
            }
        } catch {
            Issue.record("last answer: \(last)")
            throw error
        }
        return try #require(state, "store timer went past version \(version): \(last)")
    }

    /// Waits (bounded) until both views print the state at `version`, and checks that the stock
    /// `view --json` prints it exactly as the package's own `view`, off a terminal, does.
    static func sameView(stock: Follower, own: Follower, version: UInt64) async throws -> TimerState {
        let prefix = #"{"store":"timer","version":\#(version),"connection":"live","state":"#
        func line(_ follower: Follower) -> String? { follower.lines.last { $0.hasPrefix(prefix) } }
        do {
            try await eventually("both views to show version \(version)", timeout: .seconds(30), interval: .milliseconds(50)) {
                line(stock) != nil && line(own) != nil
            }
        } catch {
            Issue.record("zflux view: \(stock.lines.suffix(3)) \(stock.stderr)\ntimer view: \(own.lines.suffix(3)) \(own.stderr)")
            throw error
        }
        let (stockLine, ownLine) = (line(stock) ?? "", line(own) ?? "")
        #expect(stockLine == ownLine, "zflux view --json: \(stockLine)\ntimer view: \(ownLine)")
        struct Update: Decodable { var state: TimerState }
        return try JSONDecoder().decode(Update.self, from: Data(stockLine.utf8)).state
    }

    /// Whether `line` of `tail --json` is a timer reset (of `seq`, when given).
    static func tailed(_ line: String, seq: UInt64?) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["app"] as? String == "timer", object["type"] as? String == "resetTapped",
            let payload = object["payload"] as? [String: Any]
        else { return false }
        let arguments = payload["resetTapped"] as? [String: Any] ?? payload
        return arguments["seconds"] as? Int != nil && (seq == nil || object["seq"] as? Int == seq.map(Int.init))
    }

    /// The modules the package's Swift sources import.
    static func imports(in package: String) throws -> Set<String> {
        var modules: Set<String> = []
        for folder in ["Sources", "Tests"] {
            let root = package + "/" + folder
            let files = try #require(FileManager.default.enumerator(atPath: root), "cannot list \(root)")
            for case let file as String in files where file.hasSuffix(".swift") {
                for line in try String(contentsOfFile: root + "/" + file, encoding: .utf8).split(separator: "\n") {
                    if let match = line.wholeMatch(of: /\s*(?:@\w+\s+)?import\s+(\w+).*/) { modules.insert(String(match.1)) }
                }
            }
        }
        return modules
    }

    /// The scratch directory this test bundle was built in (it holds workspace-state.json): the
    /// checkout's `.build`, or the one `swift test --scratch-path` named.
    static let scratchPath: String = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("workspace-state.json").path) { return directory.path }
            directory.deleteLastPathComponent()
        }
        return checkout + "/.build"
    }()

    /// The `swift` on PATH: the toolchain running these tests builds the generated package too.
    static let swiftExecutable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { $0 + "/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
}

/// docs/GUIDE.md's fenced code blocks, found the way §6 tells a reader to find them: by section.
struct Guide {
    let text: String
    private let lines: [Substring]

    init(path: String) throws {
        text = try String(contentsOfFile: path, encoding: .utf8)
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// The blocks (info string and code, with a final newline) of the section whose heading line starts
    /// with `heading` (`## 5. `, `### Your screen`), up to the next heading of its level or above.
    func blocks(in heading: String) -> [(info: String, code: String)] {
        guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }) else { return [] }
        let level = heading.prefix { $0 == "#" }.count
        return Self.blocks(in: lines[(start + 1)...]) { line in
            let hashes = line.prefix { $0 == "#" }.count
            return hashes > 0 && hashes <= level && line.dropFirst(hashes).hasPrefix(" ")
        }
    }

    /// The first block of the section `heading` whose info string is `info`.
    func firstBlock(in heading: String, info: String) -> String? { blocks(in: heading).first { $0.info == info }?.code }

    /// The first block with the info string `info` after the first line that starts with `text`.
    func firstBlock(after text: String, info: String) -> String? {
        guard let start = lines.firstIndex(where: { $0.hasPrefix(text) }) else { return nil }
        return Self.blocks(in: lines[(start + 1)...]) { _ in false }.first { $0.info == info }?.code
    }

    /// The fenced blocks of `lines`, until a line outside any block for which `ends` is true.
    private static func blocks(in lines: ArraySlice<Substring>, until ends: (Substring) -> Bool) -> [(info: String, code: String)] {
        var blocks: [(info: String, code: String)] = []
        var open: (info: String, code: [Substring])?
        for line in lines {
            if var block = open {
                if line == "```" {
                    blocks.append((block.info, block.code.map { $0 + "\n" }.joined()))
                    open = nil
                } else {
                    block.code.append(line)
                    open = block
                }
            } else if line.hasPrefix("```") {
                open = (String(line.dropFirst(3)), [])
            } else if ends(line) {
                break
            }
        }
        return blocks
    }
}

/// `cluster up` run by a package's own binary, with this test process as the supervisor's parent:
/// should the test die, the cluster stops by itself. `stop()` checks nothing is left behind.
final class OwnCluster {
    let runDir: String
    let process: ChildProcess
    private var nodePids: [String: Int32] = [:]
    private var nodeStarts: [String: UInt64] = [:]
    private var stopped = false

    init(binary: String, config: String, runDir: String) throws {
        self.runDir = runDir
        try FileManager.default.createDirectory(atPath: runDir, withIntermediateDirectories: true)
        let log = runDir + "/cluster-up.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process = try ChildProcess(
            executable: binary,
            arguments: ["cluster", "up", "--config", config, "--run-dir", runDir, "--supervisor-pid", String(getpid()), "--log-level", "notice"],
            output: .discarded, errors: .appended(to: log))
    }

    /// Waits (bounded) for the supervisor's word that start-up is over, and every node's pid.
    func waitUntilReady() async throws {
        do {
            try await eventually("the cluster to come up", timeout: .seconds(30), interval: .milliseconds(50)) {
                guard process.isRunning else { throw NodeError("cluster up ended with \(process.termination.map { "\($0)" } ?? "?")") }
                let up = (try? String(contentsOfFile: runDir + "/cluster-up.log", encoding: .utf8))?.contains("cluster up in") == true
                nodePids = readPids()
                nodeStarts = nodePids.compactMapValues(processStartTime)
                return up && nodePids.count == 2
            }
        } catch {
            Issue.record("\(error): \(logs())")
            throw error
        }
    }

    private func readPids() -> [String: Int32] {
        let directory = RunDirectory(runDir).pidDirectory
        var pids: [String: Int32] = [:]
        for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            if let text = try? String(contentsOfFile: directory + "/" + file, encoding: .utf8), let pid = Int32(text) { pids[file] = pid }
        }
        return pids
    }

    func logs() -> String {
        let directory = RunDirectory(runDir).logDirectory
        let files =
            [runDir + "/cluster-up.log"] + ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).map { directory + "/" + $0 }
        return files.map { "\n== \($0)\n" + ((try? String(contentsOfFile: $0, encoding: .utf8)) ?? "") }.joined()
    }

    /// SIGTERM to the supervisor; then it must have exited 0, every node be gone and no socket file be left.
    func stop() {
        guard !stopped else { return }
        stopped = true
        for (name, pid) in readPids() where !nodePids.values.contains(pid) {
            nodePids[name + "#\(pid)"] = pid
            nodeStarts[name + "#\(pid)"] = processStartTime(pid)
        }
        if !process.stop(grace: .seconds(20)) { Issue.record("cluster up ignored SIGTERM for 20 s: \(logs().suffix(3000))") }
        #expect(process.termination == .exited(0), "cluster up exit: \(logs())")
        for (name, pid) in nodePids { #expect(waitUntilGone(pid, startedAt: nodeStarts[name]), "\(name) (pid \(pid)) outlived the cluster") }
        let sockets = ((try? FileManager.default.contentsOfDirectory(atPath: runDir)) ?? []).filter { $0.hasSuffix(".sock") }
        #expect(sockets.isEmpty, "socket files left behind: \(sockets)")
    }

    deinit { stop() }
}

/// What `zflux new` writes without a checkout to depend on, and the names it refuses (nothing is built).
@Suite("zflux new: the placeholder dependency and bad names")
struct StarterNamesTests {
    @Test("without --zflux-path, Package.swift names zflux by its repository URL and a version, and the README explains the placeholder")
    func placeholder() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("zf-new-poll-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let package = scratch + "/poll"
        let new = try zflux(["new", "Poll", "--output", package])
        try #require(new.status == 0, "\(new)")
        #expect(new.stdout.contains("point Package.swift at your zflux first"), "\(new.stdout)")
        let manifest = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        let dependency = try #require(
            manifest.firstMatch(of: /\.package\(url: "(https:\/\/[^"]+\/zflux)", from: "(\d+\.\d+\.\d+)"\)/), "\(manifest)")
        #expect(!manifest.contains(".package(name: \"zflux\", path:"), "no local checkout: \(manifest)")
        // A host under .invalid, a name reserved never to resolve: a build left on the placeholder fails
        // instead of fetching whatever someone else publishes under a real name.
        #expect(dependency.1.hasPrefix("https://zflux.example.invalid/"), "\(dependency.1)")
        #expect(manifest.contains(#"name: "Poll""#) && manifest.contains(#"name: "poll""#), "\(manifest)")
        for file in [
            "Sources/PollApp/Poll.swift", "Sources/PollApp/PollScreen.swift", "Sources/poll/main.swift", "Tests/PollAppTests/PollTests.swift",
        ] {
            #expect(FileManager.default.fileExists(atPath: package + "/" + file), "\(file)")
        }
        let readme = try String(contentsOfFile: package + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Where zflux comes from").dropFirst().first, "\(readme)")
        #expect(section.contains("placeholder") && section.contains(String(dependency.0)), "the README shows the line it means: \(section)")
        #expect(section.contains("Replace the URL and version") && section.contains("--zflux-path"), "and how to replace it: \(section)")
    }

    @Test(
        "the starter's Makefile has zflux's dist target for the team's own binary: a release build with the Swift runtime linked in, packed as APP-VERSION-linux-ARCH.tar.gz, and a dist-test that runs it under env -i and checks ldd (make -n: the release build itself is make dist's in zflux's CI)"
    )
    func makefileDist() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("zf-new-dist-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let package = scratch + "/poll"
        let new = try zflux(["new", "Poll", "--output", package])
        try #require(new.status == 0, "\(new)")
        #expect(new.stdout.contains("Makefile"), "\(new.stdout)")
        let makefile = try String(contentsOfFile: package + "/Makefile", encoding: .utf8)
        #expect(makefile.contains("APP     := poll") && makefile.contains("env -i dist/check/$(DIST)/bin/$(APP) --version"), "\(makefile)")
        #expect(try String(contentsOfFile: package + "/.gitignore", encoding: .utf8).contains("dist/"))
        #expect(try String(contentsOfFile: package + "/README.md", encoding: .utf8).contains("make dist"))
        let make = try #require(which("make"), "no make on PATH")
        let dryRun = try runProgram(make, ["-n", "-C", package, "dist", "VERSION=1.2.3"])
        #expect(dryRun.status == 0, "\(dryRun)")
        #expect(dryRun.stdout.contains("swift build -c release --static-swift-stdlib --product poll"), "\(dryRun.stdout)")
        #expect(dryRun.stdout.contains("dist/poll-1.2.3-linux-"), "\(dryRun.stdout)")
        let check = try runProgram(make, ["-n", "-C", package, "dist-test", "VERSION=1.2.3"])
        #expect(check.status == 0 && check.stdout.contains("ldd dist/check/poll-1.2.3-linux-"), "\(check)")
    }

    @Test("a --zflux-path with control characters is escaped in every generated file, and the manifest still parses")
    func controlCharactersInPath() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("zf-new-cr-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let package = scratch + "/poll"
        // A checkout's path with a carriage return, a tab, an escape and a delete in it.
        let checkout = scratch + "/a\rb\tc\u{1B}d\u{7F}e"
        try FileManager.default.createDirectory(atPath: checkout, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: checkout + "/Package.swift", contents: Data()))
        let new = try zflux(["new", "Poll", "--output", package, "--zflux-path", checkout])
        try #require(new.status == 0, "\(new)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: package).filter {
            !$0.hasPrefix(".") && FileManager.default.contents(atPath: package + "/" + $0).map { !$0.isEmpty } == true
        }
        #expect(files.contains("Package.swift") && files.contains("README.md"), "\(files)")
        for file in files {
            let bytes = try #require(FileManager.default.contents(atPath: package + "/" + file))
            let raw = bytes.filter { ($0 < 0x20 && $0 != 0x0A) || $0 == 0x7F }
            #expect(raw.isEmpty, "\(file) holds raw control characters: \(Array(Set(raw)))")
        }
        let manifest = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        #expect(manifest.contains(#"/a\rb\tc\u{1B}d\u{7F}e")"#), "\(manifest)")
        let readme = try String(contentsOfFile: package + "/README.md", encoding: .utf8)
        #expect(readme.contains(#"/a\u{D}b\u{9}c\u{1B}d\u{7F}e`"#), "\(readme)")
        // SwiftPM evaluates the manifest (it resolves nothing for this), and reads the path back whole.
        let swift = try #require(StarterTests.swiftExecutable, "no swift on PATH")
        let dumped = try runProgram(
            swift, ["package", "--package-path", package, "dump-package"], timeout: .seconds(300), environment: ["TMPDIR": scratch])
        func strings(_ value: Any) -> [String] {
            switch value {
            case let text as String: [text]
            case let array as [Any]: array.flatMap(strings)
            case let object as [String: Any]: object.values.flatMap(strings)
            default: []
            }
        }
        let json = try? JSONSerialization.jsonObject(with: Data(dumped.stdout.utf8))
        #expect(dumped.status == 0 && json.map(strings)?.contains(checkout) == true, "\(dumped)")
    }

    @Test("GUIDE §6's manifest of a package that only holds reducers evaluates, with FluxCore for its target and FluxTesting for its tests")
    func guideManifest() throws {
        let guide = try Guide(path: StarterTests.checkout + "/docs/GUIDE.md")
        let manifest = try #require(guide.firstBlock(in: "### The starter", info: "swift manifest"), "no manifest in GUIDE §6")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("zf-guide-manifest-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try FileManager.default.createDirectory(atPath: scratch + "/Tally", withIntermediateDirectories: true)
        // The guide's placeholder path, pointed at this checkout.
        try manifest.replacingOccurrences(of: "/path/to/zflux", with: StarterTests.checkout)
            .write(toFile: scratch + "/Tally/Package.swift", atomically: true, encoding: .utf8)
        let swift = try #require(StarterTests.swiftExecutable, "no swift on PATH")
        let dumped = try runProgram(
            swift, ["package", "--package-path", scratch + "/Tally", "dump-package"], timeout: .seconds(300), environment: ["TMPDIR": scratch])
        try #require(dumped.status == 0, "\(dumped)")
        struct Dump: Decodable {
            struct Target: Decodable {
                struct Dependency: Decodable {
                    var product: [String?]?
                    var byName: [String?]?
                }
                var name: String
                var type: String
                var dependencies: [Dependency]
            }
            var name: String
            var targets: [Target]
        }
        let dump = try JSONDecoder().decode(Dump.self, from: Data(dumped.stdout.utf8))
        #expect(dump.name == "Tally")
        let targets = Dictionary(uniqueKeysWithValues: dump.targets.map { ($0.name, $0) })
        #expect(targets["Tally"]?.type == "regular" && targets["TallyTests"]?.type == "test", "\(dump.targets.map(\.name))")
        func products(_ target: String) -> [String] { targets[target]?.dependencies.compactMap { $0.product?.first ?? nil } ?? [] }
        #expect(products("Tally") == ["FluxCore"] && products("TallyTests") == ["FluxTesting"], "\(dumped.stdout)")
        #expect(manifest.contains(#".package(name: "zflux", path: "/path/to/zflux")"#), "the dependency is named zflux")
    }

    @Test("a name that is not an uppercase identifier, or would clash with a type or module the build uses, is refused and nothing is written")
    func badNames() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("zf-new-bad-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let refusals = [
            ("9lives", "is not a package name zflux can use"), ("my app", "is not a package name zflux can use"),
            ("", "is not a package name zflux can use"), ("poll", "is not a package name zflux can use"),
            ("Poll-2", "is not a package name zflux can use"), ("Task", "would hide 'Task'"), ("Zflux", "would name a module like 'zflux'"),
        ]
        for (name, reason) in refusals {
            let output = scratch + "/out"
            let new = try zflux(["new", name, "--output", output])
            #expect(new.status == 1, "zflux new '\(name)': \(new)")
            #expect(new.stderr.hasPrefix("zflux: '\(name)' ") && new.stderr.contains(reason), "zflux new '\(name)': \(new.stderr)")
            #expect(new.stderr.split(separator: "\n").count == 1 && new.stdout.isEmpty, "one line, on stderr: \(new)")
            #expect(!FileManager.default.fileExists(atPath: output), "zflux new '\(name)' wrote \(output)")
        }
    }
}
