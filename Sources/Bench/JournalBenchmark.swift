import Dispatcher
import FluxCore
import Foundation
import Logging
import NodeSupport
import StoreNode

/// `zflux journal bench`: the journal's append rate under each fsync policy, and how fast a store
/// catches up from it (a fresh store replaying everything, with the app's types decoded through
/// `Codable` and through `@WireCodable`, then a restart from its snapshot).
public struct JournalBenchmark: Sendable {
    /// Records appended per policy (`always` is capped at 20,000: each is an fdatasync).
    public var records: Int
    /// Records per commit (1: a lone client; larger: the group commit of a busy intake).
    public var batch: Int
    /// Where the temporary journals go (its disk is what is measured).
    public var directory: String
    /// Actions a store catches up (0: skip).
    public var catchUp: Int

    public init(records: Int, batch: Int, directory: String, catchUp: Int) {
        self.records = records
        self.batch = batch
        self.directory = directory
        self.catchUp = catchUp
    }

    /// Runs every measurement, one result line at a time through `report`.
    public func run(report: (String) -> Void) async throws {
        for policy in FsyncPolicy.allCases {
            let count = policy == .always ? min(records, 20_000) : records
            let rate = try measureAppend(policy: policy, count: count)
            let name = policy.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)
            report(String(format: "append fsync=%@ batch=%-4d %8d records  %10.0f records/s", name, batch, count, rate))
        }
        if catchUp > 0 { try await measureCatchUp(count: catchUp, report: report) }
    }

    func temporary(_ name: String) throws -> String {
        let path = (directory as NSString).appendingPathComponent("zflux-bench-\(name)-\(getpid())")
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// What the journal carries and the store applies: a counter of its own, so the figures measure the
    /// journal and the catch-up path, not whichever apps the binary hosts.
    enum Tally {
        struct State: Codable, Equatable, Sendable { var count = 0 }
        enum Action: Codable, Equatable, Sendable { case addTapped(amount: Int) }

        static func app() -> FluxApp<State, Action, Void> {
            JournalBenchmark.counter(State()) { state, action in
                if case .addTapped(let amount) = action { state.count += amount }
            }
        }
    }

    /// The same counter with generated wire conformances (below): the same bytes, decoded without
    /// Codable.
    enum WireTally {
        struct State: Codable, Equatable, Sendable { var count = 0 }
        enum Action: Codable, Equatable, Sendable { case addTapped(amount: Int) }

        static func app() -> FluxApp<State, Action, Void> {
            JournalBenchmark.counter(State()) { state, action in
                if case .addTapped(let amount) = action { state.count += amount }
            }
        }
    }

    /// The bench's counter app over `State` and `Action`, whichever codec path their types take.
    static func counter<State: Codable & Equatable & Sendable, Action: Codable & Sendable>(
        _ initial: State, add: @escaping @Sendable (inout State, Action) -> Void
    ) -> FluxApp<State, Action, Void> {
        FluxApp(
            name: "counter", summary: "the journal bench's counter", initialState: initial,
            reducer: Reducer { state, action, _ in
                add(&state, action)
                return .none
            }, environment: ())
    }

    /// `counter.addTapped(amount: 1)` in the wire's default (binary) codec, as clients send it.
    static let payload: [UInt8] = (try? Tally.app().wirePayload(type: "addTapped", argumentsJSON: Array(#"{"amount":1}"#.utf8))) ?? []

    static func action(_ seq: UInt64) -> Message {
        Message(
            topic: Array("counter".utf8),
            header: Header(
                kind: .action, seq: seq, clientID: 1, clientSeq: seq, timestamp: Int64(seq), actionType: "addTapped"),
            payload: payload)
    }

    func measureAppend(policy: Journal.FsyncPolicy, count: Int) throws -> Double {
        let path = try temporary("append")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let journal = try Journal(directory: path, policy: policy)
        let start = ContinuousClock.now
        var seq: UInt64 = 1
        while seq <= UInt64(count) {
            let end = min(UInt64(count), seq + UInt64(batch) - 1)
            try journal.append((seq...end).map(JournalBenchmark.action))
            try journal.commit()
            seq = end + 1
        }
        let elapsed = ContinuousClock.now - start
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    func measureCatchUp(count: Int, report: (String) -> Void) async throws {
        let runDir = try temporary("catchup")
        defer { try? FileManager.default.removeItem(atPath: runDir) }
        var logger = Logger(label: "zflux.bench")
        logger.logLevel = .error
        let topology = try Topology.make(transport: .ipc, runDirectory: runDir, stores: [("counter", "counter")])
        let endpoints = topology.stores[0]
        let tailLength = min(Defaults.snapshotEveryActions, count)  // a restart is at most this far behind
        try journal(runDir, from: 1, through: UInt64(count - tailLength))

        // A store with no snapshot catching up everything: a new replica, the worst case. First with its
        // types decoded through Codable (the default), then through @WireCodable (the same bytes).
        try await timeCatchUp(
            runDir, topology, endpoints, logger, app: Tally.app(), to: count - tailLength, label: "fresh store (no snapshot, Codable)", report: report
        )
        try FileManager.default.removeItem(atPath: Self.snapshotPath(runDir))
        try await timeCatchUp(
            runDir, topology, endpoints, logger, app: WireTally.app(), to: count - tailLength, label: "fresh store (no snapshot, @WireCodable)",
            report: report)
        // The same store restarting: its snapshot (written when it stopped) plus the newest actions.
        try journal(runDir, from: UInt64(count - tailLength + 1), through: UInt64(count))
        try await timeCatchUp(
            runDir, topology, endpoints, logger, app: WireTally.app(), to: count, label: "store restart (snapshot + replay)", report: report)
    }

    func journal(_ runDir: String, from: UInt64, through last: UInt64) throws {
        let journal = try Journal(directory: runDir + "/journal", policy: .none)
        var seq = from
        while seq <= last {
            let end = min(last, seq + 4095)
            try journal.append((seq...end).map(JournalBenchmark.action))
            seq = end + 1
        }
    }

    func timeCatchUp(
        _ runDir: String, _ topology: Topology, _ endpoints: Topology.StoreEndpoints, _ logger: Logger, app: any AnyApp,
        to count: Int, label: String, report: (String) -> Void
    ) async throws {
        var dispatcherConfiguration = DispatcherNode.Configuration(topology: topology, apps: [app])
        dispatcherConfiguration.journal = .init(directory: runDir + "/journal", policy: .none)
        // The first opening reads the whole journal (the bench wrote it without a dispatcher) and leaves
        // a checkpoint; the later ones start from it.
        let checkpoint = (try? FileManager.default.contentsOfDirectory(atPath: runDir + "/journal"))?.filter { $0.hasPrefix("CHECKPOINT-") }.max()
        let openStart = ContinuousClock.now
        let dispatcher = try DispatcherNode(configuration: dispatcherConfiguration, logger: logger)
        let dispatcherTask = Task { try await dispatcher.run() }
        try await dispatcher.ready.wait()
        report(
            "dispatcher opened a journal of \(count) actions in \(seconds(ContinuousClock.now - openStart)) s "
                + (checkpoint.map { "(from its checkpoint at seq \(UInt64($0.dropFirst("CHECKPOINT-".count)) ?? 0))" }
                    ?? "(no checkpoint: every record read)"))

        var storeConfiguration = StoreNode.Configuration(topology: topology, store: endpoints, app: app)
        storeConfiguration.snapshotPath = Self.snapshotPath(runDir)
        storeConfiguration.snapshotEveryActions = Int.max
        let store = try StoreNode(configuration: storeConfiguration, logger: logger)
        let start = ContinuousClock.now
        let storeTask = Task { try await store.run() }
        while (nodeStatus(endpoint: endpoints.snapshot, timeoutMilliseconds: 2000)?.version ?? 0) < count {
            try await Task.sleep(for: .milliseconds(2))
        }
        let elapsed = seconds(ContinuousClock.now - start)
        report(String(format: "%@: caught up to %d journaled actions in %.3f s", label, count, elapsed))
        store.stop()
        dispatcher.stop()
        _ = try await (storeTask.value, dispatcherTask.value)
    }

    /// Where the catch-up's store keeps its snapshot in `runDir`.
    static func snapshotPath(_ runDir: String) -> String { runDir + "/snapshots/counter.snapshot" }

    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

// What `@WireCodable` writes for `WireTally`'s two types, written out here: the bench measures the
// generated path without depending on the macro, so that the command line that hosts it (ZFluxCLI)
// builds no swift-syntax. The bytes are the binary codec's, as `Codable` writes them; BenchTests checks
// that both paths read and write the same.

extension JournalBenchmark.WireTally.State: WireEncodable, WireDecodable {
    func wireEncode(to writer: inout WireWriter) throws {
        let map = writer.beginMap()
        writer.key("count")
        try writer.encode(count)
        writer.end(map, count: 1)
    }

    init(wireReader reader: inout WireReader) throws {
        var count: Int? = nil
        let map = try reader.beginMap()
        for _ in 0..<map.count {
            let key = try reader.readKey()
            if reader.key(key, is: "count") {
                count = try reader.decode(Int.self, forKey: "count")
            } else {
                try reader.skipValue()
            }
        }
        try reader.end(map)
        guard let count else { throw reader.missing("count") }
        self.count = count
    }
}

extension JournalBenchmark.WireTally.Action: WireEncodable, WireDecodable {
    func wireEncode(to writer: inout WireWriter) throws {
        switch self {
        case .addTapped(let amount):
            let outer = writer.beginMap()
            writer.key("addTapped")
            let map = writer.beginMap()
            writer.key("amount")
            try writer.encode(amount)
            writer.end(map, count: 1)
            writer.end(outer, count: 1)
        }
    }

    init(wireReader reader: inout WireReader) throws {
        let outer = try reader.beginMap()
        var known = 0
        var at = 0
        for _ in 0..<outer.count {
            let key = try reader.readKey()
            if reader.key(key, is: "addTapped") {
                known += 1
                at = reader.offset
            }
            try reader.skipValue()
        }
        try reader.end(outer)
        guard known == 1 else { throw reader.caseCount(Self.self) }
        let end = reader.offset
        reader.offset = at
        var amount: Int? = nil
        let map = try reader.beginMap()
        for _ in 0..<map.count {
            let key = try reader.readKey()
            if reader.key(key, is: "amount") {
                amount = try reader.decode(Int.self, forKey: "amount")
            } else {
                try reader.skipValue()
            }
        }
        try reader.end(map)
        guard let amount else { throw reader.missing("amount") }
        self = .addTapped(amount: amount)
        reader.offset = end
    }
}
