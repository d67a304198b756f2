import Examples
import FluxCore
import NodeCores
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

    enum Bell {
        struct State: Codable, Equatable, Sendable { var rings = 0 }
        enum Action: Codable, Equatable, Sendable {
            case rung
            case echoed
        }
        /// Counts each admitted action under its origin, as a team's middleware would before trusting one.
        static func app() -> FluxApp<State, Action, Void> {
            FluxApp(
                name: "bell", initialState: State(),
                reducer: Reducer { state, _, _ in
                    state.rings += 1; return .none
                }, environment: (),
                middleware: [Middleware("origin", rewrites: false) { _, context in context.count("origin.\(context.origin)") }],
                actions: [.user(.rung, "a ring"), .effect(.echoed, "an effect's echo")])
        }
    }

    @Test(
        "middleware sees where an action came from: a client, an effect (with the effect token), a release from quarantine, or unverified where the cluster has no token"
    )
    func origin() throws {
        let token: UInt64 = 0xE_FFEC7
        func send(_ core: DispatcherCore, _ type: String, ref: UInt64, clientSeq: UInt64) {
            let payload = try! WireCodec().encode(type == "rung" ? Bell.Action.rung : .echoed)
            core.receivedIntake(
                .success(
                    Message(
                        topic: "bell", header: Header(kind: .dispatch, ref: ref, clientID: 3, clientSeq: clientSeq, actionType: type),
                        payload: payload)),
                from: [1], now: F.at(0))
        }
        func counts(_ core: DispatcherCore) -> [String: UInt64] {
            let status = core.status(now: F.at(1), pid: 1, subscribers: 0, journalBytes: 0)
            return Dictionary(uniqueKeysWithValues: (status.middlewareCounts ?? []).map { ($0.key, $0.count) })
        }

        var rules = DispatcherRules(apps: [Bell.app()])
        rules.effectToken = token
        let guarded = DispatcherCore(rules: rules, head: 0, history: F.history, now: F.at(0), logger: F.logger)
        send(guarded, "rung", ref: 0, clientSeq: 1)
        send(guarded, "echoed", ref: token, clientSeq: 2)
        send(guarded, "rung", ref: token, clientSeq: 3)
        guarded.endOfBurst()
        guarded.quarantined([Quarantine(seq: 3, app: "bell", actionType: "rung", reason: "test")])
        let released = try guarded.releaseQuarantined(
            3,
            dispatch: Message(
                topic: "bell", header: Header(kind: .dispatch, clientID: 3, clientSeq: 4, actionType: "rung"),
                payload: WireCodec().encode(Bell.Action.rung)),
            from: [2], now: F.at(2))
        #expect(released == 4)
        #expect(counts(guarded) == ["origin.client": 1, "origin.effect": 2, "origin.release": 1])

        let open = F.makeDispatcher(apps: [Bell.app()])
        send(open, "rung", ref: 0, clientSeq: 1)
        send(open, "echoed", ref: 0, clientSeq: 2)
        open.endOfBurst()
        #expect(counts(open) == ["origin.unverified": 2])
    }
}
