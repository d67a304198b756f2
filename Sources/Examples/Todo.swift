import FluxCore

/// The state-driven ToDo list: todos load asynchronously through the Environment, add needs a title of
/// at least 3 characters and puts the new todo at the top (as the seed does), remove by index; the
/// list's title reads `TODO - (n)`.
public enum Todo {
    // @WireCodable: written out in Todo+WireCodable.swift
    public struct Item: Codable, Equatable, Sendable {
        public var title: String
        public var done: Bool
        public init(title: String, done: Bool = false) {
            self.title = title
            self.done = done
        }
    }

    // @WireCodable: written out in Todo+WireCodable.swift
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

    // @WireCodable: written out in Todo+WireCodable.swift
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

        /// A stand-in for a network call: a second's delay, then the saved list.
        public static let live = Environment {
            try await EffectClock.live.sleep(.seconds(1))
            return saved
        }

        /// What the stand-in service holds.
        public static let saved = [Item(title: "Read the zflux guide"), Item(title: "Try zflux view", done: true)]

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
            state.todos.insert(Item(title: title), at: 0)
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

    /// The dispatcher's middleware for todo actions: titles are trimmed before they are checked and
    /// sequenced (so "  ab " is refused and " Milk " is stored as "Milk"), every action is logged and
    /// counted by type.
    public static let middleware: [Middleware<Action>] = [
        .enrich("trim-title") { action in
            if case .addTodo(let title) = action { action = .addTodo(title: title.trimmingCharacters(in: .whitespacesAndNewlines)) }
        },
        .validate("title-length") { action in
            if case .addTodo(let title) = action, title.count < minimumTitleLength {
                return "a todo title needs at least \(minimumTitleLength) characters (not counting spaces at its ends)"
            }
            return nil
        },
        .log(),
        .count(),
    ]

    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "todo", summary: "the state-driven ToDo list (onevcat): add, toggle, remove, load saved todos",
            initialState: State(), reducer: reducer, environment: environment,
            validate: validate, middleware: middleware, reject: reject, render: render,
            actions: [
                .user(.addTodo(title: "Buy milk"), "add a todo at the top (3+ characters, trimmed)"),
                .user(.toggleTodo(index: 0), "mark a todo done or not done"),
                .user(.removeTodo(index: 0), "remove a todo"),
                .user(.clearCompleted, "remove every done todo"),
                .user(.loadTapped, "load the saved todos (they arrive as todosLoaded)"),
                .effect(.todosLoaded(todos: [Item(title: "Read the zflux guide")]), "the saved todos, put before the others"),
                .effect(.loadFailed(reason: "offline"), "why the saved todos could not be loaded"),
            ])
    }
}
