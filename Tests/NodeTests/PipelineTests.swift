import Dispatcher
import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import NodeCores
import NodeSupport
import StoreNode
import Synchronization
import Testing
import ViewNode
import ZeroMQ

@Suite("Nodes in one process (inproc)", .timeLimit(.minutes(2)))
struct PipelineTests {
    @Test("two concurrent clients: every store applies every action once, in seq order")
    func concurrentClients() async throws {
        let cluster = try await TestCluster.todoAndCounter()
        try await cluster.startStore("todo")
        try await cluster.startStore("counter")
        let acked = Locked<[(UInt64, Todo.Action)]>([])
        let counterTotal = Locked<Int>(0)
        let intake = cluster.topology.dispatcher.intake
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<2 {
                group.addTask {
                    let connection = try DispatchConnection(intake: intake)
                    defer { connection.close() }
                    for i in 0..<200 {
                        if i % 2 == 0 {
                            let action = Todo.Action.addTodo(title: "c\(client)-\(i)")
                            let payload = try JSONPayloadCodec().encode(action)
                            guard case .acknowledged(let seq) = try connection.dispatch(app: "todo", actionType: "addTodo", payload: payload) else {
                                Issue.record("not acknowledged"); return
                            }
                            acked.withLock { $0.append((seq, action)) }
                        } else {
                            let payload = try JSONPayloadCodec().encode(Counter.Action.addTapped(amount: i))
                            guard case .acknowledged = try connection.dispatch(app: "counter", actionType: "addTapped", payload: payload) else {
                                Issue.record("not acknowledged"); return
                            }
                            counterTotal.withLock { $0 += i }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let todoState = try await cluster.state(of: "todo", as: Todo.State.self, atLeast: 400)
        let counterState = try await cluster.state(of: "counter", as: Counter.State.self, atLeast: 400)
        #expect(todoState == expectedTodo(acked.withLock { $0 }))
        #expect(counterState.count == counterTotal.withLock { $0 })
        try await cluster.shutdown()
    }

    @Test("a store that joins late catches up from the replay service")
    func lateStoreReplays() async throws {
        let cluster = try await TestCluster.todoAndCounter()
        let connection = try DispatchConnection(intake: cluster.topology.dispatcher.intake)
        defer { connection.close() }
        // More than one replay answer's worth (64 batches × 512) is not needed; several batches are.
        for i in 0..<1500 {
            let payload = try JSONPayloadCodec().encode(Counter.Action.addTapped(amount: i))
            #expect(try connection.dispatch(app: "counter", actionType: "addTapped", payload: payload) == .acknowledged(seq: UInt64(i + 1)))
        }
        try await cluster.startStore("counter")
        let state = try await cluster.state(of: "counter", as: Counter.State.self, atLeast: 1500)
        #expect(state.count == (0..<1500).reduce(0, +))
        try await cluster.shutdown()
    }

    @Test("a store repairs gaps in the live stream, including a lost last action (seen by heartbeat)")
    func gapRepair() async throws {
        let cluster = try await TestCluster.todoAndCounter()
        let relay = try LossyRelay(from: cluster.topology.dispatcher.actions, dropEvery: 7, dropSeqs: [60])
        defer { relay.stop() }
        try await cluster.startStore("todo") { $0.dispatcherActions = relay.endpoint }
        // Make sure the relay's path is live before counting on it.
        try await eventually("the relay to carry heartbeats") { relay.forwarded.load(ordering: .relaxed) > 0 }
        let connection = try DispatchConnection(intake: cluster.topology.dispatcher.intake)
        defer { connection.close() }
        var acked: [(UInt64, Todo.Action)] = []
        for i in 0..<60 {
            let action = Todo.Action.addTodo(title: "item \(i)")
            guard
                case .acknowledged(let seq) = try connection.dispatch(
                    app: "todo", actionType: "addTodo", payload: try JSONPayloadCodec().encode(action))
            else {
                Issue.record("not acknowledged"); return
            }
            acked.append((seq, action))
        }
        let state = try await cluster.state(of: "todo", as: Todo.State.self, atLeast: 60)
        #expect(relay.dropped.load(ordering: .relaxed) >= 8, "the relay really dropped actions")
        #expect(state == expectedTodo(acked))
        try await cluster.shutdown()
    }

    @Test("a retried dispatch is acknowledged with its first seq and sequenced once")
    func deduplication() async throws {
        let cluster = try await TestCluster.todoAndCounter()
        let socket = try Socket(.shared, .dealer)
        defer { socket.close() }
        try socket.connect(cluster.topology.dispatcher.intake)
        let payload = try JSONPayloadCodec().encode(Counter.Action.incrementTapped)
        let dispatch = Message(
            topic: "counter", header: Header(kind: .dispatch, clientID: 99, clientSeq: 1, actionType: "incrementTapped"), payload: payload)
        var seqs: [UInt64] = []
        for _ in 0..<3 {
            try socket.send(dispatch.frames)
            let reply = try Message(frames: try #require(try receiveWithin(socket)))
            #expect(reply.kind == .ack)
            seqs.append(reply.header.seq)
        }
        #expect(seqs == [1, 1, 1])
        try await cluster.startStore("counter")
        let state = try await cluster.state(of: "counter", as: Counter.State.self, atLeast: 1)
        #expect(state.count == 1)
        try await cluster.shutdown()
    }

    @Test("bad input is NACKed with a reason and sequences nothing")
    func nacks() async throws {
        let cluster = try await TestCluster.todoAndCounter()
        let socket = try Socket(.shared, .dealer)
        defer { socket.close() }
        try socket.connect(cluster.topology.dispatcher.intake)
        func reason(_ frames: [[UInt8]]) throws -> String? {
            try socket.send(frames)
            let reply = try Message(frames: try #require(try receiveWithin(socket)))
            return reply.kind == .nack ? String(decoding: reply.payload, as: UTF8.self) : nil
        }
        func dispatch(_ app: String, _ type: String, _ json: String) -> [[UInt8]] {
            Message(
                topic: app, header: Header(kind: .dispatch, clientID: 5, clientSeq: UInt64.random(in: 1...1_000_000), actionType: type),
                payload: Array(json.utf8)
            ).frames
        }
        #expect(try reason(dispatch("nosuch", "x", "{}"))?.contains("unknown app 'nosuch'") == true)
        #expect(try reason(dispatch("todo", "nope", #"{"nope":{}}"#))?.hasPrefix("todo has no action 'nope' (it has: addTodo, ") == true)
        #expect(try reason(dispatch("todo", "addTodo", #"{"addTodo":{"title":"ab"}}"#)) == "a todo title needs at least 3 characters")
        #expect(try reason(dispatch("todo", "addTodo", #"{"addTodo":{"title":"#))?.contains("todo.addTodo") == true)
        #expect(
            try reason(dispatch("todo", "removeTodo", #"{"addTodo":{"title":"abc"}}"#)) == "the payload of todo.removeTodo holds a 'addTodo' action")
        #expect(try reason([Array("todo".utf8), [1, 2, 3], []])?.contains("bad message") == true)
        #expect(try reason([Array("todo".utf8)])?.contains("3 frames") == true)
        var wrongVersion = Header(kind: .dispatch, actionType: "addTodo").encoded()
        wrongVersion[2] = 9
        #expect(try reason([Array("todo".utf8), wrongVersion, []])?.contains("protocol version 9") == true)
        #expect(try reason(Message(header: Header(kind: .ack)).frames)?.contains("not ACK") == true)
        let status = try #require(
            try requestReply(
                endpoint: cluster.topology.dispatcher.intake,
                request: Message(header: Header(kind: .statusRequest)), expecting: .status))
        #expect(status.header.seq == 0, "nothing was sequenced")
        try await cluster.shutdown()
    }

    @Test("a view joining late gets a snapshot, then live updates, and ends equal to the store")
    func lateView() async throws {
        let cluster = try await TestCluster.todoAndCounter()
        try await cluster.startStore("todo")
        let connection = try DispatchConnection(intake: cluster.topology.dispatcher.intake)
        defer { connection.close() }
        for i in 0..<20 {
            _ = try connection.dispatch(
                app: "todo", actionType: "addTodo", payload: try JSONPayloadCodec().encode(Todo.Action.addTodo(title: "early \(i)")))
        }
        _ = try await cluster.state(of: "todo", as: Todo.State.self, atLeast: 20)
        let seen = Locked<[ViewUpdate]>([])
        try await cluster.startView("todo") { update in seen.withLock { $0.append(update) } }
        try await eventually("the view's snapshot") { seen.withLock { $0.last?.version } == 20 }
        for i in 0..<20 {
            _ = try connection.dispatch(
                app: "todo", actionType: "addTodo", payload: try JSONPayloadCodec().encode(Todo.Action.addTodo(title: "late \(i)")))
        }
        try await eventually("the view to reach version 40") { seen.withLock { $0.last?.version } == 40 }
        let updates = seen.withLock { $0 }
        #expect(updates.first?.version == 20, "the first thing shown is the snapshot")
        #expect(zip(updates, updates.dropFirst()).allSatisfy { $0.version <= $1.version }, "never goes back in time")
        #expect(updates.last?.connection == .live)
        let shown = try WireCodec().decode(Todo.State.self, from: try #require(updates.last?.state))
        #expect(shown == (try cluster.snapshot(of: "todo", as: Todo.State.self))?.state)
        try await cluster.shutdown()
    }
}

func receiveWithin(_ socket: Socket, milliseconds: Int = 5000) throws -> [[UInt8]]? {
    var poller = Poller()
    poller.add(.socket(socket))
    guard try poller.poll(timeoutMilliseconds: milliseconds) > 0 else { return nil }
    return try socket.receive(dontWait: true)
}

/// Sits between the dispatcher's action PUB and a store, dropping every n-th ACTION and the listed
/// seqs, to prove that stores repair what the network loses.
final class LossyRelay: Sendable {
    let endpoint = "inproc://relay-\(UInt64.random(in: 0...UInt64.max))"
    let dropped = Atomic<Int>(0)
    let forwarded = Atomic<Int>(0)
    private let control: NodeControl<Never>

    init(from upstream: String, dropEvery: UInt64, dropSeqs: Set<UInt64>) throws {
        control = try NodeControl()
        let downstream = try Socket(.shared, .pub)
        try downstream.bind(endpoint)
        let control = control
        // The sockets are handed to the relay thread and never touched here again.
        nonisolated(unsafe) let output = downstream
        let thread = Thread { [self] in
            defer { output.close() }
            guard let input = try? Socket(.shared, .sub) else { return }
            defer { input.close() }
            try? input.subscribe()
            try? input.connect(upstream)
            while !control.stopRequested {
                var poller = Poller()
                let i = poller.add(.socket(input))
                poller.add(.fileDescriptor(control.wake.descriptor))
                guard (try? poller.poll(timeoutMilliseconds: 100)) ?? 0 > 0, poller.isReadable(i) else { continue }
                while let frames = try? input.receive(dontWait: true) {
                    if let message = try? Message(frames: frames), message.kind == .action,
                        message.header.seq % dropEvery == 0 || dropSeqs.contains(message.header.seq)
                    {
                        self.dropped.add(1, ordering: .relaxed)
                        continue
                    }
                    _ = try? output.send(frames)
                    self.forwarded.add(1, ordering: .relaxed)
                }
            }
        }
        thread.start()
    }

    func stop() {
        control.requestStop()
    }
}
