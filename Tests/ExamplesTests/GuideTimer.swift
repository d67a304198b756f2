// Generated from docs/GUIDE.md by scripts/extract-guide.py: edit the guide, not this file.
import Examples
import FluxCore
import FluxTesting
import Testing

public enum Timer {
    public struct State: Codable, Equatable, Sendable {
        public var remaining = 60
        public var isRunning = false
        public init(remaining: Int = 60, isRunning: Bool = false) {
            self.remaining = remaining
            self.isRunning = isRunning
        }
    }

    public enum Action: Codable, Equatable, Sendable {
        case startTapped
        case pauseTapped
        case resetTapped(seconds: Int)
        case ticked
    }
}
extension Timer {
    public struct Environment: Sendable {
        /// Waits one tick.
        public var tick: @Sendable () async throws -> Void

        public init(tick: @escaping @Sendable () async throws -> Void) { self.tick = tick }

        public static let live = Environment { try await Task.sleep(for: .seconds(1)) }
        /// Ticks at once, so tests need no waiting.
        public static let immediate = Environment {}
    }
}
extension Timer {
    enum CancelID: Hashable, Sendable { case ticking }

    static func nextTick(_ environment: Environment) -> Effect<Action> {
        .run { send in
            // A cancelled tick sends nothing: `send` ignores actions from cancelled effects.
            if (try? await environment.tick()) != nil { send(.ticked) }
        }
        .cancellable(id: CancelID.ticking, cancelInFlight: true)
    }

    public static let reducer = Reducer<State, Action, Environment> { state, action, environment in
        switch action {
        case .startTapped:
            guard !state.isRunning, state.remaining > 0 else { return .none }
            state.isRunning = true
            return nextTick(environment)
        case .pauseTapped:
            state.isRunning = false
            return .cancel(id: CancelID.ticking)
        case .resetTapped(let seconds):
            state = State(remaining: seconds)
            return .cancel(id: CancelID.ticking)
        case .ticked:
            guard state.isRunning else { return .none }
            state.remaining -= 1
            if state.remaining == 0 {
                state.isRunning = false
                return .none
            }
            return nextTick(environment)
        }
    }
}
extension Timer {
    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "timer", initialState: State(), reducer: reducer, environment: environment,
            validate: { action in
                // Checked by the dispatcher before sequencing: a refusal is a NACK, and nothing changes.
                if case .resetTapped(let seconds) = action, seconds <= 0 { return "a timer needs at least 1 second" }
                return nil
            },
            render: { "\($0.remaining) s" + ($0.isRunning ? " ▶" : " ⏸") })
    }
}

@Test func countsDownAndStops() async {
    let store = TestStore(Timer.app(environment: .immediate))
    await store.send(.resetTapped(seconds: 2)) { $0.remaining = 2 }
    await store.send(.startTapped) { $0.isRunning = true }
    await store.receive(.ticked) { $0.remaining = 1 }
    await store.receive(.ticked) {
        $0.remaining = 0
        $0.isRunning = false
    }
    await store.finish()
}
@Test func timerInACluster() async throws {
    let cluster = try await TestCluster.start(stores: ["timer": Timer.app(environment: .immediate)])
    try await cluster.dispatch(Timer.Action.resetTapped(seconds: 3), to: "timer")
    try await cluster.dispatch(Timer.Action.startTapped, to: "timer")
    // seq 1 reset, seq 2 start, seqs 3–5 the three ticks the effect sent back through the dispatcher
    let state = try await cluster.state(of: "timer", as: Timer.State.self, atLeast: 5)
    #expect(state == Timer.State(remaining: 0, isRunning: false))
    try await cluster.shutdown()
}
