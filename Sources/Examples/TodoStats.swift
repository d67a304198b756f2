import FluxCore

/// A store that reads the todo store (Flux's `waitFor`): after each todo action it sees the todo list as
/// of that very action and keeps progress figures, plus a goal of its own.
public enum TodoStats {
    // @WireCodable: written out in TodoStats+WireCodable.swift
    public struct State: Codable, Equatable, Sendable {
        public var total = 0
        public var done = 0
        /// How many todo actions this store has seen, each with the todo state as of that action.
        public var changes = 0
        public var goal: Int? = nil
        public var goalReached = false
        public init(total: Int = 0, done: Int = 0, changes: Int = 0, goal: Int? = nil, goalReached: Bool = false) {
            self.total = total
            self.done = done
            self.changes = changes
            self.goal = goal
            self.goalReached = goalReached
        }
    }

    // @WireCodable: written out in TodoStats+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        case goalSet(done: Int)
        case goalCleared
    }

    public struct Environment: Sendable {
        public init() {}
        public static let live = Environment()
    }

    static func update(_ state: inout State, from todos: Todo.State) {
        state.total = todos.todos.count
        state.done = todos.todos.filter(\.done).count
        state.goalReached = state.goal.map { state.done >= $0 } ?? false
    }

    public static let reducer = Reducer<State, Action, WithOtherState<Environment, Todo.State>> { state, action, reading in
        switch action {
        case .goalSet(let done): state.goal = done
        case .goalCleared: state.goal = nil
        }
        update(&state, from: reading.other)
        return .none
    }

    public static func render(_ state: State) -> String {
        let goal = state.goal.map { " · goal \($0) done" + (state.goalReached ? " ✓" : "") } ?? ""
        return "\(state.done)/\(state.total) done\(goal) · \(state.changes) todo changes seen"
    }

    public static func app(
        todo: FluxApp<Todo.State, Todo.Action, Todo.Environment> = Todo.app()
    )
        -> DependentApp<State, Action, Environment, Todo.State, Todo.Action, Todo.Environment>
    {
        DependentApp(
            name: "stats", summary: "reads the todo store (waitFor): progress figures and a goal of its own",
            reading: todo, initialState: State(), reducer: reducer, environment: .live,
            onOtherAction: { state, _, reading, _ in
                state.changes += 1
                update(&state, from: reading.other)
                return .none
            },
            validate: { action in
                if case .goalSet(let done) = action, done < 1 { return "a goal needs at least 1 todo" }
                return nil
            },
            render: render,
            actions: [
                .user(.goalSet(done: 3), "a goal: this many todos done"),
                .user(.goalCleared, "no goal"),
            ])
    }
}
