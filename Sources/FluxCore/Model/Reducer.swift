/// A pure function from the current state and an action to the next state, plus the effects to run.
///
/// Reducers are total and deterministic: no clock, no randomness, no I/O. What they need from the
/// world arrives in the action, or in its ``Stamp``: the global seq and the time the dispatcher
/// sequenced it, journaled with it, so a replay reduces to the same state. What they want done in the
/// world they return as an `Effect`, which the store runs with the `Environment` (where effects find a
/// clock, ``EffectClock``, with live and mock values).
///
/// A reducer cannot dispatch. It has no store to call, only a value to return, so an action can never
/// be dispatched while another is being reduced (the re-entrancy ReSwift, Redux and Flux forbid at run
/// time is impossible here by construction). What an effect sends later is a new action: it goes
/// through the dispatcher and gets its own, later, sequence number.
public struct Reducer<State, Action: Sendable, Environment>: Sendable {
    public let reduce: @Sendable (inout State, Action, Environment, Stamp) -> Effect<Action>

    /// A reducer that reads the action's stamp (its seq and sequenced time).
    public init(_ reduce: @escaping @Sendable (inout State, Action, Environment, Stamp) -> Effect<Action>) {
        self.reduce = reduce
    }

    /// A reducer that does not need the stamp.
    public init(_ reduce: @escaping @Sendable (inout State, Action, Environment) -> Effect<Action>) {
        self.reduce = { state, action, environment, _ in reduce(&state, action, environment) }
    }

    public func callAsFunction(
        _ state: inout State, _ action: Action, _ environment: Environment, stamp: Stamp = .unstamped
    ) -> Effect<Action> {
        reduce(&state, action, environment, stamp)
    }

    /// Runs several reducers in order on the same state and merges their effects.
    public static func combine(_ reducers: Reducer...) -> Reducer { combine(reducers) }

    public static func combine(_ reducers: [Reducer]) -> Reducer {
        Reducer { state, action, environment, stamp in
            .merge(reducers.map { $0(&state, action, environment, stamp: stamp) })
        }
    }

    /// Lifts a reducer of a part of the state into a reducer of the whole: `state` picks the part,
    /// `action` picks the child's actions out of the parent's (nil: not for this child) and `embed`
    /// puts them back, `environment` derives the child's environment.
    public func scope<ParentState, ParentAction: Sendable, ParentEnvironment>(
        state: WritableKeyPath<ParentState, State> & Sendable,
        action: @escaping @Sendable (ParentAction) -> Action?,
        embed: @escaping @Sendable (Action) -> ParentAction,
        environment: @escaping @Sendable (ParentEnvironment) -> Environment
    ) -> Reducer<ParentState, ParentAction, ParentEnvironment> {
        Reducer<ParentState, ParentAction, ParentEnvironment> { parent, parentAction, parentEnvironment, stamp in
            guard let childAction = action(parentAction) else { return .none }
            return self(&parent[keyPath: state], childAction, environment(parentEnvironment), stamp: stamp).map(embed)
        }
    }
}
