/// A pure function from the current state and an action to the next state, plus the effects to run.
///
/// Reducers are total and deterministic: no clock, no randomness, no I/O. What they need from the
/// world arrives in actions; what they want done in the world they return as an `Effect`, which the
/// store runs with the `Environment`. Because a reducer returns effects instead of dispatching,
/// re-entrant dispatch (an action dispatched while another is being reduced) cannot happen.
public struct Reducer<State, Action: Sendable, Environment>: Sendable {
    public let reduce: @Sendable (inout State, Action, Environment) -> Effect<Action>

    public init(_ reduce: @escaping @Sendable (inout State, Action, Environment) -> Effect<Action>) {
        self.reduce = reduce
    }

    public func callAsFunction(_ state: inout State, _ action: Action, _ environment: Environment) -> Effect<Action> {
        reduce(&state, action, environment)
    }

    /// Runs several reducers in order on the same state and merges their effects.
    public static func combine(_ reducers: Reducer...) -> Reducer {
        Reducer { state, action, environment in
            var effects: [Effect<Action>] = []
            for reducer in reducers { effects.append(reducer(&state, action, environment)) }
            return Effect(operations: effects.flatMap(\.operations))
        }
    }
}
