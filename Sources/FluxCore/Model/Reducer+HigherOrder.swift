/// Higher-order reducers: functions that take a reducer and return one that does more around it. They
/// compose by chaining, innermost first: `reducer.onChange(of: \.count) { … }.logging()` logs what the
/// reducer and its change handler did together. In a store they are the middleware around the reducer;
/// they run on replay too, so they must stay pure (what they log is output, not state).
extension Reducer where State: Equatable & Sendable {
    /// Logs every action with its stamp and the state it left, or that it changed nothing: the Point-Free
    /// seed's `logging(reducer)`. `log` gets one message per action (a store passes its logger; the
    /// default prints).
    public func logging(
        _ name: String? = nil, to log: @escaping @Sendable (String) -> Void = { print($0) }
    ) -> Reducer {
        let name = name ?? String(describing: State.self)
        return Reducer { state, action, environment, stamp in
            let before = state
            let effect = self(&state, action, environment, stamp: stamp)
            let place = stamp == .unstamped ? "" : " #\(stamp.seq)"
            if state == before {
                log("\(name)\(place) \(action): state unchanged")
            } else {
                log("\(name)\(place) \(action):\n  - \(before)\n  + \(state)")
            }
            return effect
        }
    }

    /// Runs `perform` after any action that changed `value(state)`, with the value before the action:
    /// derived state and reactions kept in one place instead of in every case that might change it.
    /// The effects of both are merged.
    public func onChange<Value: Equatable & Sendable>(
        of value: @escaping @Sendable (State) -> Value,
        perform: @escaping @Sendable (_ state: inout State, _ old: Value, _ environment: Environment) -> Effect<Action>
    ) -> Reducer {
        Reducer { state, action, environment, stamp in
            let old = value(state)
            let effect = self(&state, action, environment, stamp: stamp)
            guard value(state) != old else { return effect }
            return .merge(effect, perform(&state, old, environment))
        }
    }
}
