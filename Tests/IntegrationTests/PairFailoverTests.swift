import Dispatcher
import Examples
import FluxCore
import FluxTesting
import Foundation
import Leadership
import Logging
import NodeSupport
import Testing

/// A dispatcher pair on real processes (issue 27): etcd, two `zflux dispatcher` processes of one
/// `[ha]` topology, a store, and retrying clients that know both dispatchers' intakes.
@Suite("dispatcher pair: failover on real processes", .serialized)
struct PairFailoverTests {
    /// The run directory of a pair: the topology every process reads, and both journals.
    struct Pair {
        let runDir: String
        let topology: Topology
        let key: String

        /// `addresses` puts each dispatcher on tcp at its host's address (ports 5570–5573); without it,
        /// every socket is an ipc path in the run directory. `secured` adds CURVE: the cluster's server
        /// and client keys, and each member's own (all in `runDir/keys`).
        init(etcd: String, runDir: String, replication: String = "sync", addresses: [String: String]? = nil, secured: Bool = false) throws {
            self.runDir = runDir
            key = "/zflux/test-\(UUID().uuidString.prefix(8))/leader"
            func endpoint(_ name: String, _ socket: String, _ port: Int) -> String {
                addresses?[name].map { "tcp://\($0):\(port)" } ?? "ipc://\(runDir)/\(name)-\(socket)"
            }
            let keys = runDir + "/keys"
            if secured {
                for name in ["server", "client", "d1", "d2"] { _ = try KeyPair.generate(name: name, directory: keys) }
                try String(contentsOfFile: keys + "/client.pub", encoding: .utf8).write(
                    toFile: keys + "/authorized_keys", atomically: true, encoding: .utf8)
            }
            func member(_ name: String) throws -> Topology.HighAvailability.Member {
                .init(
                    name: name,
                    endpoints: .init(
                        intake: endpoint(name, "intake", 5570), actions: endpoint(name, "actions", 5571), replay: endpoint(name, "replay", 5572)),
                    replication: endpoint(name, "replication", 5573), journalDirectory: "\(runDir)/journal-\(name)",
                    keyFile: secured ? "\(keys)/\(name).key" : nil, publicKey: secured ? try KeyPair.load("\(keys)/\(name).key").publicKey : nil)
            }
            let ha = Topology.HighAvailability(
                etcd: [etcd], leaseMilliseconds: 2000, replication: replication, key: key, dispatchers: [try member("d1"), try member("d2")])
            var topology = Topology(
                dispatcher: ha.joined,
                stores: [
                    .init(name: "counter", app: "counter", state: "ipc://\(runDir)/counter-state", snapshot: "ipc://\(runDir)/counter-snapshot"),
                    // For actions of any size (a memo pads them); no test runs its store.
                    .init(name: "ledger", app: "ledger", state: "ipc://\(runDir)/ledger-state", snapshot: "ipc://\(runDir)/ledger-snapshot"),
                ],
                heartbeatMilliseconds: 100)
            topology.durability = .init(
                journalDirectory: "\(runDir)/journal", fsync: .batch, segmentBytes: 1 << 20, snapshotDirectory: "\(runDir)/snapshots",
                snapshotEveryActions: 1000)
            topology.ha = ha
            if secured {
                topology.security = .init(
                    serverKeyFile: keys + "/server.key", serverPublicKey: try KeyPair.load(keys + "/server.key").publicKey,
                    clientKeyFile: keys + "/client.key", authorizedKeysFile: keys + "/authorized_keys")
            }
            self.topology = topology
            try FileManager.default.createDirectory(atPath: runDir, withIntermediateDirectories: true)
            try topology.write(runDirectory: runDir)
        }

        func start(_ name: String) throws -> Follower {
            try Follower(zfluxBinary, ["dispatcher", "--run-dir", runDir, "--node", name])
        }

        /// Both members started, the one etcd names as leader, and the other once it follows it (and,
        /// over tcp, holds its ports). A member left behind by a failed wait is stopped with its Follower.
        func startFollowing(_ client: EtcdClient) async throws -> (nodes: [String: Follower], leader: String, standby: String) {
            let nodes = ["d1": try start("d1"), "d2": try start("d2")]
            let leader = try #require(try await PairFailoverTests.waitForLeader(client, key), "no dispatcher won the lease within 30 s")
            let standby = leader == "d1" ? "d2" : "d1"
            try await eventually("the standby to follow the leader", timeout: .seconds(60)) {
                (nodes[standby]?.stderr ?? "").contains("following the leader")
            }
            return (nodes, leader, standby)
        }
    }

