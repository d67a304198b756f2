import Dispatcher
import FluxTesting
import Foundation
import Leadership
import NodeSupport
import Testing

/// A failover's time does not grow with the journal (issue 55): the new leader starts from the
/// checkpoint its standby kept and reads only the journal after it.
extension PairFailoverTests {
    /// One failover's times: from the kill to when etcd named the new leader (the lease's part, which
    /// no journal changes), and from then to its first ACK (the promotion's part, where reading the
    /// journal whole would land); and what the new leader logged.
    struct Failover {
        var named: Duration
        var serve: Duration
        var log: String
        var total: Duration { named + serve }
    }

    /// The actions journaled for the large run: `$ZFLUX_FAILOVER_RECORDS`, or two million (`make
    /// bench` runs ten million): enough that a promotion reading the journal whole, rather than from
    /// a checkpoint, breaks the bound in a debug build (that read took 1.2 s at two million records
    /// the standby had already checked, 3 s at one million it had not).
    static let largeJournalRecords: UInt64 = ProcessInfo.processInfo.environment["ZFLUX_FAILOVER_RECORDS"].flatMap { UInt64($0) } ?? 2_000_000

    @Test(
        "a pair's leader killed with -9 over two million journaled actions (ZFLUX_FAILOVER_RECORDS): the first new ACK comes at most 1 s later than with an empty journal (or than the lease), the new leader starting from a checkpoint and the standby keeping its own"
    )
    func failoverWithALargeJournal() async throws {
        // The large journal is written first, so that both failovers run after its writes, on a disk
        // that has taken them in (etcd's and the members' syncs are slower for a while after).
        let largeRun = try await PairRun.start()
        defer { largeRun.end() }
        try Self.fill(largeRun.pair.runDir, records: Self.largeJournalRecords)
        let emptyRun = try await PairRun.start()
        defer { emptyRun.end() }
        let empty = try await Self.failover(emptyRun, journaled: 0)
        emptyRun.end()
        let large = try await Self.failover(largeRun, journaled: Self.largeJournalRecords)
        let lease = Duration.milliseconds(try #require(largeRun.pair.topology.ha).leaseMilliseconds)
        print(
            "pair failover, kill -9 of the leader to the first new ACK: \(empty.total) with an empty journal, \(large.total) with \(Self.largeJournalRecords) actions"
        )
        #expect(
            large.log.contains("schedules read from the checkpoint and the journal after it"),
            "the new leader starts from a checkpoint: \(large.log.suffix(3000))")
        // A bound, not a measurement: the large journal's failover takes at most 1 s more than the
        // empty one's, or than the lease if that was longer. The time until etcd names the new leader
        // varies by up to a second from run to run on a busy machine, whatever the journal holds (its
        // lease running out and the new leader's put both wait on etcd's syncs), so what the large run
        // spent there beyond the empty one is not counted against it.
        let etcdExcess = max(.zero, large.named - empty.named)
        #expect(
            large.total - etcdExcess <= max(empty.total, lease) + .seconds(1),
            "with \(Self.largeJournalRecords) actions etcd named the new leader \(large.named) after the kill and it acknowledged \(large.serve) later; with an empty journal \(empty.named) and \(empty.serve): the new leader read the journal whole?"
        )
    }

    /// Both members' journals in `runDir` hold `records` actions (`zflux journal fill`), and d2's
    /// has no checkpoint.
    static func fill(_ runDir: String, records: UInt64) throws {
        let filled = try zflux(
            [
                "journal", "fill", "--records", "\(records)", "--app", "counter", "--action", "addTapped", "--payload", #"{"amount":1}"#,
                "--run-dir", runDir,
            ], timeout: .seconds(1800))
        try #require(filled.status == 0, "journal fill: \(filled.stderr.suffix(2000))")
        print("journal fill: \(filled.stdout.split(separator: "\n").last ?? "")")
        let standbyJournal = "\(runDir)/journal-d2"
        for name in try FileManager.default.contentsOfDirectory(atPath: standbyJournal) where name.hasPrefix("CHECKPOINT-") {
            try FileManager.default.removeItem(atPath: standbyJournal + "/" + name)
        }
    }

    /// A pair (2 s lease, sync) whose members hold `journaled` actions (``fill(_:records:)``): d1
    /// leads, and d2 joins it as the standby with its journal's checkpoints taken away (as a journal
    /// copied without them, or written by a zflux that kept none), so that any checkpoint it holds is
    /// one it made itself while following. A client dispatches one action after another; after its
    /// 20th ACK, kill -9 of d1, which is started again at once, as its supervisor would (under sync the
    /// new leader acknowledges once a standby follows it). Whichever campaigns first once the lease has
    /// run out takes over (d2 mostly; d1 at times): the times, and what the new leader logged.
    static func failover(_ run: PairRun, journaled: UInt64) async throws -> Failover {
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        var nodes = ["d1": try pair.start("d1")]
        defer { for node in nodes.values { node.stop() } }
        let leader = "d1"
        #expect(try await Self.waitForLeader(client, pair.key) == leader, "d1 leads alone")
        nodes["d2"] = try pair.start("d2")
        try await eventually("d2 follows d1", timeout: .seconds(120)) { (nodes["d2"]?.stderr ?? "").contains("following the leader") }

        // One client, one action after another; unanswered, it resends every 50 ms (less than the
        // usual 250: the resend's wait is part of what is measured).
        let killAfter = 20
        let killed = Locked<ContinuousClock.Instant?>(nil)
        let leaderPid = try #require(nodes[leader]).process.pid
        let heldBefore = try #require(try await client.get(pair.key).keyValue).createRevision
        let intake = pair.topology.dispatcher.intake
        async let load = onThread { () throws -> [(acked: Acked, at: ContinuousClock.Instant)] in
            let connection = try DispatchConnection(intake: intake)
            defer { connection.close() }
            connection.timeout = .seconds(60)
            connection.retryInterval = .milliseconds(50)
            var acked: [(acked: Acked, at: ContinuousClock.Instant)] = []
            for i in 0..<40 {
                let (app, type, payload) = try counterAction(i % 5 + 1)
                guard case .acknowledged(let seq) = try connection.dispatch(app: app, actionType: type, payload: payload) else {
                    Issue.record("dispatch \(i) was not acknowledged")
                    break
                }
                acked.append((Acked(seq: seq, client: connection.clientID, clientSeq: UInt64(i + 1), app: app, payload: payload), .now))
                if acked.count == killAfter {
                    // kill -9: no clean step-down; the lease must run out at etcd.
                    signalNode(leaderPid, SIGKILL)
                    killed.withLock { $0 = .now }
                }
            }
            return acked
        }
        while killed.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(waitUntilGone(leaderPid))
        nodes[leader]?.stop()
        nodes[leader] = try pair.start(leader)
        // The key d1 held goes when its lease runs out; whoever campaigns first makes it again.
        var named: String?
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let held = try await client.get(pair.key).keyValue, held.createRevision != heldBefore {
                named = LeaderRecord.decode(held.value)?.name
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let namedAt = ContinuousClock.now
        let leading = try #require(named, "nobody took over within 30 s")
        let ackedAt = try await load
        let acked = ackedAt.map(\.acked)
        #expect(acked.count == 40, "every dispatch acknowledged: \(nodes.values.map { $0.stderr.suffix(3000) })")
        #expect(acked.first?.seq == journaled + 1, "the new actions follow the journaled ones")
        let killedAt = try #require(killed.withLock { $0 })
        let firstAfter = try #require(ackedAt.map(\.at).first { $0 > killedAt }, "no ACK after the kill")
        print(
            "journaled \(journaled): etcd named \(leading) \(killedAt.duration(to: namedAt)) after the kill, its first ACK \(namedAt.duration(to: firstAfter)) later"
        )
        #expect(try await Self.leader(client, pair.key) == leading, "\(leading) leads at the end")
        let log = nodes[leading]?.stderr ?? ""
        for node in nodes.values { node.stop() }
        if journaled > 0 {
            // d2 joined with no checkpoint: it made its own as it followed (at its first append).
            let names = try FileManager.default.contentsOfDirectory(atPath: "\(runDir)/journal-d2")
            let kept = names.compactMap { $0.hasPrefix("CHECKPOINT-") ? UInt64($0.dropFirst("CHECKPOINT-".count)) : nil }
            #expect(kept.contains { $0 > journaled }, "the standby keeps a checkpoint of its own while it follows: \(kept)")
        }
        // Both journals hold every acknowledged action at its seq (read from the first new one: the
        // journaled ones are not read back).
        for name in ["d1", "d2"] {
            // Opened as a member opens it (from its index files), not read-only: that checks every record.
            let journal = try Journal(directory: "\(runDir)/journal-\(name)", opensEpoch: false)
            let records = try journal.read(from: journaled + 1, limit: acked.count + 1)
            #expect(records.count == acked.count, "\(name) holds the acknowledged actions, and no more")
            for (record, entry) in zip(records, acked) {
                #expect(record.header.seq == entry.seq && record.header.clientID == entry.client && record.payload == entry.payload, "\(name)")
            }
        }
        return Failover(named: killedAt.duration(to: namedAt), serve: namedAt.duration(to: firstAfter), log: log)
    }
}
