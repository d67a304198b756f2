import FluxCore

/// The apps the `zflux` binary can host, by name.
public enum Catalog {
    /// Which environments the apps get.
    public struct Context: Sendable, Equatable {
        /// The apps' mock environments: instant answers, no network, files in memory (`--mock`).
        public var mock: Bool
        /// Where a store's effects keep files (the primes app's favourites); nil: the current directory.
        public var dataDirectory: String?

        public init(mock: Bool = false, dataDirectory: String? = nil) {
            self.mock = mock
            self.dataDirectory = dataDirectory
        }

        public static let live = Context()
    }

    /// Every app, with live environments (what the dispatcher checks actions with).
    public static let apps: [any AnyApp] = apps(.live)

    /// Every app, with the environments `context` asks for.
    public static func apps(_ context: Context) -> [any AnyApp] {
        let mock = context.mock
        let login = Login.app(environment: mock ? .standIn(clock: .mock()) : .live)
        let todo = Todo.app(environment: mock ? .mock(.success(Todo.Environment.saved)) : .live)
        return [
            todo,
            Star.app(environment: mock ? .mock(succeeds: true) : .live),
            AnnotationFilter.app(),
            login,
            Counter.app(),
            TodoStats.app(todo: todo),
            Ledger.app(),
            Primes.app(environment: mock ? .mock() : .live(directory: context.dataDirectory ?? ".")),
            Food.app(environment: mock ? .mock() : .live, login: login),
        ]
    }

    public static func app(named name: String, _ context: Context = .live) -> (any AnyApp)? {
        (context == .live ? apps : apps(context)).first { $0.name == name }
    }

    public static var names: [String] { apps.map(\.name) }
}
