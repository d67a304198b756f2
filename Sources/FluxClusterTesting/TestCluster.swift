import Dispatcher
import FluxCore
import FluxTesting
import Foundation
import Logging
import NodeCores
import NodeSupport
import StoreNode
import Synchronization
import ViewNode

/// A whole cluster inside one test process over `inproc://`: a dispatcher and stores running on their
/// own node threads, as in production, with no process to spawn.
///
/// ```swift
/// let cluster = try await TestCluster.start(stores: ["star": Star.app(environment: .mock(succeeds: true))])
/// try await cluster.dispatch(Star.Action.starTapped, to: "star")
/// let state = try await cluster.state(of: "star", as: Star.State.self, atLeast: 2)  // the effect's answer is seq 2
/// try await cluster.shutdown()
/// ```
///
/// Given a ``TestClock``, the dispatcher runs by it: it stamps actions with the clock's time and fires
/// schedules only once the test advances the clock past their due time (each advance wakes it). The
/// apps' effects sleep on it when their environments are given its `effectClock`.
public final class TestCluster: Sendable {
    public let topology: Topology
    private let apps: [String: any AnyApp]
    private let tasks = Mutex<[Task<Void, Error>]>([])
    private let stops = Mutex<[@Sendable () -> Void]>([])
    private let connection: Mutex<DispatchClient?> = Mutex(nil)
    public let logger: Logger
    /// The clock the dispatcher runs by (nil: the system's).
    package let clock: TestClock?

    /// Starts a dispatcher and one store per entry (store name → app). Returns once all are listening.
    /// With `startStores: false` only the dispatcher starts; start stores later with `startStore(_:)`.
    public static func start(
        stores: KeyValuePairs<String, any AnyApp>, startStores: Bool = true, heartbeatMilliseconds: Int = 50,
        logLevel: Logger.Level = .error, clock: TestClock? = nil
    ) async throws -> TestCluster {
        let cluster = try TestCluster(
            stores: Array(stores), heartbeatMilliseconds: heartbeatMilliseconds, logLevel: logLevel, clock: clock)
        try await cluster.startDispatcher()
        if startStores { for (name, _) in stores { try await cluster.startStore(name) } }
        return cluster
    }

