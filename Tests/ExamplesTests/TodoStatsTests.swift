import Examples
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
            environment: Reading(environment: .live, other: todos))
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

    @Test("in a cluster: stats tracks every todo action with todo's state after that action")
    func cluster() async throws {
        let cluster = try await TestCluster.start(stores: ["todo": Todo.app(environment: .mock()), "stats": TodoStats.app()])
        try await cluster.dispatch(TodoStats.Action.goalSet(done: 2), to: "stats")
        for title in ["one", "two", "three"] { try await cluster.dispatch(Todo.Action.addTodo(title: title), to: "todo") }
        try await cluster.dispatch(Todo.Action.toggleTodo(index: 0), to: "todo")
        let before = try await cluster.state(of: "stats", as: TodoStats.State.self, atLeast: 5)
        #expect(before == TodoStats.State(total: 3, done: 1, changes: 4, goal: 2, goalReached: false))
        try await cluster.dispatch(Todo.Action.toggleTodo(index: 2), to: "todo")
        let after = try await cluster.state(of: "stats", as: TodoStats.State.self, atLeast: 6)
        #expect(after == TodoStats.State(total: 3, done: 2, changes: 5, goal: 2, goalReached: true))
        // The replica inside stats agrees with the real todo store.
        let todo = try await cluster.state(of: "todo", as: Todo.State.self, atLeast: 6)
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
