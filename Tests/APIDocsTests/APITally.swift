// Generated from docs/API.md by scripts/extract-api.py: edit the page, not this file.
import Cluster
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import Testing
import ViewNode
import ZFluxCLI

public enum Tally {
    public struct State: Codable, Equatable, Sendable {
        public var count = 0
        public var saving = false
        public init(count: Int = 0, saving: Bool = false) {
            self.count = count
            self.saving = saving
        }
    }

    public enum Action: Codable, Equatable, Sendable {
        case added(amount: Int)
        case saveTapped
        case saved(total: Int)
    }

    public struct Environment: Sendable {
        /// Saves the total somewhere and answers with what it saved.
        public var save: @Sendable (Int) async -> Int
        public init(save: @escaping @Sendable (Int) async -> Int) { self.save = save }
        public static let mock = Environment { $0 }
    }

    public static func app(environment: Environment = .mock) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "tally", summary: "a running total, saved by an effect",
            initialState: State(), reducer: reducer, environment: environment,
            validate: { action in
                if case .added(let amount) = action, amount == 0 { return "adding 0 changes nothing" }
                return nil
            },
            middleware: [.log(), .count()],
            reject: { state, action in
                if case .added(let amount) = action, state.count + amount < 0 { return "the total cannot go below 0" }
                return nil
            },
            actions: [
                .user(.added(amount: 5), "add to the total (not 0)"),
                .user(.saveTapped, "save the total"),
                .effect(.saved(total: 5), "the total was saved (sent by the save effect)"),
            ])
    }
}

extension Tally {
    /// A step of Tally's own: counts additions of 100 or more apart, and logs where each came from.
    static let largeAdditions = Middleware<Action>("large", rewrites: false) { action, context in
        guard case .added(let amount) = action, amount >= 100 else { return }
        context.count("\(context.app).large")
        context.log("\(amount) from client \(context.client) (\(context.origin))")
    }
}

@Test func largeAdditionsAreCountedApart() throws {
    let host = RecordingMiddlewareHost()
    var action = Tally.Action.added(amount: 150)
    try [Tally.largeAdditions].run(on: &action, app: "tally", client: 7, host: host)
    #expect(host.counts == ["tally.large": 1])
    #expect(host.logged == ["tally large: 150 from client 7 (client)"])
}

extension Tally {
    public static let reducer = Reducer<State, Action, Environment> { state, action, environment in
        switch action {
        case .added(let amount):
            state.count += amount
            return .none
        case .saveTapped:
            state.saving = true
            let total = state.count
            return .run { send in send(.saved(total: await environment.save(total))) }
        case .saved:
            state.saving = false
            return .none
        }
    }
}

extension Tally {
    enum CancelID: Hashable, Sendable { case autosave }

    /// Saves the total a second from now, unless a newer autosave replaces this one.
    static func autosave(_ total: Int, _ environment: Environment, clock: EffectClock) -> Effect<Action> {
        .run { send in
            guard (try? await clock.sleep(.seconds(1))) != nil else { return }
            send(.saved(total: await environment.save(total)))
        }
        .cancellable(id: CancelID.autosave, cancelInFlight: true)
    }
}

@Test func tallySavesItsTotal() async {
    let store = TestStore(Tally.app())
    await store.send(.added(amount: 5)) { $0.count = 5 }
    await store.send(.added(amount: -9), rejectedWith: "the total cannot go below 0")
    await store.send(.saveTapped) { $0.saving = true }
    await store.receive(.saved(total: 5)) { $0.saving = false }
    await store.finish()
}

/// A hold on a seat that lapses unless it is confirmed within fifteen minutes.
enum SeatHold {
    struct State: Codable, Equatable, Sendable {
        var held = false
        var lapsedLate = false
    }
    enum Action: Codable, Equatable, Sendable { case held, confirmed, lapsed }

    static let reducer = Reducer<State, Action, Void> { state, action, _, stamp in
        switch action {
        case .held:
            state.held = true
            return .schedule(.lapsed, after: .seconds(15 * 60), id: "lapse")
        case .confirmed:
            return .cancelSchedule(id: "lapse")
        case .lapsed:
            state.held = false
            state.lapsedLate = stamp.isLate
            return .none
        }
    }
}

