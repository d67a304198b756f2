import Foundation

/// Everything zflux needs to host one app as a store: its name, state, actions, reducer and
/// environment.
///
/// The `name` is the app's topic: actions dispatched to it are delivered to every store, and every
/// store hosting this app applies them.
public struct FluxApp<State, Action, Environment>: Sendable
where State: Codable & Equatable & Sendable, Action: Codable & Sendable, Environment: Sendable {
    public let name: String
    public let initialState: State
    public let reducer: Reducer<State, Action, Environment>
    public let environment: Environment
    /// Checks an action on its own, before it is sequenced: the dispatcher NACKs it with the returned
    /// reason and nothing reaches the journal or a state. Return nil to accept.
    public let validate: @Sendable (Action) -> String?
    /// Checks an action against the current state, in the store, before reducing: a reason refuses it.
    /// A refused action leaves the state as it was; the store publishes the reason (REJECTED), where
    /// views and `zflux tail` show it. Return nil to accept.
    public let reject: @Sendable (State, Action) -> String?
    /// Plain-text rendering of a state for `zflux view` when it is not a terminal.
    public let render: @Sendable (State) -> String

    public init(
        name: String,
        initialState: State,
        reducer: Reducer<State, Action, Environment>,
        environment: Environment,
        validate: @escaping @Sendable (Action) -> String? = { _ in nil },
        reject: @escaping @Sendable (State, Action) -> String? = { _, _ in nil },
        render: @escaping @Sendable (State) -> String = { state in String(describing: state) }
    ) {
        self.name = name
        self.initialState = initialState
        self.reducer = reducer
        self.environment = environment
        self.validate = validate
        self.reject = reject
        self.render = render
    }
}