    /// Who holds the lease, as etcd says.
    static func leader(_ client: EtcdClient, _ key: String) async throws -> String? {
        guard let held = try await client.get(key).keyValue else { return nil }
        return LeaderRecord.decode(held.value)?.name
    }

    @Test(
        "kill -9 the leader under load from three retrying clients, the supervisor starting it again: every acknowledged action is in both journals once, at its seq"
    )
    func killLeaderUnderLoad() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        var nodes = ["d1": try pair.start("d1"), "d2": try pair.start("d2")]
        defer { for node in nodes.values { node.stop() } }
        let store = try Follower(zfluxBinary, ["store", "counter", "--run-dir", runDir])
        defer { store.stop() }

        // One of them leads, and its standby follows: a first dispatch is acknowledged (sync: held by both).
        var first: String?
        let deadline = ContinuousClock.now + .seconds(30)
        while first == nil && ContinuousClock.now < deadline {
            first = try await Self.leader(client, pair.key)
            if first == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let leader = try #require(first, "no dispatcher won the lease within 30 s: \(nodes.values.map(\.stderr))")

        let killAfter = 300
        let killed = Locked<ContinuousClock.Instant?>(nil)
        let ackTimes = Locked<[ContinuousClock.Instant]>([])
        let leaderPid = try #require(nodes[leader]).process.pid
        let intake = pair.topology.dispatcher.intake
        async let load = runLoad(intake: intake, clients: 3, perClient: 400, make: { _, i in try counterAction(i % 7 + 1) }) { count in
            ackTimes.withLock { $0.append(.now) }
            if count == killAfter {
                // kill -9: no clean step-down, no revoke; the lease must run out at etcd.
                signalNode(leaderPid, SIGKILL)
                killed.withLock { $0 = .now }
            }
        }
        // The supervisor's part: the killed dispatcher is started again, and rejoins as the standby
        // (under sync replication the new leader ACKs once a standby holds its actions too).
        while killed.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(waitUntilGone(leaderPid))
        nodes[leader]?.stop()
        nodes[leader] = try pair.start(leader)
        let acked = try await load
        #expect(acked.count == 1200, "the dispatchers' logs: \(nodes.values.map { $0.stderr.suffix(3000) })")
        let killedAt = try #require(killed.withLock { $0 })
        let firstAfter = ackTimes.withLock { $0 }.first { $0 > killedAt }
        if let firstAfter { print("pair failover: kill -9 of the leader to the first new ACK: \(killedAt.duration(to: firstAfter))") }
        // Either may lead now (the restarted one may win the key once the dead lease runs out): under
        // sync replication both journals hold every acknowledged action.
        let leading = try #require(try await Self.leader(client, pair.key), "nobody leads at the end")
        for node in nodes.values { node.stop() }
        try Self.checkJournals(runDir: runDir, acked: acked, leading: leading)
    }

    /// Under sync replication both journals hold every acknowledged action, once, at its seq; the
    /// leader's serves an epoch won through etcd.
    static func checkJournals(runDir: String, acked: [Acked], leading: String, in names: [String] = ["d1", "d2"]) throws {
        for name in names {
            let journal = try Journal(directory: "\(runDir)/journal-\(name)", repair: false)
            var seen: [UInt64: Message] = [:]
            var dispatches = Set<[UInt64]>()
            try journal.forEach { record in
                seen[record.header.seq] = record
                #expect(dispatches.insert([record.header.clientID, record.header.clientSeq]).inserted, "\(name): a dispatch journaled twice")
            }
            for entry in acked {
                let record = try #require(seen[entry.seq], "acknowledged seq \(entry.seq) is not in \(name)'s journal")
                #expect(record.header.clientID == entry.client && record.header.clientSeq == entry.clientSeq && record.payload == entry.payload)
            }
            if name == leading { #expect(journal.history.isLeadership, "\(name) leads in \(journal.history)") }
        }
    }

    /// Waits (up to 30 s) until someone holds the lease; its name.
    static func waitForLeader(_ client: EtcdClient, _ key: String, otherThan previous: String? = nil) async throws -> String? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let name = try await leader(client, key), name != previous { return name }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    @Test("a planned zflux failover under load from three retrying clients: no client sees an error, and nothing acknowledged is lost")
    func plannedFailover() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        var nodes = ["d1": try pair.start("d1"), "d2": try pair.start("d2")]
        defer { for node in nodes.values { node.stop() } }
        let leader = try #require(try await Self.waitForLeader(client, pair.key), "no dispatcher won the lease within 30 s")
        let leaderPid = try #require(nodes[leader]).process.pid

        let count = Locked(0)
        async let load = runLoad(intake: pair.topology.dispatcher.intake, clients: 3, perClient: 300, make: { _, i in try counterAction(i % 5 + 1) })
        {
            acked in count.withLock { $0 = acked }
        }
        while count.withLock({ $0 }) < 200 { try await Task.sleep(for: .milliseconds(20)) }
        let handover = try zflux(["failover", "--run-dir", runDir])
        #expect(handover.status == 0, "failover: \(handover.stderr)")
        #expect(handover.stdout.contains("leads now"), "\(handover.stdout)")
        // The old leader steps down and exits; its supervisor (here, the test) starts it again as the standby.
        #expect(waitUntilGone(leaderPid, timeout: .seconds(15)), "the old leader exits once it has stepped down")
        nodes[leader]?.stop()
        nodes[leader] = try pair.start(leader)
        let acked = try await load
        #expect(acked.count == 900, "every dispatch acknowledged, none refused")
        let leading = try #require(try await Self.leader(client, pair.key))
        #expect(leading != leader, "the standby leads after the handover")
        for node in nodes.values { node.stop() }
        try Self.checkJournals(runDir: runDir, acked: acked, leading: leading)
    }

