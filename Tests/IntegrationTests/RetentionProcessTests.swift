import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing

/// Retention (`[journal] retain_mb`) on real processes: what each dispatcher lets go by itself, and
/// what those who read the journal meanwhile get.
@Suite("journal retention on real processes")
struct RetentionProcessTests {
    /// The segments of the journal in `directory`: each one's first seq and bytes, oldest first.
    static func segments(_ directory: String) -> [(first: UInt64, bytes: Int)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".journal") }.sorted().compactMap { name in
            guard let first = UInt64(name.dropLast(".journal".count)) else { return nil }
            let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? NSNumber)?.intValue ?? 0
            return (first, size)
        }
    }

    /// Writes a cluster config with retention on (1 MiB segments, 1 MiB budget, `stores` that snapshot
    /// every `snapshotEvery` actions: often, by default) into a new temporary directory.
    static func retainingConfig(snapshotEvery: Int = 20, stores: [String] = ["ledger", "counter"]) throws -> (dir: String, config: String) {
        var template = Array("/tmp/zf-retain-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        let config = dir + "/cluster.toml"
        try
            ("[cluster]\ntransport = \"ipc\"\n[journal]\nsegment_mb = 1\nretain_mb = 1\nsnapshot_every = \(snapshotEvery)\n"
            + stores.map { "[[store]]\nname = \"\($0)\"\n" }.joined())
            .write(toFile: config, atomically: true, encoding: .utf8)
        return (dir, config)
    }

    /// Dispatches `count` ledger actions of about 8 KB each: a MiB every 128.
    static func fill(_ count: Int, _ run: ([String]) throws -> CommandResult) throws {
        let memo = String(repeating: "s", count: 8_000)
        let filled = try run(["dispatch", "ledger", "post", #"{"account":1,"amount":1,"memo":"\#(memo)"}"#, "--repeat", "\(count)"])
        try #require(filled.status == 0, "\(filled.stderr)")
    }

    @Test(
        "a store's snapshot that held retention back lets the segments go once it is written, without waiting for the next checkpoint (a journal that no longer grows writes none)"
    )
    func retentionRunsAgainOnceAStoreSnapshots() async throws {
        // One store, which snapshots only after 400 actions: the fill's rolls find it without one.
        let (dir, config) = try Self.retainingConfig(snapshotEvery: 400, stores: ["ledger"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady(timeout: .seconds(60))
        func dispatcher() throws -> NodeStatus? {
            try cluster.zflux(["status"]).stdout.split(separator: "\n").compactMap { try? NodeStatus.decode(Array($0.utf8)) }.first {
                $0.role == .dispatcher
            }
        }
        // About 2.4 MiB in 1 MiB segments: two rolls, two checkpoints, and the store's missing snapshot
        // holds every segment back.
        try Self.fill(300) { try cluster.zflux($0, timeout: .seconds(300)) }
        try await eventually("retention says the store held it back", timeout: .seconds(60), interval: .milliseconds(250)) {
            try dispatcher()?.journalRetention?.hasPrefix("over retain_mb") == true
        }
        #expect(try dispatcher()?.journalFirstSeq == 1)
        // Small actions take the store past 400 (it snapshots) and roll no segment.
        let small = try cluster.zflux(["dispatch", "ledger", "post", #"{"account":1,"amount":1,"memo":"m"}"#, "--repeat", "150"])
        try #require(small.status == 0, "\(small.stderr)")
        try await eventually("the oldest segment goes once the snapshot is there", timeout: .seconds(30), interval: .milliseconds(250)) {
            (try dispatcher()?.journalFirstSeq ?? 0) > 1
        }
    }

    @Test(
        "with retain_mb, a pair's standby lets its own oldest segments go after its checkpoints, as the leader does: both journals stay bounded, and a failover afterwards serves from the standby's compacted journal"
    )
    func standbyRetains() async throws {
        let (dir, config) = try Self.retainingConfig()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--ha", "--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady(timeout: .seconds(60))
        // About 7 MiB of actions, in 1 MiB segments: without retention each journal holds them all.
        try Self.fill(900) { try cluster.zflux($0, timeout: .seconds(300)) }
        let members = try #require(cluster.topology?.ha).dispatchers
        for member in members {
            // The budget, plus the segments the older checkpoint and the newest keep.
            try await eventually("\(member.name)'s journal stays bounded and starts past seq 1", timeout: .seconds(60), interval: .milliseconds(250))
            {
                let segments = Self.segments(member.journalDirectory)
                return (segments.first?.first ?? 0) > 1 && segments.reduce(0) { $0 + $1.bytes } <= 4 << 20
            }
        }
        func leader() throws -> NodeStatus? {
            try cluster.zflux(["status"]).stdout.split(separator: "\n").compactMap { try? NodeStatus.decode(Array($0.utf8)) }.first {
                $0.leader == true
            }
        }
        // The standby answers no STATUS: its ACKs tell the leader what its retention did, and the
        // leader's status says it (`top` too: TerminalTests.retentionInTop).
        var reported: NodeStatus?
        try await eventually("the leader's status says what the standby's retention did", timeout: .seconds(60), interval: .milliseconds(250)) {
            reported = try leader()
            return (reported?.standbyJournalFirstSeq ?? 0) > 1 && reported?.standbyRetention?.isEmpty == false
        }
        #expect(reported?.numericFields.contains { $0.name == "standby_journal_first_seq" && $0.value > 1 } == true, "a metric")
        var victim: NodeStatus?
        try await eventually("a leader to kill", timeout: .seconds(60), interval: .milliseconds(200)) {
            victim = try leader()
            return victim != nil
        }
        let killed = try #require(victim)
        #expect(signalNode(Int32(killed.pid), SIGKILL), "kill -9 of \(killed.name ?? "the leader")")
        #expect(waitUntilGone(Int32(killed.pid)))
        // The standby, its journal compacted by its own retention, leads and serves.
        var successor: NodeStatus?
        try await eventually("the pair leads again", timeout: .seconds(60), interval: .milliseconds(250)) {
            guard let now = try leader(), now.pid != killed.pid else { return false }
            successor = now
            return (try? cluster.zflux(["dispatch", "counter", "incrementTapped"]))?.status == 0
        }
        #expect((successor?.journalFirstSeq ?? 0) > 1, "the new leader's journal was compacted: \(String(describing: successor))")
        let state = try cluster.zflux(["state", "counter"])
        #expect(state.status == 0, "\(state.stderr)")
    }
}
