import Examples
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("Middleware and higher-order reducers")
struct MiddlewareTests {
    func admit(_ app: some AnyApp, _ action: Todo.Action, host: RecordingMiddlewareHost, client: UInt64 = 4) throws -> Todo.Action {
        let payload = try JSONPayloadCodec().encode(action)
        let admitted = try app.admit(actionType: ActionCoding.caseName(of: action), payload: payload, client: client, host: host)
        return try WireCodec().decode(Todo.Action.self, from: admitted)
    }

    @Test("todo's chain runs in order: the title is trimmed, then checked, then logged and counted")
    func todoChain() throws {
        let host = RecordingMiddlewareHost()
        let app = Todo.app(environment: .mock())
        #expect(try admit(app, .addTodo(title: "  Milk \n"), host: host) == .addTodo(title: "Milk"))
        let refused = #expect(throws: ActionError.self) { try admit(app, .addTodo(title: "  ab  "), host: host) }
        #expect(refused?.reason == "a todo title needs at least 3 characters (not counting spaces at its ends)")
        #expect(try admit(app, .toggleTodo(index: 0), host: host, client: 9) == .toggleTodo(index: 0))
        #expect(host.counts == ["todo.addTodo": 1, "todo.toggleTodo": 1], "a refused action stops the chain before it is counted")
        #expect(host.logged == [#"todo log: addTodo(title: "Milk")"#, "todo log: toggleTodo(index: 0)"])
    }

    @Test("a rewrite keeps the codec the action came in; a chain without rewrites hands the payload on untouched")
    func codecs() throws {
        let host = RecordingMiddlewareHost()
        let app = Todo.app(environment: .mock())
        let binary = try app.wirePayload(type: "addTodo", argumentsJSON: Array(#"{"title":" Tea "}"#.utf8), format: .binary)
        let rewritten = try app.admit(actionType: "addTodo", payload: binary, client: 1, host: host)
        #expect(WireCodec.isBinary(rewritten))
        #expect(try WireCodec().decode(Todo.Action.self, from: rewritten) == .addTodo(title: "Tea"))
        let counter = Counter.app()
        let json = Array(#"{"resetTapped":{}}"#.utf8)
        #expect(try counter.admit(actionType: "resetTapped", payload: json, client: 1, host: host) == json)
    }

    @Test("a middleware may rewrite an action but not change its type")
    func typeIsKept() {
        let app = FluxApp<Counter.State, Counter.Action, Void>(
            name: "counter", initialState: .init(), reducer: Reducer { _, _, _ in .none }, environment: (),
            middleware: [.enrich { $0 = .resetTapped }])
        let error = #expect(throws: ActionError.self) {
            _ = try app.admit(
                actionType: "incrementTapped", payload: Array(#"{"incrementTapped":{}}"#.utf8), client: 1, host: RecordingMiddlewareHost())
        }
        #expect(error?.reason == "counter's middleware turned incrementTapped into resetTapped; it may rewrite an action, not change its type")
    }

    @Test("logging reports each action with its stamp and what it did to the state")
    func logging() {
        let lines = Locked<[String]>([])
        let reducer = Counter.reducer.logging("counter") { line in lines.withLock { $0.append(line) } }
        var state = Counter.State()
        _ = reducer(&state, .incrementTapped, .live, stamp: Stamp(seq: 7, time: Date(timeIntervalSince1970: 0)))
        _ = reducer(&state, .addTapped(amount: 0), .live)
        #expect(state.count == 1)
        #expect(
            lines.withLock { $0 } == [
                "counter #7 incrementTapped:\n  - State(count: 0)\n  + State(count: 1)",
                "counter addTapped(amount: 0): state unchanged",
            ])
    }

    @Test("onChange runs after any action that changed the watched value, with the old value, and merges effects")
    func onChange() async {
        let seen = Locked<[Int]>([])
        let reducer = Counter.reducer.onChange(of: \.count) { state, old, _ in
            seen.withLock { $0.append(old) }
            return .none
        }
        var state = Counter.State()
        _ = reducer(&state, .incrementTapped, .live)
        _ = reducer(&state, .addTapped(amount: 0), .live)
        _ = reducer(&state, .addTapped(amount: 2), .live)
        #expect(seen.withLock { $0 } == [0, 1])
    }

    @Test("reducers read the action's stamp; scoped and combined reducers pass it on")
    func stamps() {
        struct Parent: Equatable { var child = 0.0 }
        let child = Reducer<Double, Int, Void> { state, _, _, stamp in
            state = stamp.time.timeIntervalSince1970 + Double(stamp.seq)
            return .none
        }
        let parent = Reducer<Parent, Int, Void>.combine(child.scope(state: \.child, action: { $0 }, embed: { $0 }, environment: { _ in () }))
        var state = Parent()
        _ = parent(&state, 1, (), stamp: Stamp(seq: 3, wallNanoseconds: 5_000_000_000))
        #expect(state.child == 8)
    }
}
