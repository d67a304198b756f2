// Generated from docs/GUIDE.md by scripts/extract-guide.py: edit the guide, not this file.
import Devtools
import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import FluxWire
import Foundation
import Testing
import ViewNode

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

@WireCodable
struct Lap: Codable, Equatable, Sendable {
    var seconds: Int
    var note: String? = nil
}
extension Timer {
    public struct Environment: Sendable {
        /// Waits one tick.
        public var tick: @Sendable () async throws -> Void

        public init(tick: @escaping @Sendable () async throws -> Void) { self.tick = tick }

        public static func ticking(on clock: EffectClock) -> Environment { Environment { try await clock.sleep(.seconds(1)) } }
        public static let live = ticking(on: .live)
        /// Ticks at once, so tests (and `cluster up --mock`) need no waiting.
        public static let mock = ticking(on: .mock())
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

/// When each visit happened, by the dispatcher's clock.
enum Visits {
    struct State: Codable, Equatable, Sendable { var times: [Date] = [] }
    enum Action: Codable, Equatable, Sendable { case visited }

    static let reducer = Reducer<State, Action, Void> { state, action, _, stamp in
        state.times.append(stamp.time)
        return .none
    }
}

@Test func visitsUseTheStamp() async {
    let store = TestStore(initialState: Visits.State(), reducer: Visits.reducer, environment: ())
    store.time = Date(timeIntervalSince1970: 1_800_000_000)  // what the "dispatcher" stamps next
    await store.send(.visited) { $0.times = [Date(timeIntervalSince1970: 1_800_000_000)] }
    await store.finish()
}
/// A reservation held for ten minutes, then released unless it was confirmed.
enum Hold {
    struct State: Codable, Equatable, Sendable {
        var held: Set<String> = []
        var lateReleases = 0
    }
    enum Action: Codable, Equatable, Sendable {
        case hold(seat: String)
        case confirm(seat: String)
        case expire(seat: String)
    }

    static let reducer = Reducer<State, Action, Void> { state, action, _, stamp in
        switch action {
        case .hold(let seat):
            state.held.insert(seat)
            // The id names the schedule: holding the seat again replaces it, confirming cancels it.
            return .schedule(.expire(seat: seat), after: .seconds(600), id: "hold-\(seat)")
        case .confirm(let seat):
            state.held.remove(seat)
            return .cancelSchedule(id: "hold-\(seat)")
        case .expire(let seat):
            state.held.remove(seat)
            // The stamp says when it was due; a cluster that was down then fires it late, at start.
            if stamp.isLate { state.lateReleases += 1 }
            return .none
        }
    }
}
/// A checkout that gives up on an unpaid basket after ten minutes.
enum Checkout {
    struct State: Codable, Equatable, Sendable { var open = false }
    enum Action: Codable, Equatable, Sendable { case started, paid, abandoned }

