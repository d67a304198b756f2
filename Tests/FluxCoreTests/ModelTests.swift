import Examples
import FluxTesting
import Foundation
import Testing

@testable import FluxCore
@testable import FluxFormat
@testable import FluxProtocol

@Suite("Actions on the wire")
struct ActionCodingTests {
    @Test("case names come from the enum, with or without arguments")
    func caseNames() {
        #expect(ActionCoding.caseName(of: Todo.Action.addTodo(title: "x")) == "addTodo")
        #expect(ActionCoding.caseName(of: Todo.Action.clearCompleted) == "clearCompleted")
        #expect(ActionCoding.caseName(of: Counter.Action.addTapped(amount: 3)) == "addTapped")
    }

    @Test("CLI arguments become the synthesized Codable form and decode back")
    func cliArguments() throws {
        let app = Todo.app()
        let payload = try app.wirePayload(type: "addTodo", argumentsJSON: Array(#"{"title":"Buy milk"}"#.utf8))
        #expect(WireCodec.isBinary(payload), "the CLI's JSON is sent in the binary codec")
        #expect(try WireCodec().decode(Todo.Action.self, from: payload) == .addTodo(title: "Buy milk"))
        let bare = try Counter.app().wirePayload(type: "incrementTapped", argumentsJSON: [])
        #expect(try WireCodec().decode(Counter.Action.self, from: bare) == .incrementTapped)
        #expect(String(decoding: try app.actionJSON(fromWire: payload), as: UTF8.self) == #"{"addTodo":{"title":"Buy milk"}}"#)
    }

    @Test("bad actions are refused with a reason that names the problem")
    func refusals() {
        let app = Todo.app()
        func reason(_ type: String, _ args: String) -> String? {
            do { _ = try app.wirePayload(type: type, argumentsJSON: Array(args.utf8)); return nil } catch { return error.reason }
        }
        // An unknown action names the ones the app has.
        #expect(reason("nope", "{}")?.hasPrefix("todo has no action 'nope' (it has: addTodo, toggleTodo, ") == true)
        #expect(reason("addTodo", #"{"titl":"x"}"#)?.contains("missing field 'title'") == true)
        #expect(reason("addTodo", #"{"title":5}"#)?.contains("expected String") == true)
        #expect(reason("addTodo", #"{"title":"ab"}"#) == "a todo title needs at least 3 characters")
        #expect(reason("addTodo", "[1]")?.contains("must be a JSON object") == true)
        // Malformed JSON says so, instead of claiming the arguments are not an object (a new user's trial).
        #expect(reason("addTodo", #"{"title":"abc""#)?.hasPrefix("the arguments of 'addTodo' are not JSON") == true)
        #expect(reason("add-todo", "{}")?.contains("is not an action name") == true)
        #expect(reason("removeTodo", #"{"index":-1}"#) == "index must not be negative")
        // A binary payload cut short is called malformed, not a missing action (a client written from
        // PROTOCOL.md alone was told "counter has no action 'addTapped'").
        let counter = Counter.app()
        if let whole = try? counter.wirePayload(type: "addTapped", argumentsJSON: Array(#"{"amount":2}"#.utf8)) {
            for cut in [whole.count - 1, whole.count / 2, 2] {
                do {
                    try counter.check(actionType: "addTapped", payload: Array(whole.prefix(cut)))
                    Issue.record("a binary payload cut to \(cut) of \(whole.count) bytes was accepted")
                } catch {
                    #expect(error.reason.hasPrefix("the payload of counter.addTapped is not a well-formed binary value"), "\(error.reason)")
                }
            }
        } else {
            Issue.record("counter.addTapped did not encode")
        }
        // A payload whose case differs from the header's type is refused too.
        #expect(throws: ActionError.self) {
            try app.check(actionType: "removeTodo", payload: Array(#"{"addTodo":{"title":"abc"}}"#.utf8))
        }
    }
}

extension ActionCodingTests {
    /// An action with no generated conformance: the store decodes it through `Codable`.
    enum Tally: Codable, Equatable, Sendable { case add(amount: Int), clear }

    @Test("a store's runtime applies a binary Codable action, and refuses a bad one with the reason the app's decode gives")
    func runtimeDecode() throws {
        let app = FluxApp<Int, Tally, Void>(
            name: "tally", initialState: 0,
            reducer: Reducer { state, action, _ in
                switch action {
                case .add(let amount): state += amount
                case .clear: state = 0
                }
                return .none
            }, environment: (), actions: [.user(.add(amount: 1), "adds"), .user(.clear, "clears")])
        let runtime = app.makeRuntime { _, _, _ in }
        let add = try WireCodec(.binary).encode(Tally.add(amount: 5))
        for _ in 0..<3 { _ = try runtime.reduce(app: "tally", actionType: "add", payload: add, stamp: .unstamped) }
        #expect(try WireCodec().decode(Int.self, from: runtime.encodedState()) == 15)
        func refusal(_ payload: [UInt8]) -> String? {
            do { _ = try runtime.reduce(app: "tally", actionType: "add", payload: payload, stamp: .unstamped) } catch { return error.reason }
            return nil
        }
        let cut = Array(add.dropLast())
        #expect(refusal(cut) == "the payload of tally.add is not a well-formed binary value (\(cut.count) bytes)")
        let text = try WireCodec(.binary).encode(["add": ["amount": "five"]])
        #expect(refusal(text)?.hasPrefix("bad arguments for tally.add: ") == true, "\(refusal(text) ?? "accepted")")
        let other = try WireCodec(.binary).encode(["nope": [String: Int]()])
        #expect(refusal(other)?.hasPrefix("tally has no action 'add'") == true, "\(refusal(other) ?? "accepted")")
        #expect(refusal(Array(#"{"add":{"amount":2}}"#.utf8)) == nil, "JSON still decodes")
        #expect(try WireCodec().decode(Int.self, from: runtime.encodedState()) == 17, "refused actions left the state alone")
    }
}

@Suite("Reducers and effects")
struct ModelTests {
    @Test("the todo reducer adds, toggles, removes and clears; its title counts")
    func todoReducer() {
        var state = Todo.State()
        let env = Todo.Environment.mock()
        _ = Todo.reducer(&state, .addTodo(title: "Buy milk"), env)
        _ = Todo.reducer(&state, .addTodo(title: "Walk dog"), env)
        #expect(state.title == "TODO - (2)")
        _ = Todo.reducer(&state, .toggleTodo(index: 0), env)
        #expect(state.todos[0].done)
        _ = Todo.reducer(&state, .removeTodo(index: 7), env)
        #expect(state.todos.count == 2, "an index out of range changes nothing")
        _ = Todo.reducer(&state, .clearCompleted, env)
        #expect(state.todos == [Todo.Item(title: "Buy milk")], "the newest todo is at the top, so index 0 was Walk dog")
    }

    @Test("combined reducers run in order and merge their effects")
    func combine() async {
        let log = Locked<[Int]>([])
        let first = Reducer<Int, Int, Void> { state, action, _ in
            state += action
            return .fireAndForget { log.withLock { $0.append(1) } }
        }
        let second = Reducer<Int, Int, Void> { state, action, _ in
            state *= 10
            return .send(action + 1)
        }
        var state = 1
        let effect = Reducer.combine(first, second)(&state, 2, ())
        #expect(state == 30)
        let sent = Locked<[Int]>([])
        let runner = EffectRunner<Int>(send: Send { value in sent.withLock { $0.append(value) } })
        runner.run(effect)
        #expect(await runner.waitUntilIdle(timeout: .seconds(30)))
        #expect(sent.withLock { $0 } == [3])
        #expect(log.withLock { $0 } == [1])
        #expect(Effect<Int>.none.isNone)
    }

    @Test("cancellable effects: cancel(id:) stops them, cancelInFlight replaces the older one")
    func cancellation() async {
        enum ID: Hashable, Sendable { case slow }
        let sent = Locked<[Int]>([])
        let runner = EffectRunner<Int>(send: Send { value in sent.withLock { $0.append(value) } })
        func slow(_ value: Int) -> Effect<Int> {
            Effect<Int>.run { send in
                try? await Task.sleep(for: .seconds(30))
                send(value)
            }.cancellable(id: ID.slow, cancelInFlight: true)
        }
        runner.run(slow(1))
        runner.run(slow(2))
        #expect(runner.inFlight == 1, "starting the second cancelled the first")
        runner.run(.cancel(id: ID.slow))
        #expect(await runner.waitUntilIdle(timeout: .seconds(30)))
        #expect(sent.withLock { $0 }.isEmpty, "a cancelled effect sends nothing")
    }

    @Test("reduce hands the effects back unstarted; they run only when started on an EffectTasks")
    func pendingEffects() async throws {
        let app = FluxApp<Int, Counter.Action, Void>(
            name: "echo", initialState: 0,
            reducer: Reducer { state, action, _ in
                if case .addTapped(let n) = action { state += n; return .send(.incrementTapped) }
                return .none
            },
            environment: ())
        let delivered = Locked<[String]>([])
        let runtime = app.makeRuntime { _, type, _ in delivered.withLock { $0.append(type) } }
        let add = Array(#"{"addTapped":{"amount":5}}"#.utf8)
        #expect(try runtime.reduce(app: "other", actionType: "addTapped", payload: add, stamp: .unstamped) == nil, "not its action")
        let effects = try #require(try runtime.reduce(app: "echo", actionType: "addTapped", payload: add, stamp: .unstamped))
        #expect(try WireCodec().decode(Int.self, from: runtime.encodedState()) == 5 && !effects.isEmpty)
        try await Task.sleep(for: .milliseconds(20))
        #expect(delivered.withLock { $0 }.isEmpty && runtime.effectsInFlight == 0, "nothing started")
        let tasks = EffectTasks()
        tasks.run(effects)
        #expect(await tasks.waitUntilIdle(timeout: .seconds(30)))
        #expect(delivered.withLock { $0 } == ["incrementTapped"])
        let increment = Array(#"{"incrementTapped":{}}"#.utf8)
        let none = try #require(try runtime.reduce(app: "echo", actionType: "incrementTapped", payload: increment, stamp: .unstamped))
        #expect(none.isEmpty, "an action whose reducer asks for no effect")
    }

    @Test("scope lifts a child reducer into a parent's state and actions")
    func scope() {
        struct Parent: Equatable { var count = 0; var other = "x" }
        enum ParentAction: Equatable { case child(Int), unrelated }
        let child = Reducer<Int, Int, Void> { state, action, _ in
            state += action; return .none
        }
        let parent = child.scope(
            state: \Parent.count,
            action: { if case .child(let n) = $0 { n } else { nil } },
            embed: ParentAction.child,
            environment: { (_: Void) in () })
        var state = Parent()
        _ = parent(&state, .child(5), ())
        _ = parent(&state, .unrelated, ())
        #expect(state == Parent(count: 5, other: "x"))
    }

    @Test("a hosted app applies its own actions, ignores others, and runs effects only when told")
    func runtime() async throws {
        let app = FluxApp<Int, Counter.Action, Void>(
            name: "echo", initialState: 0,
            reducer: Reducer { state, action, _ in
                if case .addTapped(let n) = action { state += n; return .send(.incrementTapped) }
                if case .incrementTapped = action { state += 1 }
                return .none
            },
            environment: ())
        let delivered = Locked<[(String, String, String)]>([])
        let runtime = app.makeRuntime { app, type, payload in
            let json = (try? JSONPayloadCodec().encode(try WireCodec().decode(Counter.Action.self, from: payload))) ?? []
            delivered.withLock { $0.append((app, type, String(decoding: json, as: UTF8.self))) }
        }
        let add = Array(#"{"addTapped":{"amount":5}}"#.utf8)
        #expect(try runtime.apply(app: "other", actionType: "addTapped", payload: add, stamp: .unstamped, runEffects: true) == false)
        #expect(try runtime.apply(app: "echo", actionType: "addTapped", payload: add, stamp: .unstamped, runEffects: false))
        #expect(try runtime.apply(app: "echo", actionType: "addTapped", payload: add, stamp: .unstamped, runEffects: true))
        #expect(try WireCodec().decode(Int.self, from: runtime.encodedState()) == 10)
        while runtime.effectsInFlight > 0 { try await Task.sleep(for: .milliseconds(1)) }
        let sent = delivered.withLock { $0 }
        #expect(sent.count == 1, "the replayed-style apply (runEffects: false) ran no effect")
        #expect(sent.first?.0 == "echo" && sent.first?.1 == "incrementTapped" && sent.first?.2 == #"{"incrementTapped":{}}"#)
        #expect(throws: ActionError.self) {
            try runtime.apply(app: "echo", actionType: "addTapped", payload: Array("{".utf8), stamp: .unstamped, runEffects: true)
        }
        #expect(try WireCodec().decode(Int.self, from: runtime.encodedState()) == 10, "a refused action leaves the state as it was")
    }

    @Test("elapsed time never traps when a stamp is newer than the `now` it is compared with")
    func elapsed() {
        func at(_ milliseconds: UInt64) -> NodeTime { NodeTime(milliseconds: milliseconds, wallNanoseconds: 0) }
        #expect(at(250).elapsed(since: 100) == 150)
        #expect(at(250).elapsed(since: 251) == 0, "a store once crashed here: replay stamped after `now` was read")
        #expect(at(0).elapsed(since: .max) == 0)
    }

    @Test("dependency cycles are rejected with the cycle named")
    func cycles() throws {
        struct Named: AnyApp {
            let name: String, reads: [String]
            func check(actionType: String, payload: [UInt8]) throws(ActionError) {}
            func admit(
                actionType: String, payload: [UInt8], client: UInt64, origin: ActionOrigin, host: any MiddlewareHost
            ) throws(ActionError) -> [UInt8] { payload }
            func describe() -> AppDescription { AppDescription(name: name, summary: "", reads: reads, actions: []) }
            func wirePayload(type: String, argumentsJSON: [UInt8], format: WireCodec.Format) throws(ActionError) -> [UInt8] { [] }
            func makeRuntime(format: WireCodec.Format, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) -> any AppRuntime {
                fatalError()
            }
            func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { bytes }
            func render(wire bytes: [UInt8]) throws -> String { "" }
            func actionJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { bytes }
            func makeReplica(format: WireCodec.Format) -> any StateReplica { fatalError() }
        }
        let error = #expect(throws: ActionError.self) {
            try DependencyGraph.check([Named(name: "a", reads: ["b"]), Named(name: "b", reads: ["c"]), Named(name: "c", reads: ["a"])])
        }
        #expect(error?.reason == "apps read each other in a cycle: a → b → c → a")
        try DependencyGraph.check([Named(name: "a", reads: ["b"]), Named(name: "b", reads: []), TodoStats.app(), Todo.app()])
        #expect(TodoStats.app().reads == ["todo"])
    }
}
