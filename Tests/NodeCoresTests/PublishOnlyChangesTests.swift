import Examples
import FluxCore
import NodeCores
import Testing

@Suite("Stores speak only when their state changes")
struct PublishOnlyChangesTests {
    typealias F = CoreFixtures

    static func action(_ seq: UInt64, app: String, _ type: String, _ arguments: String = "") throws -> Message {
        let payload = try #require(Catalog.app(named: app)).wirePayload(type: type, argumentsJSON: Array(arguments.utf8))
        return Message(topic: app, header: Header(kind: .action, seq: seq, timestamp: Int64(seq) * 1_000_000, actionType: type), payload: payload)
    }

    @Test("another app's actions, and its own that change nothing, publish nothing; heartbeats and snapshots say how far it got")
    func store() throws {
        let core = StoreCore(
            rules: F.storeRules(), snapshot: nil, effectClientID: 7, now: F.at(0), logger: F.logger
        ) { Counter.app().makeRuntime { _, _, _ in } }
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        _ = core.takeCommands()
        core.receivedFromDispatcher(try Self.action(1, app: "counter", "incrementTapped"), now: F.at(2))
        core.tick(now: F.at(2))
        #expect(core.takeCommands().compactMap(\.published).filter { $0.kind == .state }.map(\.header.seq) == [1])
        core.receivedFromDispatcher(try Self.action(2, app: "todo", "addTodo", #"{"title":"tea"}"#), now: F.at(3))
        core.receivedFromDispatcher(try Self.action(3, app: "counter", "addTapped", #"{"amount":0}"#), now: F.at(3))
        core.tick(now: F.at(3))
        #expect(core.version == 3)
        #expect(core.takeCommands().compactMap(\.published).filter { $0.kind == .state }.isEmpty, "count is still 1: nothing to say")
        core.tick(now: F.at(1000))
        let heartbeat = try #require(core.takeCommands().compactMap(\.published).first { $0.kind == .heartbeat })
        #expect(heartbeat.header.seq == 1 && heartbeat.header.ref == 3, "the state of version 1, current through 3")
        core.receivedRequest(Message(header: Header(kind: .snapshotRequest)), from: [1], now: F.at(1001))
        let reply = try #require(core.takeCommands().compactMap(\.snapshotReply).first?.message)
        #expect(reply.header.seq == 1 && reply.header.ref == 3)
        core.receivedFromDispatcher(try Self.action(4, app: "counter", "incrementTapped"), now: F.at(1002))
        core.tick(now: F.at(1002))
        let update = try #require(core.takeCommands().compactMap(\.published).first { $0.kind == .state })
        #expect(update.header.seq == 4 && update.header.ref == 1, "the next change follows the last one published")
    }

    @Test("a view learns from heartbeats how far its state is current, and shows it")
    func view() {
        let view = ViewCore(rules: ViewRules(store: "counter"), now: F.at(0), logger: F.logger)
        view.start(now: F.at(0))
        view.receivedSnapshot(
            Message(topic: "counter", header: Header(kind: .snapshot, flags: .fullState, seq: 2, ref: 4), payload: Array("2".utf8)), now: F.at(1))
        #expect(view.takeCommands().compactMap(\.shown).last.map { ($0.version, $0.currentThrough) } ?? (0, 0) == (2, 4))
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 2, ref: 9)), now: F.at(2))
        #expect(view.takeCommands().compactMap(\.shown).map(\.currentThrough) == [9])
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 2, ref: 9)), now: F.at(3))
        #expect(view.takeCommands().compactMap(\.shown).isEmpty, "nothing new: nothing shown again")
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 10, ref: 12)), now: F.at(4))
        #expect(view.takeCommands().contains { $0.asksForSnapshot }, "a change it never received")
    }
}
