import Examples
import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing
import ZeroMQ

/// A poison action (issue 35): a reducer that traps on one action must not take its stores down for good.
@Suite("Quarantine of a poison action (real processes)", .serialized, .timeLimit(.minutes(5)))
struct QuarantineTests {
    @Test(
        "an action whose reducer traps crashes both replicas of its app twice, is quarantined, and every replica skips it: both serve again (within a minute), equal, the quarantine in status and `zflux quarantine list`; released, it is sequenced again, crashes them again and is quarantined at its new seq"
    )
    func poisonActionIsQuarantined() async throws {
        let dir = NSTemporaryDirectory() + "zflux-quarantine-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
        [cluster]
        transport = "ipc"
        [restart]
        max_restarts = 10
        window_s = 60
        [[store]]
        name = "drill"
        [[store]]
        name = "replica"
        app = "drill"
        effects = false
        """.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        func dispatch(_ action: String, _ payload: String? = nil) throws -> UInt64? {
            let sent = try cluster.zflux(["dispatch", "drill", action] + (payload.map { [$0] } ?? []))
            #expect(sent.status == 0, "\(sent.stderr)")
            return UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        func status(_ endpoint: String) -> [String: Any]? {
            guard let answered = try? cluster.zflux(["status", "--endpoint", endpoint]), answered.status == 0 else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(answered.stdout.utf8)) as? [String: Any]
        }
        let topology = try #require(cluster.topology)
        let stores = ["drill", "replica"].compactMap { topology.store(named: $0)?.snapshot }
        #expect(stores.count == 2)
        func quarantinedSeqs(_ endpoint: String) -> [Int] {
            (status(endpoint)?["quarantined"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
        }
        /// Both replicas serve at `version` with `count` ticks, and the same state.
        func bothServe(version: UInt64, count: Int) async throws {
            for store in ["drill", "replica"] {
                let state = try await waitForState(cluster, store, version: version, as: Drill.State.self, timeout: .seconds(60))
                #expect(state.count == count, "\(store): \(state)")
            }
        }

        _ = try dispatch("tick")
        _ = try dispatch("tick")
        // A client (not a store: it lacks the nodes' effect token) asks to quarantine a good action:
        // ignored, so it never shows in the lists below.
        let forger = try Socket(.shared, .dealer)
        defer { forger.close() }
        try forger.setOption(.linger, 0)
        try forger.connect(topology.dispatcher.replay)
        _ = try forger.send(Message(topic: "drill", header: Header(kind: .quarantineRequest, seq: 1), payload: Array("forged".utf8)).frames)
        let storePids = ["drill", "replica"].compactMap { cluster.currentPid("store-\($0)") }
        let started = ContinuousClock.now
        let poison = try #require(try dispatch("crash", #"{"note":"poison"}"#))
        #expect(poison == 3)

        // Both die on it, twice, ask for it to be quarantined, and skip it.
        try await eventually("the dispatcher to quarantine seq \(poison)", timeout: .seconds(60)) {
            quarantinedSeqs(topology.dispatcher.intake) == [Int(poison)]
        }
        let tick = try #require(try dispatch("tick"))
        try await bothServe(version: tick, count: 3)
        let recovered = started.duration(to: .now)
        // A bound on a stall, not a timing: two crashes, two restarts and a replay each take seconds in a
        // debug build, more on a busy machine (31 s was seen under CI's parallel suites).
        #expect(recovered < .seconds(60), "both replicas served again \(recovered) after the poison action")
        for (name, pid) in zip(["drill", "replica"], storePids) {
            #expect(cluster.currentPid("store-\(name)") != pid, "\(name) crashed on the poison action and was restarted")
        }
        for store in stores { #expect(quarantinedSeqs(store) == [Int(poison)], "each replica says it skipped it") }
        let listed = try cluster.zflux(["quarantine", "list", "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stderr)")
        #expect(entries.count == 1 && entries.first?["app"] as? String == "drill" && entries.first?["action_type"] as? String == "crash")
        #expect((entries.first?["reason"] as? String)?.contains("died 2 times in a row") == true, "\(entries)")
        let top = try cluster.zflux(["top", "--once"])
        #expect(top.stdout.contains("1 quarantined (seq \(poison))"), "\(top.stdout)")

        // A client without the nodes' credential (the run directory's effect token) cannot release it:
        // that would hand the poison back to every store.
        let unauthorized = try requestReply(
            endpoint: topology.dispatcher.intake, request: Message(header: Header(kind: .quarantineRelease, seq: poison, clientID: 77, clientSeq: 1)),
            expecting: .nack, timeoutMilliseconds: 10_000)
        let refusal = String(decoding: unauthorized?.payload ?? [], as: UTF8.self)
        #expect(refusal.contains("takes the nodes' credential"), "\(refusal)")
        #expect(quarantinedSeqs(topology.dispatcher.intake) == [Int(poison)], "still quarantined, not released")

        // Released (as after a fix that this build lacks): sequenced again as a new action, which the
        // reducer meets and traps on again, so it is quarantined at its new seq in turn.
        let released = try cluster.zflux(["quarantine", "release", String(poison)])
        #expect(released.status == 0, "\(released.stderr)")
        let again = try #require(UInt64(released.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(again > tick)
        try await eventually("the released action to be quarantined at \(again)", timeout: .seconds(60)) {
            quarantinedSeqs(topology.dispatcher.intake) == [Int(poison), Int(again)]
        }
        let twice = try cluster.zflux(["quarantine", "release", String(poison)])
        #expect(twice.status == 1 && twice.stderr.contains("released already, as seq \(again)"), "\(twice.stderr)")
        let last = try #require(try dispatch("tick"))
        try await bothServe(version: last, count: 4)
        let states = try ["drill", "replica"].map { try cluster.zflux(["state", $0]).stdout }
        #expect(states[0].replacingOccurrences(of: " ", with: "") == states[1].replacingOccurrences(of: " ", with: ""), "the replicas are equal")
    }

    @Test(
        "dispatch --wait of an action that crashes its store's reducer exits 4, saying it was quarantined and how to release it, never 0 as if applied; the next action's --wait exits 0"
    )
    func waitTellsQuarantinedFromApplied() async throws {
        let dir = NSTemporaryDirectory() + "zflux-wait-poison-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[cluster]\ntransport = \"ipc\"\n[[store]]\nname = \"drill\"\n".write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let poison = try cluster.zflux(["dispatch", "--wait", "--timeout", "120", "drill", "crash", #"{"note":"poison"}"#], timeout: .seconds(180))
        #expect(poison.status == 4, "stdout: \(poison.stdout) stderr: \(poison.stderr)")
        #expect(poison.stdout.isEmpty, "no seq printed as if applied: \(poison.stdout)")
        #expect(poison.stderr.contains("seq 1 (drill.crash) was not applied: it was quarantined"), "\(poison.stderr)")
        #expect(poison.stderr.contains("quarantine release 1"), "\(poison.stderr)")
        let tick = try cluster.zflux(["dispatch", "--wait", "--timeout", "60", "drill", "tick"], timeout: .seconds(90))
        #expect(tick.status == 0 && tick.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(tick.stdout) \(tick.stderr)")
    }

    @Test(
        "a poison action says why: its quarantine reason names app.type and quotes the runtime's trap message with its file and line from the store's log; quarantine list shows its payload as JSON; journal dump marks it quarantined and its release as the release of it"
    )
    func poisonActionIsDiagnosable() async throws {
        let dir = NSTemporaryDirectory() + "zflux-poison-why-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[cluster]\ntransport = \"ipc\"\n[restart]\nmax_restarts = 10\nwindow_s = 60\n[[store]]\nname = \"drill\"\n".write(
            toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let sent = try cluster.zflux(["dispatch", "drill", "crash", #"{"note":"poison"}"#])
        #expect(sent.status == 0 && sent.stdout.hasPrefix("1"), "\(sent.stderr)")
        var listed: [[String: Any]] = []
        try await eventually("seq 1 to be quarantined", timeout: .seconds(90)) {
            let answered = try cluster.zflux(["quarantine", "list", "--json"])
            listed = (try? JSONSerialization.jsonObject(with: Data(answered.stdout.utf8)) as? [[String: Any]]) ?? []
            return !listed.isEmpty
        }
        let entry = try #require(listed.first)
        let reason = entry["reason"] as? String ?? ""
        #expect(reason.hasPrefix("drill.crash: store drill died 2 times in a row applying it; its log says: "), "\(reason)")
        #expect(reason.contains("Fatal error: drill: a reducer that traps (poison)") && reason.contains("Drill.swift:"), "\(reason)")
        let payload = try #require(entry["payload"] as? [String: Any], "\(entry)")
        #expect("\(payload)".contains("poison"), "\(payload)")
        let table = try cluster.zflux(["quarantine", "list"])
        #expect(table.stdout.contains("payload: {") && table.stdout.contains("poison"), "\(table.stdout)")

        let released = try cluster.zflux(["quarantine", "release", "1"])
        let again = try #require(UInt64(released.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(released.stderr)")
        try await eventually("the release to be quarantined in turn", timeout: .seconds(90)) {
            let answered = try cluster.zflux(["quarantine", "list", "--json"])
            return ((try? JSONSerialization.jsonObject(with: Data(answered.stdout.utf8)) as? [[String: Any]]) ?? []).count == 2
        }
        let dump = try cluster.zflux(["journal", "dump"])
        let lines = dump.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let first = try #require(lines.first { $0["seq"] as? Int == 1 })
        let marked = try #require(first["quarantined"] as? [String: Any], "\(first)")
        #expect(marked["released_as"] as? Int == Int(again) && (marked["reason"] as? String)?.contains("drill.crash") == true, "\(marked)")
        let release = try #require(lines.first { $0["seq"] as? Int == Int(again) })
        #expect(release["release_of"] as? Int == 1, "\(release)")
        #expect(lines.filter { $0["release_of"] != nil }.count == 1)
    }

    @Test(
        "one poison action costs that action, whatever the replicas: with 1, 2, 3 and 5 replicas of its app and the default restart intensity (5 in 30 s), cluster up goes on, the action is quarantined and every replica skips it",
        arguments: [1, 2, 3, 5])
    func onePoisonWhateverTheReplicas(replicas: Int) async throws {
        let dir = NSTemporaryDirectory() + "zflux-poison-\(replicas)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let names = ["drill"] + (1..<replicas).map { "replica\($0)" }
        // No [restart] section: the supervisor's default intensity, which 3 replicas dying twice each passed.
        var config = "[cluster]\ntransport = \"ipc\"\n[[store]]\nname = \"drill\"\n"
        for name in names.dropFirst() { config += "[[store]]\nname = \"\(name)\"\napp = \"drill\"\neffects = false\n" }
        try config.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)
        func dispatch(_ action: String, _ payload: String? = nil) throws -> UInt64? {
            let sent = try cluster.zflux(["dispatch", "drill", action] + (payload.map { [$0] } ?? []))
            #expect(sent.status == 0, "\(sent.stderr)")
            return UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        func quarantined() -> [Int] {
            guard let answered = try? cluster.zflux(["status", "--endpoint", topology.dispatcher.intake]), answered.status == 0,
                let object = try? JSONSerialization.jsonObject(with: Data(answered.stdout.utf8)) as? [String: Any]
            else { return [] }
            return (object["quarantined"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
        }
        _ = try dispatch("tick")
        let pids = names.map { cluster.currentPid("store-\($0)") }
        let poison = try #require(try dispatch("crash", #"{"note":"poison"}"#))
        try await eventually("the dispatcher to quarantine seq \(poison) (cluster up running: \(cluster.process.isRunning))", timeout: .seconds(90)) {
            quarantined() == [Int(poison)] || !cluster.process.isRunning
        }
        #expect(cluster.process.isRunning, "cluster up stopped: \(cluster.logs().suffix(3000))")
        let tick = try #require(try dispatch("tick"))
        for (name, pid) in zip(names, pids) {
            let state = try await waitForState(cluster, name, version: tick, as: Drill.State.self, timeout: .seconds(60))
            #expect(state.count == 2, "\(name): \(state)")
            #expect(cluster.currentPid("store-\(name)") != pid, "\(name) died on the poison action and was restarted")
        }
        #expect(cluster.process.isRunning, "cluster up stopped: \(cluster.logs().suffix(3000))")
    }
}
