import FluxTesting
import Foundation
import NodeSupport
import Testing

/// The framework's contract, from outside the tree: `zflux new` writes a package that builds against this
/// checkout with the public products only, passes its own tests, and runs a cluster with its own binary
/// that the stock `zflux` reads, dispatches to and benchmarks like any other.
@Suite("zflux new: a package outside the tree", .serialized, .timeLimit(.minutes(15)))
struct StarterTests {
    /// This checkout: the package the generated one depends on.
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test("new Demo: builds, passes its tests, runs its cluster with its own binary; the stock zflux dispatches, reads and benches it")
    func newPackage() async throws {
        // Short paths: the cluster's ipc socket paths must fit in 107 bytes.
        var template = Array("/tmp/zf-new-XXXXXX".utf8CString)
        let scratch = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let package = scratch + "/demo", run = scratch + "/run"

        let new = try zflux(["new", "Demo", "--output", package, "--zflux-path", Self.checkout])
        try #require(new.status == 0, "zflux new: \(new.stderr)")
        #expect(new.stdout.contains("Sources/DemoApp/Demo.swift") && new.stdout.contains(".build/debug/demo cluster up"), "\(new.stdout)")
        let refused = try zflux(["new", "Demo", "--output", package, "--zflux-path", Self.checkout])
        #expect(refused.status != 0 && refused.stderr.contains("is not empty"), "a second new into the same directory: \(refused)")

        // Only the products a team names: no module reached around them.
        let imports = try Self.imports(in: package)
        #expect(
            imports.isSubset(of: [
                "DemoApp", "ZFluxCLI", "FluxCore", "FluxWire", "ViewNode", "FluxTesting", "FluxClusterTesting", "Foundation", "Testing",
            ]),
            "\(imports)")
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
        let build = try await swiftPM("build")
        try #require(
            build.result.status == 0,
            "swift build of the generated package:\n\(build.result.stdout.suffix(6000))\n\(build.result.stderr.suffix(3000))")
        let ownWarnings = (build.result.stdout + build.result.stderr).split(separator: "\n").filter {
            $0.contains(package + "/Sources") && $0.contains("warning:")
        }
        #expect(ownWarnings.isEmpty, "the generated code builds without warnings: \(ownWarnings)")
        // Nothing of zflux or its dependencies was compiled again: only the package's own modules.
        let compiled = Set(
            (build.result.stdout + build.result.stderr).matches(of: #/\] Compiling (\w+) /#).map { String($0.1) })
        // ("plugin": SwiftPM compiles the package plugins' manifests, argument-parser's, on every new root.)
        #expect(compiled.isSubset(of: ["DemoApp", "demo", "plugin"]), "compiled again beside the package's own modules: \(compiled.sorted())")
        let test = try await swiftPM("test")
        #expect(
            test.result.status == 0 && test.result.stdout.contains("passed")
                && test.result.stdout.contains("Suite \"Demo in a cluster\" passed"),
            "swift test of the generated package:\n\(test.result.stdout.suffix(6000))\n\(test.result.stderr.suffix(3000))")
        let timing = "the generated package's first swift build took \(Self.seconds(build.time)), its swift test \(Self.seconds(test.time))"
        FileHandle.standardError.write(Data("StarterTests: \(timing)\n".utf8))

        // Its cluster, run by its own binary.
        let demo = scratchPath + "/debug/demo"
        let cluster = try OwnCluster(binary: demo, config: package + "/cluster.toml", runDir: run)
        defer { cluster.stop() }
        try await cluster.waitUntilReady()

        // The stock zflux hosts no demo app: it sends the JSON arguments, and the dispatcher judges them.
        let loaded = try zflux(["dispatch", "demo", "loadTapped", "--run-dir", run])
        #expect(loaded.status == 0 && loaded.stdout == "1\n", "\(loaded)")
        // Its effect answers after a moment, as a later action sent through the dispatcher (seq 2).
        let loadedState = try await Self.state(run, version: 2)
        let ballot = ["yes", "no", "maybe"].map { TallyState.Option(name: $0, votes: 0) }
        #expect(loadedState.options == ballot && !loadedState.isLoading, "\(loadedState)")
        let voted = try zflux(["dispatch", "demo", "voteCast", #"{"option":"tea"}"#, "--run-dir", run])
        #expect(voted.status == 0 && voted.stdout == "3\n", "\(voted)")
        let blank = try zflux(["dispatch", "demo", "voteCast", #"{"option":"  "}"#, "--run-dir", run])
        #expect(blank.status == 1 && blank.stderr.contains("an option needs a name"), "the app's validate, judged by the dispatcher: \(blank)")
        let state = try await Self.state(run, version: 3)
        #expect(state.options == ballot + [.init(name: "tea", votes: 1)], "\(state)")
        let stock = try zflux(["state", "demo", "--run-dir", run])
        let own = try runProgram(demo, ["state", "demo", "--run-dir", run])
        #expect(stock.status == 0 && own.status == 0 && stock.stdout == own.stdout, "stock: \(stock)\nown: \(own)")
        // The journal too: the effect's answer is a binary payload, which the stock zflux reads without its type.
        let stockDump = try zflux(["journal", "dump", "--run-dir", run])
        let ownDump = try runProgram(demo, ["journal", "dump", "--run-dir", run])
        #expect(stockDump.status == 0 && stockDump.stdout == ownDump.stdout, "stock: \(stockDump)\nown: \(ownDump)")
        #expect(stockDump.stdout.contains(#""payload":{"ballotLoaded":{"options":["yes","no","maybe"]}}"#), "\(stockDump.stdout)")
        // A session needs the app's reducer: the stock zflux refuses to export one without the demo store,
        // says why in one line and writes nothing; the package's own binary exports it.
        let stockExport = try zflux(["journal", "export", "--run-dir", run, "-o", scratch + "/stock-session.json"])
        #expect(stockExport.status == 1 && stockExport.stderr.split(separator: "\n").count == 1, "\(stockExport)")
        #expect(
            stockExport.stderr.contains("store 'demo' (app 'demo')") && stockExport.stderr.contains("the binary that runs the cluster"),
            "\(stockExport)")
        #expect(!FileManager.default.fileExists(atPath: scratch + "/stock-session.json"))
        // So does its time travel: `view --history` refuses in full, with a failing exit, before any screen.
        let stockHistory = try zflux(["view", "demo", "--history", "--run-dir", run])
        #expect(stockHistory.status == 1 && stockHistory.stderr.contains("does not host that app"), "\(stockHistory)")
        let ownExport = try runProgram(demo, ["journal", "export", "--run-dir", run, "-o", scratch + "/session.json"])
        let session = FileManager.default.contents(atPath: scratch + "/session.json").flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        let sessionStores = (session?["stores"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(ownExport.status == 0 && sessionStores == ["demo"], "\(ownExport)")

        // The stock zflux follows the cluster too: `view --json` prints the state exactly as the package's
        // own binary does, `tail --json` the actions, `status` every node. The followers run until stopped.
        let stockView = try Follower(zfluxBinary, ["view", "demo", "--json", "--run-dir", run])
        defer { #expect(stockView.stop(), "zflux view ends cleanly on SIGTERM: \(stockView.stderr)") }
        let ownView = try Follower(demo, ["view", "demo", "--json", "--run-dir", run])
        defer { #expect(ownView.stop(), "demo view ends cleanly on SIGTERM: \(ownView.stderr)") }
        let stockTail = try Follower(zfluxBinary, ["tail", "--json", "--run-dir", run])
        defer { #expect(stockTail.stop(), "zflux tail ends cleanly on SIGTERM: \(stockTail.stderr)") }
        let viewed = try await Self.sameView(stock: stockView, own: ownView, version: 3)
        #expect(viewed.options == ballot + [.init(name: "tea", votes: 1)], "\(viewed)")
        let status = try zflux(["status", "--run-dir", run])
        let nodes = status.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(status.status == 0 && nodes.count == 2, "\(status)")
        #expect(nodes.contains { $0["role"] as? String == "dispatcher" && ($0["head"] as? Int ?? 0) >= 3 }, "\(status.stdout)")
        #expect(
            nodes.contains { $0["role"] as? String == "store" && $0["name"] as? String == "demo" && $0["app"] as? String == "demo" },
            "\(status.stdout)")
        // The simulator runs the app's reducer under seeded faults, with the app's own actions.
        let simulated = try runProgram(demo, ["simulate", "--seeds", "20"], timeout: .seconds(300))
        #expect(simulated.status == 0 && simulated.stdout.contains("every invariant held"), "\(simulated)")

        // The stock bench drives the app's own action on the running cluster.
        let bench = try await onThread {
            try zflux(
                [
                    "bench", "--attach", "--run-dir", run, "--app", "demo", "--action", "voteCast", "--payload", #"{"option":"tea"}"#,
                    "--duration", "2", "--warm-up", "0.5", "--rate", "500", "--json",
                ], timeout: .seconds(120))
        }
        #expect(bench.status == 0, "zflux bench --attach --app demo: \(bench.stderr)")
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
            // Every acknowledged vote reached the store.
            let after = try await Self.state(run, version: 3 + UInt64(acked))
            #expect(after.options.last == .init(name: "tea", votes: 1 + acked))

            // The stock tail saw the bench's votes (so it is subscribed by now); a vote the package's own
            // binary sends goes as binary, which the stock tail reads without the app's types.
            try await eventually("the stock tail to show the bench's votes", timeout: .seconds(60)) {
                stockTail.lines.contains { Self.tailed($0, seq: nil) }
            }
            let seq = 4 + UInt64(acked)
            let ownVote = try runProgram(demo, ["dispatch", "demo", "voteCast", #"{"option":"tea"}"#, "--run-dir", run])
            #expect(ownVote.status == 0 && ownVote.stdout == "\(seq)\n", "\(ownVote)")
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
            #expect(last.options.last == .init(name: "tea", votes: 2 + acked), "\(last)")
        }

        // Actions the dispatcher refuses fail the run, with the app's reason, and are never a baseline.
        let refusedRun = try await onThread {
            try zflux(
                [
                    "bench", "--attach", "--run-dir", run, "--app", "demo", "--action", "voteCast", "--payload", #"{"option":"  "}"#,
                    "--duration", "1", "--warm-up", "0.2", "--rate", "200",
                ], timeout: .seconds(120))
        }
        #expect(refusedRun.status == 3 && refusedRun.stderr.contains("an option needs a name"), "\(refusedRun)")

        // SIGTERM: the followers end, the supervisor exits cleanly, and no node and no socket file is left.
        for follower in [stockView, ownView, stockTail] { #expect(follower.stop(), "\(follower.process.arguments ?? []): \(follower.stderr)") }
        cluster.stop()
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.0f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// The state of the demo app as the test knows it (the test does not link the generated package).
    struct TallyState: Decodable, CustomStringConvertible {
        struct Option: Decodable, Equatable {
            var name: String
            var votes: Int
        }
        var options: [Option]
        var isLoading: Bool
        var loadError: String?
        var description: String { "\(options.map { "\($0.name) \($0.votes)" }), loading \(isLoading), error \(loadError ?? "none")" }
    }

    /// Polls the stock `zflux state demo` until the store reports `version` (bounded).
    static func state(_ run: String, version: UInt64) async throws -> TallyState {
        var last = "", state: TallyState? = nil
        do {
            try await eventually("store demo to reach version \(version)", timeout: .seconds(30), interval: .milliseconds(50)) {
                let result = try zflux(["state", "demo", "--run-dir", run])
                last = result.stdout + result.stderr
                guard result.status == 0, let reply = try? JSONDecoder().decode(StateReply<TallyState>.self, from: Data(result.stdout.utf8)) else {
                    return false
                }
                if reply.version == version { state = reply.state }
                return reply.version >= version
            }
        } catch {
            Issue.record("last answer: \(last)")
            throw error
        }
        return try #require(state, "store demo went past version \(version): \(last)")
    }

    /// Waits (bounded) until both `view demo --json` followers print the state at `version`, and checks
    /// that the stock binary prints it exactly as the package's own binary does.
    static func sameView(stock: Follower, own: Follower, version: UInt64) async throws -> TallyState {
        let prefix = #"{"store":"demo","version":\#(version),"connection":"live","state":"#
        func line(_ follower: Follower) -> String? { follower.lines.last { $0.hasPrefix(prefix) } }
        do {
            try await eventually("both views to show version \(version)", timeout: .seconds(30), interval: .milliseconds(50)) {
                line(stock) != nil && line(own) != nil
            }
        } catch {
            Issue.record("zflux view: \(stock.lines.suffix(3)) \(stock.stderr)\ndemo view: \(own.lines.suffix(3)) \(own.stderr)")
            throw error
        }
        let (stockLine, ownLine) = (line(stock) ?? "", line(own) ?? "")
        #expect(stockLine == ownLine, "zflux view --json: \(stockLine)\ndemo view --json: \(ownLine)")
        struct Update: Decodable { var state: TallyState }
        return try JSONDecoder().decode(Update.self, from: Data(stockLine.utf8)).state
    }

    /// Whether `line` of `tail --json` is a demo vote for tea (of `seq`, when given).
    static func tailed(_ line: String, seq: UInt64?) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["app"] as? String == "demo", object["type"] as? String == "voteCast",
            let payload = object["payload"] as? [String: Any]
        else { return false }
        let arguments = payload["voteCast"] as? [String: Any] ?? payload
        return arguments["option"] as? String == "tea" && (seq == nil || object["seq"] as? Int == seq.map(Int.init))
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

/// `cluster up` run by a package's own binary, with this test process as the supervisor's parent:
/// should the test die, the cluster stops by itself. `stop()` checks nothing is left behind.
final class OwnCluster {
    let runDir: String
    let process = Process()
    private var nodePids: [String: Int32] = [:]
    private var nodeStarts: [String: UInt64] = [:]
    private var stopped = false

    init(binary: String, config: String, runDir: String) throws {
        self.runDir = runDir
        try FileManager.default.createDirectory(atPath: runDir, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "cluster", "up", "--config", config, "--run-dir", runDir, "--supervisor-pid", String(getpid()), "--log-level", "notice",
        ]
        let log = runDir + "/cluster-up.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits (bounded) for the supervisor's word that start-up is over, and every node's pid.
    func waitUntilReady() async throws {
        do {
            try await eventually("the cluster to come up", timeout: .seconds(30), interval: .milliseconds(50)) {
                guard process.isRunning else { throw NodeError("cluster up exited with \(process.terminationStatus)") }
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
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "cluster up exit: \(logs())")
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
