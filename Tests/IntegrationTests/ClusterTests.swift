import Dispatcher
import Examples
import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing

/// What a client sent and the seq it was acknowledged with.
enum SentAction: Sendable {
    case todo(Todo.Action)
    case counter(Counter.Action)
}

@Suite("Real processes: zflux cluster up, dispatch, state, view", .serialized, .timeLimit(.minutes(5)))
struct ClusterTests {
    @Test(
        "two clients × 1,000 actions; stores agree with the reduction of the acked actions; a late view agrees; junk changes nothing",
        arguments: ["ipc", "tcp"])
    func fullPipeline(transport: String) async throws {
        let cluster = try ClusterProcess(transport: transport)
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)

        // Two concurrent clients, each on its own thread with its own connection.
        let acked = Locked<[(UInt64, SentAction)]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<2 {
                group.addTask {
                    try await onThread {
                        let connection = try DispatchConnection(intake: topology.dispatcher.intake)
                        defer { connection.close() }
                        for i in 0..<1000 {
                            let sent: SentAction, app: String, type: String, payload: [UInt8]
                            switch i % 4 {
                            case 0:
                                sent = .counter(.addTapped(amount: i))
                                (app, type, payload) = ("counter", "addTapped", try JSONPayloadCodec().encode(Counter.Action.addTapped(amount: i)))
                            case 3:
                                // Order-sensitive: which item a toggle hits depends on what came before.
                                sent = .todo(.toggleTodo(index: i % 7))
                                (app, type, payload) = ("todo", "toggleTodo", try JSONPayloadCodec().encode(Todo.Action.toggleTodo(index: i % 7)))
                            default:
                                let action = Todo.Action.addTodo(title: "client \(client) item \(i)")
                                sent = .todo(action)
                                (app, type, payload) = ("todo", "addTodo", try JSONPayloadCodec().encode(action))
                            }
                            let outcome = try connection.dispatch(app: app, actionType: type, payload: payload)
                            guard case .acknowledged(let seq) = outcome else {
                                Issue.record("dispatch \(i) of client \(client): \(outcome)")
                                return
                            }
                            acked.withLock { $0.append((seq, sent)) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let sent = acked.withLock { $0 }.sorted { $0.0 < $1.0 }
        #expect(sent.map(\.0) == Array(1...2000), "2,000 acknowledged actions with seqs 1…2000, no hole or repeat")

        var expectedTodo = Todo.State()
        var expectedCounter = Counter.State()
        for (_, action) in sent {
            switch action {
            case .todo(let a): _ = Todo.reducer(&expectedTodo, a, .live)
            case .counter(let a): _ = Counter.reducer(&expectedCounter, a, .live)
            }
        }

        // Every store reaches version 2,000 with exactly the reduced state (read through the CLI).
        let todo = try await waitForState(cluster, "todo", version: 2000, as: Todo.State.self)
        let counter = try await waitForState(cluster, "counter", version: 2000, as: Counter.State.self)
        #expect(todo == expectedTodo)
        #expect(counter == expectedCounter)

        // A view that joins now shows the same final state.
        let view = try ViewProcess(runDir: cluster.runDir, stores: ["todo", "counter"])
        defer { view.stop() }
        #expect(try JSONDecoder().decode(Todo.State.self, from: try await view.waitForVersion(store: "todo", 2000)) == expectedTodo)
        #expect(try JSONDecoder().decode(Counter.State.self, from: try await view.waitForVersion(store: "counter", 2000)) == expectedCounter)
        #expect(view.versionsNeverWentBack)

        // Junk at every bound socket: every node keeps running and no state changes.
        let endpoints =
            [topology.dispatcher.intake, topology.dispatcher.actions, topology.dispatcher.replay]
            + topology.stores.flatMap { [$0.state, $0.snapshot] }
        for endpoint in endpoints { Hostile.rawBytes(to: endpoint) }
        for endpoint in [topology.dispatcher.intake, topology.dispatcher.replay] + topology.stores.map(\.snapshot) {
            try Hostile.garbageMessages(to: endpoint)
        }
        for (name, pid) in cluster.nodePids { #expect(kill(pid, 0) == 0, "\(name) died from junk input") }
        let status = try cluster.zflux(["status"])
        #expect(status.status == 0, "every node answers status: \(status.stderr)")
        #expect(try await waitForState(cluster, "todo", version: 2000, as: Todo.State.self) == expectedTodo)
        #expect(try await waitForState(cluster, "counter", version: 2000, as: Counter.State.self) == expectedCounter)
        #expect(status.stdout.contains("\"head\":2000"), "junk was never sequenced: \(status.stdout)")

        // The CLI contract still holds afterwards.
        let ok = try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"Buy milk"}"#])
        #expect(ok.status == 0 && ok.stdout == "2001\n", "\(ok)")
        let refused = try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"ab"}"#])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("at least 3 characters"))
        let state = try await waitForState(cluster, "todo", version: 2001, as: Todo.State.self)
        #expect(state.todos.first?.title == "Buy milk", "a new todo goes to the top")
    }

    @Test("killing the supervisor outright (kill -9) still leaves no node behind")
    func noOrphans() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { try? FileManager.default.removeItem(atPath: cluster.runDir) }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)
        #expect(cluster.nodePids.count == 1 + topology.stores.count)
        cluster.killSupervisorOutright()
        for (name, pid) in cluster.nodePids {
            #expect(waitUntilGone(pid), "\(name) (pid \(pid)) was orphaned")
        }
        let sockets = try FileManager.default.contentsOfDirectory(atPath: cluster.runDir).filter { $0.hasSuffix(".sock") }
        #expect(sockets.isEmpty, "nodes that stop on their own remove their socket files: \(sockets)")
    }

    @Test("clear errors: no cluster, unknown store, unknown app, second cluster in the same run directory")
    func clearErrors() async throws {
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let empty = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let none = try zflux(["state", "todo", "--run-dir", empty])
        #expect(none.status != 0 && none.stderr.contains("zflux cluster up"), "\(none)")

        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let unknownStore = try cluster.zflux(["state", "nosuch"])
        #expect(unknownStore.status != 0 && unknownStore.stderr.contains("no store 'nosuch'"))
        let unknownApp = try cluster.zflux(["dispatch", "nosuch", "x"])
        #expect(unknownApp.status != 0 && unknownApp.stderr.contains("unknown app 'nosuch'"))
        #expect(unknownApp.stderr.contains("(the dispatcher takes actions for: counter, "), "\(unknownApp.stderr)")
        let second = try cluster.zflux(["cluster", "up"])
        #expect(second.status != 0 && second.stderr.contains("already running"))
        // The refused second start must not have disturbed the first.
        #expect(try cluster.zflux(["status"]).status == 0)
    }

    @Test(
        "cluster up --ha where a single dispatcher's journal lies at the top of journal/ refuses, says where it is and which section of OPERATIONS moves it, and every record stays"
    )
    func pairBesideSingleJournal() throws {
        let operations = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/OPERATIONS.md"),
            encoding: .utf8)
        let section = "From a single dispatcher to a pair"
        #expect(operations.contains("**\(section).**"), "OPERATIONS.md still has the section the refusal names")
        var template = Array("/tmp/zf-single-XXXXXX".utf8CString)
        let run = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: run) }
        try FileManager.default.createDirectory(atPath: run + "/journal/d1", withIntermediateDirectories: true)
        try PairFailoverTests.singleDispatcherJournal(at: run + "/journal", count: 12)
        // d1 as a pair started beside it before would have left it: an empty journal, whose segment holds nothing.
        _ = try Journal(directory: run + "/journal/d1")

        let refused = try zflux(["cluster", "up", "--ha", "--run-dir", run, "--supervisor-pid", String(getpid())])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("\(run)/journal holds a single dispatcher's journal (1 segment file)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("docs/OPERATIONS.md") && refused.stderr.contains("\"\(section)\""), "\(refused.stderr)")
        #expect(!refused.stderr.contains("etcd for the pair"), "refused before its etcd starts: \(refused.stderr)")
        #expect(try Journal(directory: run + "/journal", repair: false).lastSeq == 12, "every record is where it was")
        #expect(try Journal(directory: run + "/journal/d1", repair: false).lastSeq == 0)
        #expect(!FileManager.default.fileExists(atPath: run + "/journal/d2") && !FileManager.default.fileExists(atPath: run + "/etcd"))

        // Without d1 at all, the same.
        try FileManager.default.removeItem(atPath: run + "/journal/d1")
        let again = try zflux(["cluster", "up", "--ha", "--run-dir", run, "--supervisor-pid", String(getpid())])
        #expect(again.status == 1 && again.stderr.contains("holds a single dispatcher's journal"), "\(again)")
        #expect(!FileManager.default.fileExists(atPath: run + "/journal/d1"), "nothing was made for the pair")
    }
}

/// One line of `zflux state`.
struct StateReply<S: Decodable>: Decodable {
    var version: UInt64
    var state: S
}

/// Polls `zflux state STORE` until it reports `version` (bounded), then decodes the state.
func waitForState<S: Decodable>(
    _ cluster: ClusterProcess, _ store: String, version: UInt64, as: S.Type,
    timeout: Duration = .seconds(30)
) async throws -> S {
    var last = "", state: S? = nil
    do {
        try await eventually("store \(store) to reach version \(version)", timeout: timeout, interval: .milliseconds(50)) {
            let result = try cluster.zflux(["state", store])
            last = result.stdout + result.stderr
            // Dates are ISO 8601 texts in what `state` prints, which JSONPayloadCodec reads.
            guard result.status == 0, let reply = try? JSONPayloadCodec().decode(StateReply<S>.self, from: Array(result.stdout.utf8))
            else { return false }
            #expect(reply.version <= version, "store \(store) went past version \(version)")
            if reply.version == version { state = reply.state }
            return state != nil
        }
    } catch {
        Issue.record("last answer: \(last)\n\(cluster.logs())")
        throw error
    }
    return try #require(state)
}
