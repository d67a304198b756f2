import Examples
import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing

/// One acknowledged dispatch: what was sent, by whom, and the seq it got.
struct Acked: Sendable {
    var seq: UInt64
    var client: UInt64
    var clientSeq: UInt64
    var app: String
    var payload: [UInt8]
}

/// Writes a cluster config to a temporary file and returns its path.
func writeConfig(_ text: String) throws -> String {
    let path = NSTemporaryDirectory() + "zflux-fault-\(UUID().uuidString).toml"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// `clients` concurrent clients, each on its own thread, each dispatching `perClient` actions made by
/// `make(client, i)`. Unanswered dispatches are retried with the same client seq (the dispatcher
/// deduplicates) for up to a minute, so a dispatcher restart mid-load loses nothing. `progress` is
/// called with the running count of acknowledged actions.
func runLoad(
    intake: String, clients: Int, perClient: Int,
    make: @escaping @Sendable (Int, Int) throws -> (app: String, type: String, payload: [UInt8]),
    progress: @escaping @Sendable (Int) -> Void = { _ in }
) async throws -> [Acked] {
    let acked = Locked<[Acked]>([])
    try await withThrowingTaskGroup(of: Void.self) { group in
        for client in 0..<clients {
            group.addTask {
                try await onThread {
                    let connection = try DispatchConnection(intake: intake)
                    defer { connection.close() }
                    connection.timeout = .seconds(60)
                    connection.retryInterval = .milliseconds(250)
                    for i in 0..<perClient {
                        let (app, type, payload) = try make(client, i)
                        let outcome = try connection.dispatch(app: app, actionType: type, payload: payload)
                        guard case .acknowledged(let seq) = outcome else {
                            Issue.record("client \(client) dispatch \(i): \(outcome)")
                            return
                        }
                        // Client seqs count from 1, one per dispatch.
                        let count = acked.withLock {
                            $0.append(Acked(seq: seq, client: connection.clientID, clientSeq: UInt64(i + 1), app: app, payload: payload))
                            return $0.count
                        }
                        progress(count)
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    return acked.withLock { $0 }.sorted { $0.seq < $1.seq }
}

func counterAction(_ amount: Int) throws -> (app: String, type: String, payload: [UInt8]) {
    ("counter", "addTapped", try JSONPayloadCodec().encode(Counter.Action.addTapped(amount: amount)))
}

func todoAction(_ title: String) throws -> (app: String, type: String, payload: [UInt8]) {
    ("todo", "addTodo", try JSONPayloadCodec().encode(Todo.Action.addTodo(title: title)))
}

/// The states every store must end with: the reduction of the acknowledged actions in seq order.
func expectedStates(_ acked: [Acked]) throws -> (todo: Todo.State, counter: Counter.State) {
    var todo = Todo.State(), counter = Counter.State()
    for entry in acked {
        switch entry.app {
        case "todo": _ = Todo.reducer(&todo, try JSONDecoder().decode(Todo.Action.self, from: Data(entry.payload)), .mock())
        default: _ = Counter.reducer(&counter, try JSONDecoder().decode(Counter.Action.self, from: Data(entry.payload)), .live)
        }
    }
    return (todo, counter)
}

let faultConfig = """
    [cluster]
    transport = "ipc"
    heartbeat_ms = 100

    [journal]
    fsync = "%FSYNC%"
    snapshot_every = 2000

    [[store]]
    name = "todo"

    [[store]]
    name = "counter"
    """

@Suite("Fault injection (real processes)", .serialized, .timeLimit(.minutes(5)))
struct FaultTests {
    @Test("1. kill -9 a store while 2 clients dispatch 20,000 actions: it is restarted and ends exactly right")
    func killStore() async throws {
        let config = try writeConfig(faultConfig.replacingOccurrences(of: "%FSYNC%", with: "none"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let intake = try #require(cluster.topology).dispatcher.intake
        let killed = Locked<[Int32]>([])
        let runDir = cluster.runDir
        let acked = try await runLoad(
            intake: intake, clients: 2, perClient: 10_000,
            make: { client, i in
                try i % 50 == 0 ? todoAction("c\(client)-\(i)") : counterAction(client * 100_000 + i)
            },
            progress: { count in
                // kill -9 both stores, once each, mid-load.
                for (at, name) in [(5_000, "store-counter"), (12_000, "store-todo")] where count == at {
                    if let text = try? String(contentsOfFile: "\(runDir)/pids/\(name).pid", encoding: .utf8), let pid = Int32(text) {
                        signalNode(pid, SIGKILL)
                        killed.withLock { $0.append(pid) }
                    }
                }
            })
        #expect(killed.withLock { $0.count } == 2, "both stores were killed mid-load")
        #expect(acked.map(\.seq) == Array(1...20_000), "every action acknowledged once, seqs without holes")
        let expected = try expectedStates(acked)
        #expect(try await waitForState(cluster, "counter", version: 20_000, as: Counter.State.self, timeout: .seconds(60)) == expected.counter)
        #expect(try await waitForState(cluster, "todo", version: 20_000, as: Todo.State.self, timeout: .seconds(60)) == expected.todo)
        for pid in killed.withLock({ $0 }) { #expect(cluster.currentPid("store-counter") != pid && cluster.currentPid("store-todo") != pid) }
    }

    @Test("2. kill -9 the dispatcher mid-load (fsync batch): nothing acknowledged is lost, no hole or repeat, retries deduplicated")
    func killDispatcher() async throws {
        let config = try writeConfig(faultConfig.replacingOccurrences(of: "%FSYNC%", with: "batch"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let runDir = cluster.runDir
        let killedDispatcher = Locked<Int32?>(nil)
        let acked = try await runLoad(
            intake: try #require(cluster.topology).dispatcher.intake, clients: 2, perClient: 3_000,
            make: { client, i in
                try counterAction(client * 100_000 + i)
            },
            progress: { count in
                if count == 2_500, let text = try? String(contentsOfFile: "\(runDir)/pids/dispatcher.pid", encoding: .utf8), let pid = Int32(text) {
                    signalNode(pid, SIGKILL)
                    killedDispatcher.withLock { $0 = pid }
                }
            })
        let killed = try #require(killedDispatcher.withLock { $0 })
        #expect(cluster.currentPid("dispatcher") != killed, "the supervisor restarted the dispatcher")
        #expect(acked.count == 6_000)

        // The journal: seqs 1…N with no hole or repeat, each (client, client seq) once, every ack in it.
        let dump = try cluster.zflux(["journal", "dump"])
        #expect(dump.status == 0, "\(dump.stderr)")
        struct Record: Decodable { var seq: UInt64; var client: UInt64; var clientSeq: UInt64 }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let records = try dump.stdout.split(separator: "\n").map { try decoder.decode(Record.self, from: Data($0.utf8)) }
        #expect(records.map(\.seq) == Array(1...UInt64(records.count)), "no hole, no repeat")
        #expect(Set(records.map { "\($0.client)/\($0.clientSeq)" }).count == records.count, "no dispatch was sequenced twice")
        #expect(records.count == 6_000, "every dispatch sequenced exactly once")
        let bySeq = Dictionary(uniqueKeysWithValues: records.map { ($0.seq, $0) })
        for entry in acked {
            let record = bySeq[entry.seq]
            #expect(record?.client == entry.client && record?.clientSeq == entry.clientSeq, "ack \(entry.seq) is in the journal")
        }
        let expected = try expectedStates(acked)
        #expect(try await waitForState(cluster, "counter", version: 6_000, as: Counter.State.self, timeout: .seconds(60)) == expected.counter)
        #expect(try cluster.zflux(["journal", "verify"]).status == 0)
    }

    @Test("3. a torn journal tail is detected, trimmed and reported; the sequence continues after the last good record")
    func tornTail() async throws {
        let config = try writeConfig(faultConfig.replacingOccurrences(of: "%FSYNC%", with: "always"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let runDir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: runDir) }
        func up() async throws -> ClusterProcess {
            let cluster = try ClusterProcess(transport: "ipc", runDir: runDir, extraArguments: ["--config", config])
            try cluster.waitUntilReady()
            return cluster
        }
        var cluster = try await up()
        for i in 1...20 {
            let result = try cluster.zflux(["dispatch", "counter", "addTapped", "{\"amount\":\(i)}"])
            #expect(result.stdout == "\(i)\n", "dispatch \(i): \(result)\n\(cluster.logs())")
        }
        cluster.stop(keepRunDirectory: true)

        let journalDir = runDir + "/journal"
        let segment =
            journalDir + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: journalDir).first { $0.hasSuffix(".journal") }))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
        #expect(truncate(segment, off_t(size - 5)) == 0)
        let verify = try zflux(["journal", "verify", "--journal", journalDir])
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("torn tail") && verify.stdout.contains("seqs 1…19"), "\(verify)")

        cluster = try await up()
        let log = try String(contentsOfFile: runDir + "/logs/dispatcher.log", encoding: .utf8)
        #expect(log.contains("torn tail"), "the dispatcher reports what it trimmed")
        #expect(
            try cluster.zflux(["dispatch", "counter", "addTapped", "{\"amount\":100}"]).stdout == "20\n",
            "seq 20 is given again: the torn one was never acknowledged")
        let state = try await waitForState(cluster, "counter", version: 20, as: Counter.State.self)
        #expect(state.count == (1...19).reduce(0, +) + 100)
        cluster.stop(keepRunDirectory: true)
        #expect(try zflux(["journal", "verify", "--journal", journalDir]).status == 0)
    }

    @Test(
        "3b. a byte flipped in the middle of the journal is corruption, not a torn tail: verify names the seq, cluster up refuses to serve and says what to do, every record stays on disk"
    )
    func flippedByteMidJournal() async throws {
        let config = try writeConfig(faultConfig.replacingOccurrences(of: "%FSYNC%", with: "batch"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let runDir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: runDir) }
        let cluster = try ClusterProcess(transport: "ipc", runDir: runDir, extraArguments: ["--config", config])
        try cluster.waitUntilReady()
        let acked = try await runLoad(intake: try #require(cluster.topology).dispatcher.intake, clients: 2, perClient: 1_000) { client, i in
            try counterAction(client * 100_000 + i)
        }
        #expect(acked.count == 2_000)
        cluster.stop(keepRunDirectory: true)

        let journalDir = runDir + "/journal"
        let segment =
            journalDir + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: journalDir).first { $0.hasSuffix(".journal") }))
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: segment)))
        bytes[bytes.count / 2] ^= 0x10  // a latent sector error in a synced, acknowledged record
        try Data(bytes).write(to: URL(fileURLWithPath: segment))

        let verify = try zflux(["journal", "verify", "--journal", journalDir])
        #expect(verify.status != 0)
        #expect(verify.stderr.contains("not a torn tail"), "\(verify)")
        let seq = try #require(
            verify.stderr.firstMatch(of: /where seq (\d+) is due/).flatMap { UInt64($0.1) }, "verify names the seq: \(verify)")
        #expect((900...1100).contains(seq), "the damaged record is mid-journal: \(seq)")

        let up = try zflux(["cluster", "up", "--run-dir", runDir, "--config", config, "--log-level", "notice"], timeout: .seconds(60))
        #expect(up.status == 1, "\(up)")
        #expect(up.stderr.contains("seq \(seq) is due") && up.stderr.contains("--from-seq \(seq)"), "cluster up says where and what to do: \(up)")
        #expect([UInt8](try #require(FileManager.default.contents(atPath: segment))) == bytes, "nothing trimmed")

        // The operator gives up the damaged record and what follows it, and gets a cluster back.
        let truncated = try zflux(["journal", "truncate", "--journal", journalDir, "--from-seq", "\(seq)"])
        #expect(truncated.status == 0 && truncated.stdout.contains("now ends at seq \(seq - 1)"), "\(truncated)")
        let again = try ClusterProcess(transport: "ipc", runDir: runDir, extraArguments: ["--config", config])
        defer { again.stop() }
        try again.waitUntilReady()
        let kept = acked.filter { $0.seq < seq }
        let expected = try expectedStates(kept)
        #expect(try await waitForState(again, "counter", version: seq - 1, as: Counter.State.self, timeout: .seconds(60)) == expected.counter)
    }

    @Test("4. a store and a view stopped past their high-water marks (SIGSTOP) recover and end consistent")
    func slowSubscribers() async throws {
        let config = try writeConfig(
            faultConfig.replacingOccurrences(of: "%FSYNC%", with: "none")
                .replacingOccurrences(of: "heartbeat_ms = 100", with: "heartbeat_ms = 100\nhigh_water_mark = 50"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let view = try ViewProcess(runDir: cluster.runDir, stores: ["counter"])
        defer { view.stop() }
        try await view.waitForVersion(store: "counter", 0)
        let store = try #require(cluster.currentPid("store-counter"))
        kill(store, SIGSTOP)
        kill(view.process.processIdentifier, SIGSTOP)
        let acked = try await runLoad(intake: try #require(cluster.topology).dispatcher.intake, clients: 2, perClient: 5_000) { client, i in
            try counterAction(client * 100_000 + i)
        }
        kill(store, SIGCONT)
        kill(view.process.processIdentifier, SIGCONT)
        let expected = try expectedStates(acked).counter
        #expect(try await waitForState(cluster, "counter", version: 10_000, as: Counter.State.self, timeout: .seconds(60)) == expected)
        let counterEndpoints = try #require(cluster.topology?.store(named: "counter"))
        let status = try #require(nodeStatus(endpoint: counterEndpoints.snapshot))
        // It lost live messages and got them again by replay: through a gap it noticed, or by another way
        // back (a loaded run found the store started again, gaps_repaired 0 and all 10,000 replayed; why it
        // restarted is not known yet).
        #expect((status.replayed ?? 0) > 0, "the store really lost messages and got them again by replay: \(status)")
        let shown = try await view.waitForVersion(store: "counter", 10_000)
        #expect(try JSONDecoder().decode(Counter.State.self, from: shown) == expected)
        #expect(view.versionsNeverWentBack)
    }

    @Test("5. a view joining during heavy load never shows a state older than its snapshot and ends equal to the store")
    func lateViewUnderLoad() async throws {
        let config = try writeConfig(faultConfig.replacingOccurrences(of: "%FSYNC%", with: "none"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let runDir = cluster.runDir
        let view = Locked<ViewProcess?>(nil)
        let acked = try await runLoad(
            intake: try #require(cluster.topology).dispatcher.intake, clients: 2, perClient: 4_000,
            make: { client, i in
                try i % 4 == 0 ? todoAction("c\(client)-\(i)") : counterAction(i)
            },
            progress: { count in
                if count == 3_000 { view.withLock { $0 = try? ViewProcess(runDir: runDir, stores: ["todo"]) } }
            })
        let late = try #require(view.withLock { $0 })
        defer { late.stop() }
        let expected = try expectedStates(acked).todo
        let storeState = try await waitForState(cluster, "todo", version: 8_000, as: Todo.State.self, timeout: .seconds(60))
        #expect(storeState == expected)
        let shown = try await late.waitForVersion(store: "todo", 8_000)
        #expect(try JSONDecoder().decode(Todo.State.self, from: shown) == expected)
        #expect(late.firstVersion ?? 0 > 0, "it joined mid-load, with a snapshot")
        #expect(late.versionsNeverWentBack, "never older than what it had shown")
    }

    @Test("6. a store that hears nothing from the dispatcher says so, reconnects, and goes on once it is back")
    func silentDispatcher() async throws {
        let config = try writeConfig(faultConfig.replacingOccurrences(of: "%FSYNC%", with: "none"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        #expect(try cluster.zflux(["dispatch", "counter", "incrementTapped"]).stdout == "1\n")
        let dispatcher = try #require(cluster.currentPid("dispatcher"))
        let endpoint = try #require(cluster.topology?.store(named: "counter")).snapshot
        kill(dispatcher, SIGSTOP)
        var status: NodeStatus? = nil
        do {
            try await eventually("the store to report the dispatcher silent and reconnect") {
                status = nodeStatus(endpoint: endpoint)
                return status?.dispatcher == "silent" && (status?.reconnects ?? 0) > 0
            }
        } catch {
            kill(dispatcher, SIGCONT)
            Issue.record("last status: \(String(describing: status))\n\(cluster.logs())")
            throw error
        }
        // A client gets no answer from a frozen dispatcher: it says so and exits 2.
        let timedOut = try cluster.zflux(["dispatch", "counter", "resetTapped", "--timeout", "0.5"])
        #expect(timedOut.status == 2 && timedOut.stderr.contains("no answer from the dispatcher"), "\(timedOut)")
        kill(dispatcher, SIGCONT)
        // The timed-out dispatch may still be sequenced once the dispatcher wakes (it was sent); after
        // it, ours is the next seq either way.
        let next = try cluster.zflux(["dispatch", "counter", "incrementTapped"])
        #expect(next.status == 0)
        let seq = try #require(UInt64(next.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(seq == 2 || seq == 3)
        let state = try await waitForState(cluster, "counter", version: seq, as: Counter.State.self)
        #expect(state.count == (seq == 2 ? 2 : 1), "the reset, if sequenced, came before the increment")
        try await eventually("the store to hear the dispatcher again") { nodeStatus(endpoint: endpoint)?.dispatcher == "connected" }
    }

    @Test("7. a node that keeps crashing exhausts the restart intensity and stops the cluster with a clear error")
    func restartIntensity() async throws {
        let config = try writeConfig(faultConfig.replacingOccurrences(of: "%FSYNC%", with: "none"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--config", config])
        defer { cluster.stop(expectCleanExit: false) }
        try cluster.waitUntilReady()
        var killed: Set<Int32> = []
        try await eventually("the cluster to give up", timeout: .seconds(60)) {
            if !cluster.process.isRunning { return true }
            if let pid = cluster.currentPid("store-counter"), !killed.contains(pid), kill(pid, 0) == 0 {
                signalNode(pid, SIGKILL)
                killed.insert(pid)
            }
            return false
        }
        #expect(cluster.process.waitUntilExit() == .exited(1))
        let log = try String(contentsOfFile: cluster.runDir + "/cluster-up.log", encoding: .utf8)
        #expect(log.contains("restarting it in"), "it restarted with backoff first")
        #expect(log.contains("more than 5 restarts within"), "\(log)")
        #expect(killed.count == 6)
    }
}

/// A real `zflux view` whose JSON lines are collected as they come.
final class ViewProcess: @unchecked Sendable {
    // @unchecked: the reader thread and the test share state only through `lines`, which is locked.
    let process = Process()
    /// Each line's store and version, read from its start, and the line itself: its state is parsed only
    /// when a test asks for it. (A view under load prints thousands of whole states, megabytes each;
    /// parsing every one as it came kept the reader minutes behind the view on a loaded machine, and a
    /// wait for the last version timed out although the view had printed it.)
    private let lines = Locked<[(store: String, version: UInt64, line: Data)]>([])

    /// `{"store":"S","version":N,...`: S and N, or nil for any other line.
    static func storeAndVersion(_ line: Data) -> (String, UInt64)? {
        let head = String(decoding: line.prefix(400), as: UTF8.self)
        guard let match = head.prefixMatch(of: /\{"store":"([^"\\]*)","version":([0-9]+),/), let version = UInt64(match.2) else { return nil }
        return (String(match.1), version)
    }

    /// The state a line holds, as JSON.
    static func state(of line: Data) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any], let state = object["state"] else { return nil }
        return try? JSONSerialization.data(withJSONObject: state)
    }

    init(runDir: String, stores: [String]) throws {
        process.executableURL = URL(fileURLWithPath: zfluxBinary)
        process.arguments = ["view"] + stores + ["--run-dir", runDir, "--supervisor-pid", String(getpid())]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = lines
        Thread {
            var buffer = Data()
            while true {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { return }
                // Only the new bytes are searched for a newline: a line can be megabytes long.
                let searchFrom = buffer.count
                buffer.append(chunk)
                var start = buffer.startIndex
                var from = buffer.startIndex + searchFrom
                while let newline = buffer[from...].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = buffer[start..<newline]
                    start = newline + 1
                    from = start
                    guard let (store, version) = ViewProcess.storeAndVersion(Data(line)) else { continue }
                    lines.withLock { $0.append((store, version, Data(line))) }
                }
                buffer = Data(buffer[start...])
            }
        }.start()
    }

    /// Waits until the view has shown `store` at `version` (bounded) and returns that state.
    @discardableResult
    func waitForVersion(store: String, _ version: UInt64, timeout: Duration = .seconds(180)) async throws -> Data {
        var found: Data? = nil
        try await eventually("the view to show \(store) at version \(version)", timeout: timeout) {
            found = lines.withLock { $0.last { $0.store == store && $0.version == version }?.line }
            return found != nil
        }
        return try #require(found.flatMap(ViewProcess.state(of:)), "the view's line at version \(version) holds no state")
    }

    var firstVersion: UInt64? { lines.withLock { $0.first?.version } }

    var versionsNeverWentBack: Bool {
        lines.withLock { all in zip(all, all.dropFirst()).allSatisfy { $0.store != $1.store || $0.version <= $1.version } }
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGCONT)
            kill(process.processIdentifier, SIGTERM)
        }
        process.waitUntilExit()
    }
}
