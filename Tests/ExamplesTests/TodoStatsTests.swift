import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("Stats reads Todo (waitFor)")
struct TodoStatsTests {
    @Test("its own actions see the todo state as of the same version")
    func goal() async {
        let todos = Todo.State(todos: [Todo.Item(title: "a", done: true), Todo.Item(title: "b")])
        let store = TestStore(
            initialState: TodoStats.State(), reducer: TodoStats.reducer,
            environment: WithOtherState(environment: .live, other: todos))
        await store.send(.goalSet(done: 1)) {
            $0.goal = 1
            $0.total = 2
            $0.done = 1
            $0.goalReached = true
        }
        await store.send(.goalCleared) {
            $0.goal = nil
            $0.goalReached = false
        }
        await store.finish()
    }

    @Test("the replica applies todo's own checks: an action the todo store refuses changes nothing in stats")
    func refusedActions() throws {
        let runtime = TodoStats.app(todo: Todo.app(environment: .mock())).makeRuntime(format: .json) { _, _, _ in }
        func todo(_ action: Todo.Action) throws -> Bool {
            let payload = try JSONPayloadCodec().encode(action)
            return try runtime.apply(
                app: "todo", actionType: ActionCoding.caseName(of: action), payload: payload, stamp: .unstamped, runEffects: false)
        }
        #expect(try todo(.toggleTodo(index: 3)) == false, "refused by todo: no todo at index 3")
        #expect(try todo(.addTodo(title: "one")))
        #expect(try todo(.removeTodo(index: 5)) == false)
        #expect(try todo(.toggleTodo(index: 0)))
        let stats = try WireCodec().decode(TodoStats.State.self, from: runtime.encodedState())
        #expect(stats == TodoStats.State(total: 1, done: 1, changes: 2), "only the two actions the todo store applied count")
    }

    @Test("in a cluster: stats tracks every todo action with todo's state after that action")
    func cluster() async throws {
        let cluster = try await TestCluster.start(stores: ["todo": Todo.app(environment: .mock()), "stats": TodoStats.app()])
        try await cluster.dispatch(TodoStats.Action.goalSet(done: 2), to: "stats")
        for title in ["one", "two", "three"] { try await cluster.dispatch(Todo.Action.addTodo(title: title), to: "todo") }
        try await cluster.dispatch(Todo.Action.toggleTodo(index: 0), to: "todo")
        // Sequenced (its index is not negative) but refused by the todo store: stats must not count it.
        try await cluster.dispatch(Todo.Action.removeTodo(index: 9), to: "todo")
        let before = try await cluster.state(of: "stats", as: TodoStats.State.self, atLeast: 6)
        #expect(before == TodoStats.State(total: 3, done: 1, changes: 4, goal: 2, goalReached: false))
        try await cluster.dispatch(Todo.Action.toggleTodo(index: 2), to: "todo")
        let after = try await cluster.state(of: "stats", as: TodoStats.State.self, atLeast: 7)
        #expect(after == TodoStats.State(total: 3, done: 2, changes: 5, goal: 2, goalReached: true))
        // The replica inside stats agrees with the real todo store.
        let todo = try await cluster.state(of: "todo", as: Todo.State.self, atLeast: 7)
        #expect(todo.todos.filter(\.done).count == after.done)
        try await cluster.shutdown()
    }

    @Test("a stats store started late catches up and agrees (replayed todo actions feed its replica)")
    func lateJoin() async throws {
        let cluster = try await TestCluster.start(
            stores: ["todo": Todo.app(environment: .mock()), "stats": TodoStats.app()],
            startStores: false)
        try await cluster.startStore("todo")
        for title in ["one", "two"] { try await cluster.dispatch(Todo.Action.addTodo(title: title), to: "todo") }
        try await cluster.dispatch(Todo.Action.toggleTodo(index: 1), to: "todo")
        try await cluster.startStore("stats")
        let stats = try await cluster.state(of: "stats", as: TodoStats.State.self, atLeast: 3)
        #expect(stats == TodoStats.State(total: 2, done: 1, changes: 3))
        try await cluster.shutdown()
    }
}
