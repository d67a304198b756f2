import FluxCore

/// The state-driven ToDo list: todos load asynchronously through the Environment, add needs a title of
/// at least 3 characters, remove by index; the list's title reads `TODO - (n)`.
public enum Todo {
    public struct Item: Codable, Equatable, Sendable {
        public var title: String
        public var done: Bool
        public init(title: String, done: Bool = false) {
            self.title = title
            self.done = done
        }
    }

    public struct State: Codable, Equatable, Sendable {
        public var todos: [Item] = []
        public var isLoading = false
        public var loadError: String? = nil
        public init(todos: [Item] = [], isLoading: Bool = false, loadError: String? = nil) {
            self.todos = todos
            self.isLoading = isLoading
            self.loadError = loadError
        }
        /// The list's title, as the seed's view controller shows it.
        public var title: String { "TODO - (\(todos.count))" }
    }

    public enum Action: Codable, Equatable, Sendable {
        case addTodo(title: String)
        case toggleTodo(index: Int)
        case removeTodo(index: Int)
        case clearCompleted
        /// Ask for the saved todos (the seed's asynchronous load).
        case loadTapped
        case todosLoaded(todos: [Item])
        case loadFailed(reason: String)
    }

    /// Where todos come from. Effects reach the world only through this.
    public struct Environment: Sendable {
        public var loadTodos: @Sendable () async throws -> [Item]

        public init(loadTodos: @escaping @Sendable () async throws -> [Item]) {
            self.loadTodos = loadTodos
        }

        /// A stand-in for a network call: a second's delay, then a saved list.
        public static let live = Environment {
            try await Task.sleep(for: .seconds(1))
            return [Item(title: "Read the zflux guide"), Item(title: "Try zflux view", done: true)]
        }

        /// Answers at once with the given result.
        public static func mock(_ result: Result<[Item], LoadError> = .success([])) -> Environment {
            Environment { try result.get() }
        }
    }

    public struct LoadError: Error, Equatable, Sendable, CustomStringConvertible {
        public let message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    enum CancelID: Hashable, Sendable { case load }

    public static let minimumTitleLength = 3

    public static let reducer = Reducer<State, Action, Environment> { state, action, environment in
        switch action {
        case .addTodo(let title):
            state.todos.append(Item(title: title))
            return .none
        case .toggleTodo(let index):
            if state.todos.indices.contains(index) { state.todos[index].done.toggle() }
            return .none
        case .removeTodo(let index):
            if state.todos.indices.contains(index) { state.todos.remove(at: index) }
            return .none
        case .clearCompleted:
            state.todos.removeAll(where: \.done)
            return .none
        case .loadTapped:
            state.isLoading = true
            state.loadError = nil
            return .run { send in
                do {
                    send(.todosLoaded(todos: try await environment.loadTodos()))
                } catch is CancellationError {
                    return
                } catch {
                    send(.loadFailed(reason: "\(error)"))
                }
            }
            .cancellable(id: CancelID.load, cancelInFlight: true)
        case .todosLoaded(let todos):
            state.isLoading = false
            state.todos = todos + state.todos
            return .none
        case .loadFailed(let reason):
            state.isLoading = false
            state.loadError = reason
            return .none
        }
    }

    public static func validate(_ action: Action) -> String? {
        switch action {
        case .addTodo(let title) where title.count < minimumTitleLength:
            "a todo title needs at least \(minimumTitleLength) characters"
        case .toggleTodo(let index), .removeTodo(let index):
            index < 0 ? "index must not be negative" : nil
        default:
            nil
        }
    }

    /// What only the current state can refuse: an index with no todo.
    public static func reject(_ state: State, _ action: Action) -> String? {
        switch action {
        case .toggleTodo(let index), .removeTodo(let index):
            state.todos.indices.contains(index) ? nil : "there is no todo at index \(index) (the list has \(state.todos.count))"
        default:
            nil
        }
    }

    public static func render(_ state: State) -> String {
        var lines = [state.title + (state.isLoading ? "  (loading…)" : "")]
        if let error = state.loadError { lines.append("  ! could not load: \(error)") }
        for (index, item) in state.todos.enumerated() {
            lines.append("  \(index). [\(item.done ? "x" : " ")] \(item.title)")
        }
        return lines.joined(separator: "\n")
    }

    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "todo", initialState: State(), reducer: reducer, environment: environment,
            validate: validate, reject: reject, render: render)
    }
}