    init(stores: [(String, any AnyApp)], heartbeatMilliseconds: Int, logLevel: Logger.Level, clock: TestClock? = nil) throws {
        self.clock = clock
        var logger = Logger(label: "zflux.test-cluster")
        logger.logLevel = logLevel
        self.logger = logger
        topology = try Topology.make(
            transport: .inproc, runDirectory: "test-cluster-\(UInt64.random(in: 0...UInt64.max))",
            stores: stores.map { ($0.0, $0.1.name) }, heartbeatMilliseconds: heartbeatMilliseconds)
        apps = Dictionary(stores.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        var catalog: [String: any AnyApp] = [:]
        for (_, app) in stores { catalog[app.name] = app }
        try DependencyGraph.check(Array(catalog.values))
    }

    private func startDispatcher() async throws {
        var catalog: [String: any AnyApp] = [:]
        for app in apps.values { catalog[app.name] = app }
        var configuration = DispatcherNode.Configuration(topology: topology, apps: Array(catalog.values))
        if let clock {
            configuration.wallNanoseconds = { Int64((clock.now.timeIntervalSince1970 * 1e9).rounded()) }
        }
        let dispatcher = try DispatcherNode(configuration: configuration, logger: logger)
        // Each advance wakes the dispatcher's loop to fire what fell due, instead of at its next heartbeat.
        clock?.onAdvance { [weak dispatcher] _ in dispatcher?.shell.control.wake.signal() }
        run(stop: dispatcher.stop) { try await dispatcher.run() }
        try await dispatcher.ready.wait()
    }

    /// Starts (or starts again) the named store. `configure` may change its configuration, e.g. to put
    /// a relay between it and the dispatcher.
    @discardableResult
    public func startStore(_ name: String, configure: (inout StoreNode.Configuration) -> Void = { _ in }) async throws -> StoreNode {
        let endpoints = try topology.requireStore(named: name)
        guard let app = apps[name] else {
            throw Topology.UnknownStore(name: name, known: topology.stores.map(\.name))
        }
        var configuration = StoreNode.Configuration(topology: topology, store: endpoints, app: app)
        configuration.replayTimeoutMilliseconds = 300
        configure(&configuration)
        let store = try StoreNode(configuration: configuration, logger: logger)
        run(stop: store.stop) { try await store.run() }
        try await store.ready.wait()
        // Ready for a test once the store hears the dispatcher: every action dispatched from now on
        // reaches it live (and runs its effects).
        let deadline = ContinuousClock.now + .seconds(60)
        while !nodeIsReady(endpoint: endpoints.snapshot) {
            guard ContinuousClock.now < deadline else { throw NodeError("store \(name) did not hear the dispatcher within 60 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return store
    }

    /// Starts a view of the named store; `onUpdate` sees every update on the view's thread.
    @discardableResult
    public func startView(_ name: String, onUpdate: @escaping @Sendable (ViewUpdate) -> Void) async throws -> ViewNode {
        let endpoints = try topology.requireStore(named: name)
        let view = try ViewNode(configuration: .init(topology: topology, store: endpoints, app: apps[name]), logger: logger, onUpdate: onUpdate)
        run(stop: view.stop) { try await view.run() }
        try await view.ready.wait()
        return view
    }

    private func run(stop: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () async throws -> Void) {
        stops.withLock { $0.append(stop) }
        tasks.withLock { $0.append(Task { try await body() }) }
    }

    /// Dispatches an action through the intake, like any client, and returns its seq.
    @discardableResult
    public func dispatch<A: Encodable>(_ action: A, to app: String) async throws -> UInt64 {
        let payload = try JSONPayloadCodec.wire.encode(action)
        let type = ActionCoding.caseName(of: action)
        let intake = topology.dispatcher.intake
        let client = try connection.withLock { client -> DispatchClient in
            if let client { return client }
            let made = try DispatchClient(intake: intake)
            client = made
            return made
        }
        let outcome = try await client.dispatch(app: app, type: type, payload: payload)
        switch outcome {
        case .acknowledged(let seq): return seq
        case .rejected(let reason): throw NodeError("\(app).\(type) was rejected: \(reason)")
        case .timedOut: throw NodeError("\(app).\(type) was not answered")
        }
    }

    /// How many schedules the dispatcher holds, not yet fired or cancelled (nil if it does not answer).
    /// An effect's schedule reaches the dispatcher a little after the action that asked for it: a test
    /// waits for it here before it advances the clock, so that the delay counts from where it expects.
    public func pendingSchedules() -> Int? {
        guard let status = nodeStatus(endpoint: topology.dispatcher.intake, timeoutMilliseconds: 1000) else { return nil }
        return status.schedulesPending ?? 0
    }

    /// The store's current (version, state), straight from its snapshot service.
    public func snapshot<S: Decodable>(of store: String, as: S.Type) throws -> (version: UInt64, state: S)? {
        let endpoints = try topology.requireStore(named: store)
        guard
            let reply = try requestReply(
                endpoint: endpoints.snapshot, request: Message(header: Header(kind: .snapshotRequest)),
                expecting: .snapshot, timeoutMilliseconds: 1000)
        else { return nil }
        // `ref`: how far the store has applied with this state still current (it publishes only changes).
        return (max(reply.header.seq, reply.header.ref), try WireCodec().decode(S.self, from: reply.payload))
    }

    /// Waits (bounded) until the store has reached `version`, and returns its state then.
    public func state<S: Decodable>(
        of store: String, as type: S.Type, atLeast version: UInt64,
        timeout: Duration = .seconds(60)
    ) async throws -> S {
        let deadline = ContinuousClock.now + timeout
        var seen: UInt64 = 0
        // Checked once more after the deadline: a starved task may wake long after it (see `eventually`).
        while true {
            let late = ContinuousClock.now >= deadline
            if let snap = try snapshot(of: store, as: type) {
                seen = snap.version
                if snap.version >= version { return snap.state }
            }
            if late { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw NodeError("store \(store) reached version \(seen), not \(version), within \(timeout)")
    }

    /// Waits (bounded) until the store's state satisfies `condition` (what effects send back arrives at
    /// seqs a test cannot know in advance), and returns that state.
    public func state<S: Decodable>(
        of store: String, as type: S.Type, timeout: Duration = .seconds(60), until condition: (S) -> Bool
    ) async throws -> S {
        let deadline = ContinuousClock.now + timeout
        var last: S?
        // Checked once more after the deadline: a starved task may wake long after it (see `eventually`).
        while true {
            let late = ContinuousClock.now >= deadline
            if let snap = try snapshot(of: store, as: type) {
                if condition(snap.state) { return snap.state }
                last = snap.state
            }
            if late { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw NodeError("store \(store) did not reach the expected state within \(timeout); last seen: \(last.map { "\($0)" } ?? "nothing")")
    }

    /// Stops every node and waits for their threads to end.
    public func shutdown() async throws {
        connection.withLock { $0 = nil }
        for stop in stops.withLock({ $0 }) { stop() }
        for task in tasks.withLock({ $0 }) { try await task.value }
    }
}