    static let reducer = Reducer<State, Action, Void> { state, action, _ in
        switch action {
        case .started:
            state.open = true
            return .schedule(.abandoned, after: .seconds(600), id: "abandon")
        case .paid:
            state.open = false
            return .cancelSchedule(id: "abandon")
        case .abandoned:
            state.open = false
            return .none
        }
    }
}

@Test func checkoutIsAbandonedAfterTenMinutes() async {
    let clock = TestClock()
    let store = TestStore(initialState: Checkout.State(), reducer: Checkout.reducer, environment: (), clock: clock)
    await store.send(.started) { $0.open = true }
    clock.advance(by: .seconds(599))  // not yet: nothing to receive
    clock.advance(by: .seconds(1))
    await store.receive(.abandoned) { $0.open = false }
    await store.send(.started) { $0.open = true }
    await store.send(.paid) { $0.open = false }
    clock.run()  // the cancelled schedule never fires
    await store.finish()
}
extension Timer {
    /// Calls `count` for each action the timer reduces, for a dashboard: a user-written higher-order reducer.
    static func counting(
        _ reducer: Reducer<State, Action, Environment>, with count: @escaping @Sendable () -> Void
    ) -> Reducer<State, Action, Environment> {
        Reducer { state, action, environment, stamp in
            count()
            return reducer(&state, action, environment, stamp: stamp)
        }
    }
}

@Test func higherOrderReducersChain() {
    let lines = Locked<[String]>([]), reduced = Locked(0)
    let logged = Timer.reducer.logging("timer") { line in lines.withLock { $0.append(line) } }
    let reducer = Timer.counting(logged) { reduced.withLock { $0 += 1 } }
    var state = Timer.State()
    _ = reducer(&state, .resetTapped(seconds: 5), .mock)
    #expect(reduced.withLock { $0 } == 1)
    #expect(
        lines.withLock { $0 } == [
            "timer resetTapped(seconds: 5):\n  - State(remaining: 60, isRunning: false)\n  + State(remaining: 5, isRunning: false)"
        ])
}
extension Timer {
    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "timer", summary: "a countdown you can start, pause and reset",
            initialState: State(), reducer: reducer, environment: environment,
            validate: { action in
                // Checked by the dispatcher before sequencing: a refusal is a NACK, and nothing changes.
                if case .resetTapped(let seconds) = action, seconds <= 0 { return "a timer needs at least 1 second" }
                return nil
            },
            middleware: [
                // Run by the dispatcher, in order, after `validate`: rewrite, refuse, log, count.
                .enrich("at-most-an-hour") { action in
                    if case .resetTapped(let seconds) = action, seconds > 3600 { action = .resetTapped(seconds: 3600) }
                },
                .log(),
                .count(),
            ],
            reject: { state, action in
                // Checked by the store against the current state: refused, the state stays as it was.
                if case .startTapped = action, state.remaining == 0 { return "the timer is at 0: reset it first" }
                return nil
            },
            render: { "\($0.remaining) s" + ($0.isRunning ? " ▶" : " ⏸") },
            actions: [
                // One example per action, for `zflux apps` (zflux's own tests check that its apps miss
                // none; in your package, add an example with every case you add).
                .user(.startTapped, "start counting down"),
                .user(.pauseTapped, "pause"),
                .user(.resetTapped(seconds: 90), "set the time (1 s to an hour) and stop"),
                .effect(.ticked, "one second passed (sent by the running timer)"),
            ])
    }
}
@Test func timerMiddleware() throws {
    let host = RecordingMiddlewareHost()
    let payload = try Timer.app().admit(actionType: "resetTapped", payload: Array(#"{"resetTapped":{"seconds":9000}}"#.utf8), client: 1, host: host)
    #expect(try WireCodec().decode(Timer.Action.self, from: payload) == .resetTapped(seconds: 3600))
    #expect(host.counts == ["timer.resetTapped": 1])
}

@Test func countsDownAndStops() async {
    let store = TestStore(Timer.app(environment: .mock))
    await store.send(.resetTapped(seconds: 2)) { $0.remaining = 2 }
    await store.send(.startTapped) { $0.isRunning = true }
    await store.receive(.ticked) { $0.remaining = 1 }
    await store.receive(.ticked) {
        $0.remaining = 0
        $0.isRunning = false
    }
    await store.send(.startTapped, rejectedWith: "the timer is at 0: reset it first")
    await store.finish()
}

@Test func timerInACluster() async throws {
    let cluster = try await TestCluster.start(stores: ["timer": Timer.app(environment: .mock)])
    try await cluster.dispatch(Timer.Action.resetTapped(seconds: 3), to: "timer")
    try await cluster.dispatch(Timer.Action.startTapped, to: "timer")
    // seq 1 reset, seq 2 start, seqs 3–5 the three ticks the effect sent back through the dispatcher
    let state = try await cluster.state(of: "timer", as: Timer.State.self, atLeast: 5)
    #expect(state == Timer.State(remaining: 0, isRunning: false))
    try await cluster.shutdown()
}

public struct TimerScreen: TypedScreen {
    public static let app = "timer"
    public init() {}

    public func render(state: Timer.State, previous: Timer.State?, width: Int) -> Frame {
        [StyledLine("\(state.remaining) s", .bold) + StyledLine(state.isRunning ? "  running" : "  paused", .dim)]
    }

    public mutating func handle(_ key: Key, state: Timer.State) -> ScreenOutcome<Timer.Action> {
        switch key {
        case .character("s"): .send(.startTapped)
        case .character("p"): .send(.pauseTapped)
        case .character("r"): .send(.resetTapped(seconds: 60))
        default: .ignored
        }
    }

    public var help: String { "s start · p pause · r reset to 60 s · Ctrl-C quit" }
}
@Test func timerScreen() {
    var screen = TimerScreen()
    let state = Timer.State(remaining: 42, isRunning: true)
    #expect(screen.render(state: state, previous: nil, width: 80).map(\.plainText) == ["42 s  running"])
    #expect(screen.handle(.character("s"), state: state) == .send(.startTapped))
    #expect(screen.handle(.character("r"), state: state) == .send(.resetTapped(seconds: 60)))
    #expect(ScreenRegistry([TimerScreen.self]).screen(forApp: "timer") is TimerScreen)
}

@Test("the todo session of the bug report still reduces to the recorded states")
func todoSessionReplays() throws {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Sessions/todo-remove.session")
    let session = try Session.load(file.path)
    #expect(try session.verify(apps: Catalog.apps) == [])
}
