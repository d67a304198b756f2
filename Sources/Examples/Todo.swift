import FluxCore

/// The state-driven ToDo list: add (title of at least 3 characters), toggle, remove by index.
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
        public init(todos: [Item] = []) { self.todos = todos }
        /// The list's title, as the seed's view controller shows it.
        public var title: String { "TODO - (\(todos.count))" }
    }

    public enum Action: Codable, Equatable, Sendable {
        case addTodo(title: String)
        case toggleTodo(index: Int)
        case removeTodo(index: Int)
        case clearCompleted
    }

    public struct Environment: Sendable {
        public init() {}
        public static let live = Environment()
    }

    public static let minimumTitleLength = 3

    public static let reducer = Reducer<State, Action, Environment> { state, action, _ in
        switch action {
        case .addTodo(let title):
            state.todos.append(Item(title: title))
        case .toggleTodo(let index):
            if state.todos.indices.contains(index) { state.todos[index].done.toggle() }
        case .removeTodo(let index):
            if state.todos.indices.contains(index) { state.todos.remove(at: index) }
        case .clearCompleted:
            state.todos.removeAll(where: \.done)
        }
        return .none
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

    public static func render(_ state: State) -> String {
        var lines = [state.title]
        for (index, item) in state.todos.enumerated() {
            lines.append("  \(index). [\(item.done ? "x" : " ")] \(item.title)")
        }
        return lines.joined(separator: "\n")
    }

    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "todo", initialState: State(), reducer: reducer, environment: environment,
            validate: validate, render: render
        )
    }
}