    @Test("a standby killed and started again under load catches up: acknowledgements resume, and it ends in sync with every action")
    func standbyRestartCatchesUp() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        var nodes = ["d1": try pair.start("d1"), "d2": try pair.start("d2")]
        defer { for node in nodes.values { node.stop() } }
        let leader = try #require(try await Self.waitForLeader(client, pair.key), "no dispatcher won the lease within 30 s")
        let standby = leader == "d1" ? "d2" : "d1"
        let standbyPid = try #require(nodes[standby]).process.pid

        let count = Locked(0)
        async let load = runLoad(intake: pair.topology.dispatcher.intake, clients: 3, perClient: 300, make: { _, i in try counterAction(i % 5 + 1) })
        {
            acked in count.withLock { $0 = acked }
        }
        while count.withLock({ $0 }) < 200 { try await Task.sleep(for: .milliseconds(20)) }
        signalNode(standbyPid, SIGKILL)
        #expect(waitUntilGone(standbyPid))
        nodes[standby]?.stop()
        nodes[standby] = try pair.start(standby)
        let acked = try await load
        #expect(acked.count == 900, "every dispatch acknowledged once the standby was back")
        #expect(try await Self.leader(client, pair.key) == leader, "the leader kept the lease")

        // The leader's status: its standby follows and lacks nothing.
        let deadline = ContinuousClock.now + .seconds(30)
        var status: NodeStatus?
        while ContinuousClock.now < deadline {
            let result = try zflux(["status", "--endpoint", pair.topology.dispatcher.intake, "--run-dir", runDir])
            status = result.stdout.split(separator: "\n").first.flatMap { try? NodeStatus.decode(Array($0.utf8)) }
            if status?.standbyFollowing == true && status?.replicationLag == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(status?.leader == true && status?.name == leader)
        #expect(status?.standbyFollowing == true && status?.replicationLag == 0, "the standby is in sync again: \(String(describing: status))")
        for node in nodes.values { node.stop() }
        try Self.checkJournals(runDir: runDir, acked: acked, leading: leader)
    }

    @Test("a leader paused past its lease (SIGSTOP) while the standby takes over: woken, it steps down and exits, and nothing it was told is lost")
    func pausedLeaderStepsDown() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        var nodes = ["d1": try pair.start("d1"), "d2": try pair.start("d2")]
        defer { for node in nodes.values { node.stop() } }
        let leader = try #require(try await Self.waitForLeader(client, pair.key), "no dispatcher won the lease within 30 s")
        let leaderPid = try #require(nodes[leader]).process.pid
        defer { kill(leaderPid, SIGCONT) }

