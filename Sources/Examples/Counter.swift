import FluxCore

/// The smallest app: a counter.
public enum Counter {
    // @WireCodable: written out in Counter+WireCodable.swift
    public struct State: Codable, Equatable, Sendable {
        public var count: Int = 0
        public init(count: Int = 0) { self.count = count }
    }

    // @WireCodable: written out in Counter+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        case incrementTapped
        case decrementTapped
        case addTapped(amount: Int)
        case resetTapped
    }

    public struct Environment: Sendable {
        public init() {}
        public static let live = Environment()
    }

    public static let reducer = Reducer<State, Action, Environment> { state, action, _ in
        switch action {
        case .incrementTapped: state.count &+= 1
        case .decrementTapped: state.count &-= 1
        case .addTapped(let amount): state.count &+= amount
        case .resetTapped: state.count = 0
        }
        return .none
    }

    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "counter", summary: "the smallest app: a count", initialState: State(), reducer: reducer, environment: environment,
            render: { "count: \($0.count)" },
            actions: [
                .user(.incrementTapped, "add 1"),
                .user(.decrementTapped, "subtract 1"),
                .user(.addTapped(amount: 5), "add an amount (negative subtracts)"),
                .user(.resetTapped, "back to 0"),
            ]
        )
    }
}
