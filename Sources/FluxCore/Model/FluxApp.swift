import Foundation

/// Everything zflux needs to host one app as a store: its name, state, actions, reducer and
/// environment.
///
/// The `name` is the app's topic: actions dispatched to it are delivered to every store, and every
/// store hosting this app applies them.
public struct FluxApp<State, Action, Environment>: Sendable
where State: Codable & Equatable & Sendable, Action: Codable & Sendable, Environment: Sendable {
    public let name: String
    /// One line on what the app is, for `zflux apps`.
    public let summary: String
    public let initialState: State
    public let reducer: Reducer<State, Action, Environment>
    public let environment: Environment
    /// Checks an action on its own, before it is sequenced: the dispatcher NACKs it with the returned
    /// reason and nothing reaches the journal or a state. Return nil to accept. Checked by the CLI too,
    /// before anything is sent. An app given none accepts every action.
    public let validate: @Sendable (Action) -> String?
    /// Whether the app was given a `validate`: without one (and without middleware) the intake checks a
    /// binary payload's structure in place instead of decoding it.
    let validates: Bool
    /// The case names its catalog (``actions``) lists.
    let catalogTypes: Set<String>
    /// Its actions' binary decoder, chosen once.
    let actionDecoder = TypedWireDecoder<Action>()
    /// The catalog's action types in its order, for refusals: "addTodo, toggleTodo, …".
    let catalogTypeList: String
    /// The dispatcher's middleware chain for this app, run in order after `validate`: each step may
    /// refuse, rewrite, log or count the action before it is sequenced (``Middleware``).
    public let middleware: [Middleware<Action>]
    /// Checks an action against the current state, in the store, before reducing: a reason refuses it.
    /// A refused action leaves the state as it was; the store publishes the reason (REJECTED), where
    /// views and `zflux tail` show it. Return nil to accept.
    public let reject: @Sendable (State, Action) -> String?
    /// Plain-text rendering of a state for `zflux view` when it is not a terminal.
    public let render: @Sendable (State) -> String
    /// One example per action, for `zflux apps` (``ActionExample``).
    public let actions: [ActionExample<Action>]

    public init(
        name: String,
        summary: String = "",
        initialState: State,
        reducer: Reducer<State, Action, Environment>,
        environment: Environment,
        validate: (@Sendable (Action) -> String?)? = nil,
        middleware: [Middleware<Action>] = [],
        reject: @escaping @Sendable (State, Action) -> String? = { _, _ in nil },
        render: @escaping @Sendable (State) -> String = { state in String(describing: state) },
        actions: [ActionExample<Action>] = []
    ) {
        self.name = name
        self.summary = summary
        self.initialState = initialState
        self.reducer = reducer
        self.environment = environment
        self.validate = validate ?? { _ in nil }
        self.validates = validate != nil
        self.catalogTypes = Set(actions.map { ActionCoding.caseName(of: $0.action) })
        self.catalogTypeList = actions.map { ActionCoding.caseName(of: $0.action) }.joined(separator: ", ")
        self.middleware = middleware
        self.reject = reject
        self.render = render
        self.actions = actions
    }
}
