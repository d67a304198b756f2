import FluxCore

/// The example apps, as the stock `zflux` binary hosts them: one client of the framework among others.
public enum Catalog {
    /// Which environments the apps get (the framework's ``AppContext``).
    public typealias Context = AppContext

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
            Drill.app(),
        ]
    }

    public static func app(named name: String, _ context: Context = .live) -> (any AnyApp)? {
        (context == .live ? apps : apps(context)).first { $0.name == name }
    }

    public static var names: [String] { apps.map(\.name) }

    /// The stock binary's default cluster (`zflux cluster up` without `--config`).
    public static let defaultClusterConfig = """
        # zflux's default cluster: a dispatcher and one store per example app, over ipc.
        [cluster]
        transport = "ipc"
        heartbeat_ms = 200

        [journal]
        fsync = "batch"

        [[store]]
        name = "todo"

        [[store]]
        name = "star"

        [[store]]
        name = "filter"

        [[store]]
        name = "login"

        [[store]]
        name = "counter"

        # reads the todo store's state (waitFor)
        [[store]]
        name = "stats"

        [[store]]
        name = "primes"

        # reads the login store's state: fetches the list when a user signs in
        [[store]]
        name = "food"
        """

    /// What `zflux demo` dispatches, over and over: (app, action, arguments as JSON).
    public static let demoStory: [DemoStep] = [
        .init("todo", "loadTapped"),
        .init("primes", "loadFavoritesTapped"),
        .init("star", "starTapped"),
        .init("todo", "addTodo", #"{"title":"Buy milk"}"#),
        .init("login", "usernameChanged", #"{"username":"ada@example.com"}"#),
        .init("stats", "goalSet", #"{"done":2}"#),
        .init("login", "passwordChanged", #"{"password":"analytical"}"#),
        .init("filter", "groupEntered", #"{"group":"issues"}"#),
        .init("filter", "filterToggled", #"{"filter":"issueOpen"}"#),
        .init("login", "loginTapped"),
        .init("primes", "incrementTapped"),
        .init("primes", "incrementTapped"),
        .init("primes", "nthPrimeTapped"),
        .init("todo", "toggleTodo", #"{"index":0}"#),
        .init("counter", "addTapped", #"{"amount":10}"#),
        .init("primes", "favoriteToggled"),
        .init("food", "refreshTapped"),
        .init("primes", "alertDismissed"),
        .init("star", "starTapped"),
        .init("todo", "toggleTodo", #"{"index":2}"#),
        .init("filter", "resetAllTapped"),
        .init("filter", "groupLeft"),
        .init("todo", "clearCompleted"),
        .init("login", "logoutTapped"),
        .init("counter", "resetTapped"),
        .init("primes", "decrementTapped"),
        .init("primes", "decrementTapped"),
        .init("todo", "removeTodo", #"{"index":0}"#),
    ]

    /// What `zflux bench codec` times the wire codecs on: two actions (the bench's is ledger.post), todo lists of 10 to 10,000 items,
    /// a ledger of 10,000 accounts and a one-account change of it.
    public static func codecSamples() -> [CodecSample] {
        var samples = [
            CodecSample("todo.addTodo action", Todo.Action.addTodo(title: "Buy milk")),
            CodecSample("ledger.post action", Ledger.Action.post(account: 42, amount: 5, memo: "rent")),
        ]
        for count in [10, 100, 1000, 10_000] {
            let todos = Todo.State(todos: (0..<count).map { Todo.Item(title: "todo number \($0)", done: $0 % 3 == 0) })
            samples.append(CodecSample("todo state, \(count) items", todos))
        }
        var ledger = Ledger.State()
        _ = Ledger.reducer(&ledger, .open(count: 10_000), ())
        samples.append(CodecSample("ledger state, 10000 items", ledger))
        _ = ledger.takeChanges()
        _ = Ledger.reducer(&ledger, .post(account: 42, amount: 5, memo: "x"), ())
        samples.append(CodecSample("ledger change, 1 of 10000", ledger.takeChanges()))
        return samples
    }

    /// What `zflux simulate` dispatches: counters, todos and the stats goal (the echo app is the
    /// simulator's own).
    public static let simulationMix = ActionMix([
        .init("counter", "incrementTapped", weight: 2),
        .init("counter", "addTapped") { "{\"amount\":\(Int.random(in: -5...9, using: &$0))}" },
        .init("todo", "addTodo") { "{\"title\":\"task \(Int.random(in: 100...999, using: &$0))\"}" },
        .init("todo", "toggleTodo") { "{\"index\":\(Int.random(in: 0...4, using: &$0))}" },
        .init("todo", "removeTodo") { "{\"index\":\(Int.random(in: 0...4, using: &$0))}" },
        .init("stats", "goalSet") { "{\"done\":\(Int.random(in: 0...3, using: &$0))}" },
    ])
}