@Test func seatHoldLapsesByTheClock() async {
    let clock = TestClock()
    let store = TestStore(initialState: SeatHold.State(), reducer: SeatHold.reducer, environment: (), clock: clock)
    await store.send(.held) { $0.held = true }
    clock.advance(by: .seconds(14 * 60))
    #expect(store.pendingSchedules == ["lapse": clock.now.addingTimeInterval(60)])
    clock.advance(by: .seconds(60))
    await store.receive(.lapsed) { $0.held = false }
    await store.send(.held) { $0.held = true }
    await store.send(.confirmed)
    clock.run()
    #expect(store.pendingSchedules.isEmpty)
    await store.finish()
}

@Test func tallyInACluster() async throws {
    let cluster = try await TestCluster.start(stores: ["tally": Tally.app()])
    try await cluster.dispatch(Tally.Action.added(amount: 5), to: "tally")
    try await cluster.dispatch(Tally.Action.saveTapped, to: "tally")
    // seq 1 added, seq 2 saveTapped, seq 3 the saved action the effect sent back
    let state = try await cluster.state(of: "tally", as: Tally.State.self, atLeast: 3)
    #expect(state == Tally.State(count: 5, saving: false))
    try await cluster.shutdown()
}

/// API.md's main.swift (without `import TallyApp`), compiled as a function's body; never called.
func apiMainSwift() async throws {
    let config = ClusterConfig(
        cluster: .init(transport: "ipc", heartbeatMs: 200),
        stores: [.init(name: "tally"), .init(name: "tally-replica", app: "tally", effects: false)])

    await ZFluxCLI.main(
        ZFluxCLI.Host(
            apps: { _ in [Tally.app()] },
            screens: ScreenRegistry([TallyScreen.self]),
            codecSamples: [CodecSample("tally state", Tally.State(count: 42))],
            defaultConfig: try config.tomlText(),
            demoStory: [DemoStep("tally", "added", #"{"amount":5}"#), DemoStep("tally", "saveTapped")],
            simulationMix: ActionMix([
                .init("tally", "added", weight: 3) { random in #"{"amount":\#(Int.random(in: 1...9, using: &random))}"# },
                .init("tally", "saveTapped"),
            ])))
}

public struct TallyScreen: TypedScreen {
    public static let app = "tally"
    public init() {}

    public func render(state: Tally.State, previous: Tally.State?, width: Int) -> Frame {
        [StyledLine("Total ", .bold) + StyledLine("\(state.count)", state.saving ? .dim : .plain)]
    }

    public mutating func handle(_ key: Key, state: Tally.State) -> ScreenOutcome<Tally.Action> {
        switch key {
        case .character("+"): .send(.added(amount: 1))
        case .character("s"): .send(.saveTapped)
        default: .ignored
        }
    }

    public var help: String { "+ add one · s save · Ctrl-C quit" }
}

@Test func tallyScreen() {
    var screen = TallyScreen()
    let state = Tally.State(count: 7)
    #expect(screen.render(state: state, previous: nil, width: 40).map(\.plainText) == ["Total 7"])
    #expect(screen.handle(.character("+"), state: state) == .send(.added(amount: 1)))
}

@Test func tallyConfigIsValid() throws {
    let config = ClusterConfig(
        cluster: .init(transport: "tcp", host: "127.0.0.1", basePort: 5570),
        journal: .init(fsync: "always"),
        stores: [.init(name: "tally"), .init(name: "tally-replica", app: "tally", effects: false)])
    let text = try config.tomlText()
    let read = try ClusterConfig.parse(text, source: "generated")
    #expect(read.cluster == config.cluster && read.journal == config.journal && read.stores == config.stores)
    let topology = try config.topology(runDirectory: ".zflux", transportOverride: nil, basePortOverride: nil, apps: [Tally.app()])
    #expect(topology.stores.map(\.name) == ["tally", "tally-replica"])
}

@Test func tallyDevtoolsSectionRoundTrips() throws {
    let devtools = ClusterConfig.DevtoolsSection(listen: "127.0.0.1:8745", maxConnections: 8, key: "keys/devtools.key")
    let text = try ClusterConfig(stores: [.init(name: "tally")], devtools: devtools).tomlText()
    #expect(try ClusterConfig.parse(text, source: "generated").devtools == devtools)
}