        let count = Locked(0)
        async let load = runLoad(intake: pair.topology.dispatcher.intake, clients: 3, perClient: 300, make: { _, i in try counterAction(i % 5 + 1) })
        {
            acked in count.withLock { $0 = acked }
        }
        while count.withLock({ $0 }) < 200 { try await Task.sleep(for: .milliseconds(20)) }
        // Frozen, it cannot renew its lease; etcd lets it go and the standby wins.
        kill(leaderPid, SIGSTOP)
        let successor = try await Self.waitForLeader(client, pair.key, otherThan: leader)
        #expect(successor != nil && successor != leader, "the standby took over while the leader was paused")
        kill(leaderPid, SIGCONT)
        // Woken, its own clock says the lease ran out: it steps down and exits, as it would if it
        // could not reach etcd at all; the supervisor (the test) starts it again as the standby.
        #expect(waitUntilGone(leaderPid, timeout: .seconds(15)), "the old leader steps down once awake")
        nodes[leader]?.stop()
        nodes[leader] = try pair.start(leader)
        let acked = try await load
        #expect(acked.count == 900)
        let leading = try #require(try await Self.leader(client, pair.key))
        for node in nodes.values { node.stop() }
        try Self.checkJournals(runDir: runDir, acked: acked, leading: leading)
    }
}

extension PairFailoverTests {
    @Test(
        "zflux bench --attach to cluster up --ha follows the leader through a zflux failover: every action acknowledged, none twice; a second cluster up --ha in its run directory is refused at once"
    )
    func benchFollowsFailover() async throws {
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--ha"])
        defer { cluster.stop() }
        try cluster.waitUntilReady(timeout: .seconds(60))
        // Refused before it starts an etcd of its own on the running one's data (which failed only
        // after etcd's start-up wait, with etcd's log as the message).
        let second = try zflux(["cluster", "up", "--ha", "--run-dir", cluster.runDir], timeout: .seconds(20))
        #expect(
            second.status != 0 && second.stderr.contains("a cluster is already running") && !second.stderr.contains("etcd for the pair"),
            "\(second.stderr)")
        let (runDir, rate, seconds) = (cluster.runDir, 500, 6)
        let bench = Task.detached {
            try zflux(
                [
                    "bench", "--attach", "--run-dir", runDir, "--app", "counter", "--action", "addTapped", "--payload", #"{"amount":1}"#,
                    "--rate", "\(rate)", "--duration", "\(seconds)", "--warm-up", "0", "--json",
                ], timeout: .seconds(120))
        }
        func head() -> Int {
            let line = (try? cluster.zflux(["status"]))?.stdout.split(separator: "\n").first.map(String.init) ?? ""
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["head"] as? Int ?? 0
        }
        // A third of the way in, the leader hands over.
        try await eventually("the bench's load reaches the leader", timeout: .seconds(30), interval: .milliseconds(100)) {
            head() >= rate * seconds / 3
        }
        let handover = try cluster.zflux(["failover"])
        #expect(handover.status == 0 && handover.stdout.contains("leads now"), "\(handover.stdout) \(handover.stderr)")
        let result = try await bench.value
        #expect(result.status == 0, "bench: \(result.stderr.suffix(2000))")
        let report = try #require(
            result.stdout.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
            "no JSON report: \(result.stdout) \(result.stderr.suffix(2000))")
        let (sent, acked) = (report["sent"] as? Int ?? -1, report["acked"] as? Int ?? -2)
        #expect(sent == rate * seconds && acked == sent, "every action sent was acknowledged across the handover: \(report)")
        #expect(report["nacked"] as? Int == 0 && report["lost"] as? Int == 0, "\(report)")
        // Resends are deduplicated: the cluster sequenced each action once.
        #expect(head() == sent, "the leader's head is the number of actions: nothing was sequenced twice")
    }
}

/// What each pair test starts and ends: its own etcd, a run directory with the pair's topology, and an
/// etcd client to watch the lease with.
final class PairRun {
    let etcd: EtcdProcess
    let pair: PairFailoverTests.Pair
    let client: EtcdClient

    private init(etcd: EtcdProcess, pair: PairFailoverTests.Pair, client: EtcdClient) {
        self.etcd = etcd
        self.pair = pair
        self.client = client
    }

    static func start() async throws -> PairRun {
        let logger = Logger(label: "zflux.test.pair")
        let etcd = try await EtcdProcess.start(logger: logger)
        do {
            let pair = try PairFailoverTests.Pair(etcd: etcd.endpoint, runDir: NSTemporaryDirectory() + "zflux-pair-\(UUID().uuidString.prefix(8))")
            return PairRun(etcd: etcd, pair: pair, client: try EtcdClient(endpoints: [etcd.endpoint], logger: logger))
        } catch {
            etcd.stop()
            throw error
        }
    }

    /// Stops etcd and removes the run directory (the test stops its own processes first).
    func end() {
        let client = client
        Task { try? await client.shutdown() }
        etcd.stop()
        try? FileManager.default.removeItem(atPath: pair.runDir)
    }
}
