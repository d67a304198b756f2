import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("Todo")
struct TodoTests {
    let saved = [Todo.Item(title: "Saved one"), Todo.Item(title: "Saved two", done: true)]

    @Test("adding (at the top, as the seed does), toggling, removing and clearing, with the title counting")
    func editing() async {
        let store = TestStore(Todo.app(environment: .mock()))
        await store.send(.addTodo(title: "Buy milk")) { $0.todos = [Todo.Item(title: "Buy milk")] }
        await store.send(.addTodo(title: "Walk dog")) { $0.todos.insert(Todo.Item(title: "Walk dog"), at: 0) }
        #expect(store.state.title == "TODO - (2)")
        await store.send(.toggleTodo(index: 0)) { $0.todos[0].done = true }
        await store.send(.toggleTodo(index: 9), rejectedWith: "there is no todo at index 9 (the list has 2)")
        await store.send(.removeTodo(index: 1)) { $0.todos.remove(at: 1) }
        await store.send(.removeTodo(index: 5), rejectedWith: "there is no todo at index 5 (the list has 1)")
        await store.send(.clearCompleted) { $0.todos = [] }
        #expect(store.state.title == "TODO - (0)")
        await store.finish()
    }

    @Test("a title shorter than 3 characters is refused before it is sequenced")
    func validation() {
        #expect(Todo.validate(.addTodo(title: "ab")) == "a todo title needs at least 3 characters")
        #expect(Todo.validate(.addTodo(title: "abc")) == nil)
        #expect(Todo.validate(.removeTodo(index: -1)) != nil)
    }

    @Test("loading through the environment: success puts the saved todos first")
    func loadSucceeds() async {
        let store = TestStore(Todo.app(environment: .mock(.success(saved))))
        await store.send(.addTodo(title: "Unsaved")) { $0.todos = [Todo.Item(title: "Unsaved")] }
        await store.send(.loadTapped) { $0.isLoading = true }
        await store.receive(.todosLoaded(todos: saved)) {
            $0.isLoading = false
            $0.todos = saved + [Todo.Item(title: "Unsaved")]
        }
        await store.finish()
    }

    @Test("loading through the environment: failure is shown and nothing is lost")
    func loadFails() async {
        let store = TestStore(Todo.app(environment: .mock(.failure(Todo.LoadError("offline")))))
        await store.send(.loadTapped) { $0.isLoading = true }
        await store.receive(.loadFailed(reason: "offline")) {
            $0.isLoading = false
            $0.loadError = "offline"
        }
        await store.send(.loadTapped) {
            $0.isLoading = true
            $0.loadError = nil
        }
        await store.receive(.loadFailed(reason: "offline")) {
            $0.isLoading = false
            $0.loadError = "offline"
        }
        await store.finish()
    }

    @Test("in a cluster: loadTapped's effect sends todosLoaded back through the dispatcher as the next seq")
    func cluster() async throws {
        let cluster = try await TestCluster.start(stores: ["todo": Todo.app(environment: .mock(.success(saved)))])
        #expect(try await cluster.dispatch(Todo.Action.loadTapped, to: "todo") == 1)
        let state = try await cluster.state(of: "todo", as: Todo.State.self, atLeast: 2)
        #expect(state == Todo.State(todos: saved))
        try await cluster.shutdown()
    }

    @Test("in a cluster: an action the store rejects keeps its seq, changes nothing, and its reason reaches views")
    func rejection() async throws {
        let cluster = try await TestCluster.start(stores: ["todo": Todo.app(environment: .mock())])
        let seen = Locked<[String]>([])
        try await cluster.startView("todo") { update in
            if let rejection = update.rejection { seen.withLock { $0.append("\(rejection.seq) \(rejection.actionType): \(rejection.reason)") } }
        }
        try await cluster.dispatch(Todo.Action.addTodo(title: "only one"), to: "todo")
        #expect(try await cluster.dispatch(Todo.Action.removeTodo(index: 3), to: "todo") == 2, "accepted by the dispatcher: it is well formed")
        #expect(try await cluster.state(of: "todo", as: Todo.State.self, atLeast: 2) == Todo.State(todos: [Todo.Item(title: "only one")]))
        try await eventually("the store's refusal to reach the view", timeout: .seconds(60)) { !seen.withLock { $0.isEmpty } }
        #expect(seen.withLock { $0 } == ["2 removeTodo: there is no todo at index 3 (the list has 1)"])
        try await cluster.shutdown()
    }

    @Test("the renderer shows the title, marks and load state")
    func render() {
        let text = Todo.render(Todo.State(todos: [Todo.Item(title: "A"), Todo.Item(title: "B", done: true)], isLoading: true))
        #expect(text == "TODO - (2)  (loading…)\n  0. [ ] A\n  1. [x] B")
    }
}
