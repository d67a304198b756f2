import Examples
import FluxClusterTesting
import FluxTesting
import Testing

extension TestCluster {
    /// The default pair of stores the node tests use, with only the dispatcher running.
    static func todoAndCounter() async throws -> TestCluster {
        try await TestCluster.start(stores: ["todo": Todo.app(), "counter": Counter.app()], startStores: false)
    }
}

/// Reduces todo actions locally: what every store must end up with.
func expectedTodo(_ actions: [(UInt64, Todo.Action)]) -> Todo.State {
    var state = Todo.State()
    for (_, action) in actions.sorted(by: { $0.0 < $1.0 }) { _ = Todo.reducer(&state, action, .live) }
    return state
}
