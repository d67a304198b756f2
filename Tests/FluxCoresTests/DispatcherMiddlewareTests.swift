import Examples
import FluxCore
import FluxCores
import Testing

@Suite("Dispatcher middleware")
struct DispatcherMiddlewareTests {
    typealias F = CoreFixtures

    @Test("the chain runs before sequencing: what it rewrites is journaled and published, what it refuses is NACKed, counts show in STATUS")
    func chain() throws {
        let core = F.makeDispatcher(apps: [Todo.app(environment: .mock())])
        func dispatch(_ seq: UInt64, _ title: String) {
            let payload = try! JSONPayloadCodec().encode(Todo.Action.addTodo(title: title))
            core.receivedIntake(
                .success(
                    Message(topic: "todo", header: Header(kind: .dispatch, clientID: 1, clientSeq: seq, actionType: "addTodo"), payload: payload)),
                from: [1], now: F.at(0))
        }
        dispatch(1, "  Buy milk  ")
        dispatch(2, " ab ")
        core.endOfBurst()
        let commands = core.takeCommands()
        let nack = try #require(commands.compactMap(\.intakeReply).first { $0.kind == .nack })
        #expect(String(decoding: nack.payload, as: UTF8.self) == "a todo title needs at least 3 characters (not counting spaces at its ends)")
        let journaled = try #require(commands.compactMap(\.appended).first?.first)
        #expect(try WireCodec().decode(Todo.Action.self, from: journaled.payload) == .addTodo(title: "Buy milk"))
        #expect(
            core.status(now: F.at(1), pid: 1, subscribers: 0, journalBytes: 0).middlewareCounts == [MiddlewareCount(key: "todo.addTodo", count: 1)])
    }
}
