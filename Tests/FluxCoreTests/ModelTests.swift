import Examples
import Foundation
import Synchronization
import Testing
@testable import FluxCore

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
        #expect(try JSONDecoder().decode(Todo.Action.self, from: Data(payload)) == .addTodo(title: "Buy milk"))
        let bare = try Counter.app().wirePayload(type: "incrementTapped", argumentsJSON: [])
        #expect(try JSONDecoder().decode(Counter.Action.self, from: Data(bare)) == .incrementTapped)
    }

    @Test("bad actions are refused with a reason that names the problem")
    func refusals() {
        let app = Todo.app()
        func reason(_ type: String, _ args: String) -> String? {
            do { _ = try app.wirePayload(type: type, argumentsJSON: Array(args.utf8)); return nil } catch { return error.reason }
        }
        #expect(reason("nope", "{}") == "todo has no action 'nope'")
        #expect(reason("addTodo", #"{"titl":"x"}"#)?.contains("missing field 'title'") == true)
        #expect(reason("addTodo", #"{"title":5}"#)?.contains("expected String") == true)
        #expect(reason("addTodo", #"{"title":"ab"}"#) == "a todo title needs at least 3 characters")
        #expect(reason("addTodo", "[1]")?.contains("must be a JSON object") == true)
        #expect(reason("add-todo", "{}")?.contains("is not an action name") == true)
        #expect(reason("removeTodo", #"{"index":-1}"#) == "index must not be negative")
        // A payload whose case differs from the header's type is refused too.
        #expect(throws: ActionError.self) {
            try app.check(actionType: "removeTodo", payload: Array(#"{"addTodo":{"title":"abc"}}"#.utf8))
        }
    }
}

@Suite("Reducers and effects")
struct ModelTests {
    @Test("the todo reducer adds, toggles, removes and clears; its title counts")
    func todoReducer() {
        var state = Todo.State()
        let env = Todo.Environment()
        _ = Todo.reducer(&state, .addTodo(title: "Buy milk"), env)
        _ = Todo.reducer(&state, .addTodo(title: "Walk dog"), env)
        #expect(state.title == "TODO - (2)")
        _ = Todo.reducer(&state, .toggleTodo(index: 0), env)
        #expect(state.todos[0].done)
        _ = Todo.reducer(&state, .removeTodo(index: 7), env)
        #expect(state.todos.count == 2, "an index out of range changes nothing")
        _ = Todo.reducer(&state, .clearCompleted, env)
        #expect(state.todos == [Todo.Item(title: "Walk dog")])
    }

    @Test("combined reducers run in order and merge their effects")
    func combine() async {
        let log = Mutex<[Int]>([])
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
        let sent = Mutex<[Int]>([])
        await effect.run(send: Send { value in sent.withLock { $0.append(value) } })
        #expect(sent.withLock { $0 } == [3])
        #expect(log.withLock { $0 } == [1])
        #expect(Effect<Int>.none.isNone)
    }

    @Test("a hosted app applies wire actions and hands back its effects' actions in wire form")
    func runtime() async throws {
        let app = FluxApp<Int, Counter.Action, Void>(
            name: "echo", initialState: 0,
            reducer: Reducer { state, action, _ in
                if case .addTapped(let n) = action { state += n; return .send(.incrementTapped) }
                if case .incrementTapped = action { state += 1 }
                return .none
            },
            environment: ())
        let runtime = app.makeRuntime()
        let effect = try runtime.apply(actionType: "addTapped", payload: Array(#"{"addTapped":{"amount":5}}"#.utf8))
        #expect(try runtime.encodedState() == Array("5".utf8))
        let sent = Mutex<[(String, [UInt8])]>([])
        let runEffect = try #require(effect)
        await runEffect { type, payload in sent.withLock { $0.append((type, payload)) } }
        let delivered = sent.withLock { $0 }
        #expect(delivered.count == 1)
        #expect(delivered.first?.0 == "incrementTapped")
        #expect(delivered.first.map { String(decoding: $0.1, as: UTF8.self) } == #"{"incrementTapped":{}}"#)
        #expect(throws: ActionError.self) { try runtime.apply(actionType: "addTapped", payload: Array("{".utf8)) }
        #expect(try runtime.encodedState() == Array("5".utf8), "a refused action leaves the state as it was")
    }
}
