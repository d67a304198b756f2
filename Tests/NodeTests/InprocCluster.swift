import Dispatcher
import Examples
import FluxCore
import Foundation
import Logging
import NodeSupport
import StoreNode
import Synchronization
import Testing
import ViewNode
import ZeroMQ

/// A dispatcher and stores inside the test process over inproc://, stopped by `shutdown()`.
final class InprocCluster: Sendable {
    let topology: Topology
    let dispatcher: DispatcherNode
    private let tasks = Mutex<[Task<Void, Error>]>([])
    private let nodes = Mutex<[@Sendable () -> Void]>([])
    static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .error
        return logger
    }()

    init(stores: [(String, String)] = [("todo", "todo"), ("counter", "counter")]) throws {
        topology = try Topology.make(transport: .inproc, runDirectory: "cluster-\(UInt64.random(in: 0...UInt64.max))",
                                     stores: stores, heartbeatMilliseconds: 50)
        dispatcher = try DispatcherNode(configuration: .init(topology: topology, apps: Catalog.apps), logger: Self.logger)
    }

    func startDispatcher() async throws {
        let dispatcher = dispatcher
        start(stop: dispatcher.stop) { try await dispatcher.run() }
        try await dispatcher.ready.wait()
    }

    /// Starts a store; `actionsFrom` lets a test put a relay between the dispatcher and the store.
    @discardableResult
    func startStore(_ name: String, actionsFrom: String? = nil) async throws -> StoreNode {
        let endpoints = try #require(topology.store(named: name))
        var configuration = StoreNode.Configuration(topology: topology, store: endpoints, app: try #require(Catalog.app(named: endpoints.app)))
        configuration.heartbeatMilliseconds = 50
        configuration.replayTimeoutMilliseconds = 300
        if let actionsFrom { configuration.dispatcherActions = actionsFrom }
        let store = try StoreNode(configuration: configuration, logger: Self.logger)
        start(stop: store.stop) { try await store.run() }
        try await store.ready.wait()
        return store
    }

    func start(stop: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () async throws -> Void) {
        nodes.withLock { $0.append(stop) }
        tasks.withLock { $0.append(Task { try await body() }) }
    }

    func shutdown() async throws {
        for stop in nodes.withLock({ $0 }) { stop() }
        for task in tasks.withLock({ $0 }) { try await task.value }
    }

    /// The store's answer to a snapshot request: (version, state JSON).
    func snapshot(_ store: String) throws -> (version: UInt64, state: [UInt8])? {
        let endpoints = try #require(topology.store(named: store))
        guard let reply = try requestReply(endpoint: endpoints.snapshot, request: Message(header: Header(kind: .snapshotRequest)),
                                           expecting: .snapshot, timeoutMilliseconds: 1000) else { return nil }
        return (reply.header.seq, reply.payload)
    }

    /// Waits (with a deadline) until the store's published version reaches `version`.
    func waitForVersion(_ store: String, _ version: UInt64, timeout: Duration = .seconds(20)) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        var last: UInt64 = 0
        while ContinuousClock.now < deadline {
            if let snap = try snapshot(store) {
                last = snap.version
                if snap.version >= version { return snap.state }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("store \(store) reached version \(last), not \(version), within \(timeout)")
        throw CancellationError()
    }
}

/// Waits for a condition with a deadline; records an issue when it never holds.
func eventually(_ what: String, timeout: Duration = .seconds(20), _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out waiting for \(what)")
    throw CancellationError()
}

/// Reduces todo actions locally: what every store must end up with.
func expectedTodo(_ actions: [(UInt64, Todo.Action)]) -> Todo.State {
    var state = Todo.State()
    for (_, action) in actions.sorted(by: { $0.0 < $1.0 }) { _ = Todo.reducer(&state, action, .live) }
    return state
}

/// A value shared between test threads.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
