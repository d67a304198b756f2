import Dispatcher
import Examples
import FluxCore
import Foundation
import NodeSupport
import StoreNode
import Testing
import ZeroMQ

@Suite("Intake limits")
struct LimitTests {
    func dispatcher(_ configure: (inout DispatcherNode.Configuration) -> Void) async throws -> (DispatcherNode, Task<Void, Error>, String) {
        let topology = try Topology.make(transport: .inproc, runDirectory: "limits-\(UInt64.random(in: 0...UInt64.max))", stores: [])
        var configuration = DispatcherNode.Configuration(topology: topology, apps: Catalog.apps)
        configure(&configuration)
        let node = try DispatcherNode(configuration: configuration, logger: .init(label: "test"))
        let task = Task { try await node.run() }
        try await node.ready.wait()
        return (node, task, topology.dispatcher.intake)
    }

    func send(_ socket: Socket, client: UInt64, seq: UInt64, payload: [UInt8], type: String = "addTodo") throws -> Message {
        try socket.send(
            Message(topic: "todo", header: Header(kind: .dispatch, clientID: client, clientSeq: seq, actionType: type), payload: payload).frames)
        return try Message(frames: try #require(try receiveWithin(socket)))
    }

    @Test(
        "a connection over its rate gets NACK 'rate limited', never a silent drop, whatever client ids it uses; a retry of a sequenced action still gets its ACK"
    )
    func rateLimit() async throws {
        let (node, task, intake) = try await dispatcher { $0.clientRate = 2 }
        let socket = try Socket(.shared, .dealer)
        defer { socket.close() }
        try socket.connect(intake)
        let payload = Array(#"{"addTodo":{"title":"tea"}}"#.utf8)
        var kinds: [MessageKind] = []
        var reasons: Set<String> = []
        for seq in 1...20 {
            let reply = try send(socket, client: 1, seq: UInt64(seq), payload: payload)
            kinds.append(reply.kind)
            if reply.kind == .nack {
                reasons.insert(String(decoding: reply.payload, as: UTF8.self))
                #expect(reply.header.flags.contains(.retryLater), "a rate limit says: try again later")
            }
        }
        #expect(kinds.count == 20, "every dispatch was answered")
        #expect(kinds.prefix(2).allSatisfy { $0 == .ack }, "the burst is allowed")
        #expect(kinds.filter { $0 == .nack }.count >= 10)
        #expect(reasons == ["rate limited: this client may dispatch 2 actions per second"])
        #expect(try send(socket, client: 1, seq: 1, payload: payload).kind == .ack, "a retry is answered from dedup, not limited")
        #expect(try send(socket, client: 2, seq: 1, payload: payload).kind == .nack, "a new client id on the same connection shares its budget")
        let other = try Socket(.shared, .dealer)
        defer { other.close() }
        try other.connect(intake)
        #expect(try send(other, client: 2, seq: 1, payload: payload).kind == .ack, "each connection has its own budget")
        node.stop()
        try await task.value
    }

    @Test("payloads over the limit, global or per action type, are NACKed with the sizes")
    func payloadLimit() async throws {
        let (node, task, intake) = try await dispatcher {
            $0.maxPayloadBytes = 200
            $0.maxPayloadBytesByType = ["todo.addTodo": 40]
        }
        let socket = try Socket(.shared, .dealer)
        defer { socket.close() }
        try socket.connect(intake)
        let long = Array(#"{"addTodo":{"title":"a title that is too long"}}"#.utf8)
        let reply = try send(socket, client: 1, seq: 1, payload: long)
        #expect(reply.kind == .nack)
        #expect(String(decoding: reply.payload, as: UTF8.self) == "the payload of todo.addTodo is \(long.count) bytes; the limit is 40")
        #expect(
            try send(socket, client: 1, seq: 2, payload: Array(#"{"addTodo":{"title":"ok"}}"#.utf8)).kind == .nack,
            "too short a title is still refused by the app")
        #expect(try send(socket, client: 1, seq: 3, payload: Array(#"{"addTodo":{"title":"fine"}}"#.utf8)).kind == .ack)
        let big = Array(("{\"removeTodo\":{\"index\":1" + String(repeating: " ", count: 300) + "}}").utf8)
        let bigReply = try send(socket, client: 1, seq: 4, payload: big, type: "removeTodo")
        #expect(String(decoding: bigReply.payload, as: UTF8.self).contains("the limit is 200"))
        node.stop()
        try await task.value
    }

    @Test("high-water marks are lowered so that a peer's queue of the largest messages fits queue_bytes")
    func highWaterMarksInBytes() throws {
        var topology = try Topology.make(transport: .inproc, runDirectory: "hwm", stores: [("todo", "todo")])
        // Defaults: 1 MiB payloads, 1 GiB per peer.
        let plain = DispatcherNode.Configuration(topology: topology, apps: Catalog.apps)
        #expect(Int(plain.effectivePublishHighWaterMark) * plain.largestActionMessage <= SocketDefaults.queueBytes)
        #expect(plain.effectivePublishHighWaterMark >= 1000)
        // Small payloads keep the configured count; the largest payload allowed gets a few messages.
        topology.limits = .init(maxPayloadBytes: 512)
        #expect(DispatcherNode.Configuration(topology: topology, apps: Catalog.apps).effectivePublishHighWaterMark == 100_000)
        topology.queueBytes = 64 << 20
        topology.limits = .init(maxPayloadBytes: 512, maxPayloadBytesByType: ["todo.addTodo": SocketDefaults.maxPayloadBytes])
        let large = DispatcherNode.Configuration(topology: topology, apps: Catalog.apps)
        #expect(large.effectivePublishHighWaterMark == 4)
        let store = StoreNode.Configuration(topology: topology, store: topology.stores[0], app: Catalog.apps[0])
        #expect(Int(store.effectivePublishHighWaterMark) * StoreNode.Configuration.largestSentMessage <= 64 << 20)
        #expect(store.effectivePublishHighWaterMark >= 1)
        #expect(SocketDefaults.highWaterMark(queueBytes: 10, largestMessage: 1 << 20, ceiling: 100) == 1)
    }
}
