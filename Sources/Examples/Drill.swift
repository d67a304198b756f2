import FluxCore

/// An app for fault drills: its reducer traps on `crash`, as some user's reducer one day will, so that
/// an operator (and the tests) can watch a store survive a poison action through quarantine
/// (`zflux quarantine`, docs/OPERATIONS.md). It is in no default cluster.
public enum Drill {
    // @WireCodable: written out in Drill+WireCodable.swift
    public struct State: Codable, Equatable, Sendable {
        public var count: Int = 0
        public init(count: Int = 0) { self.count = count }
    }

    // @WireCodable: written out in Drill+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        case tick
        /// Makes the reducer trap: the store that applies it crashes, every time.
        case crash(note: String)
    }

    public static let reducer = Reducer<State, Action, Void> { state, action, _ in
        switch action {
        case .tick: state.count &+= 1
        case .crash(let note): fatalError("drill: a reducer that traps (\(note))")
        }
        return .none
    }

    public static func app() -> FluxApp<State, Action, Void> {
        FluxApp(
            name: "drill", summary: "fault drills: `crash` makes the store's reducer trap, to watch quarantine work",
            initialState: State(), reducer: reducer, environment: (),
            render: { "ticks: \($0.count)" },
            actions: [
                .user(.tick, "add 1"),
                .user(.crash(note: "drill"), "trap in the reducer: the store crashes until the action is quarantined"),
            ]
        )
    }
}
