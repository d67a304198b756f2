import Dispatcher
import FluxTesting
import Foundation
import NodeSupport
import Testing

/// A failover's time does not grow with the journal (issue 55): the new leader starts from the
/// checkpoint its standby kept and reads only the journal after it.
extension PairFailoverTests {
    /// The actions journaled for the large run: `$ZFLUX_FAILOVER_RECORDS`, or a million (`make bench`
    /// runs ten million).
    static let largeJournalRecords: UInt64 = ProcessInfo.processInfo.environment["ZFLUX_FAILOVER_RECORDS"].flatMap { UInt64($0) } ?? 1_000_000

    @Test(
        "kill -9 of a pair's leader with a million actions journaled (ZFLUX_FAILOVER_RECORDS): the first new ACK comes within the lease and 1 s of the kill, as with an empty journal"
    )
    func failoverWithALargeJournal() async throws {
        let empty = try await Self.failover(journaled: 0)
        let large = try await Self.failover(journaled: Self.largeJournalRecords)
        print(
            "pair failover, kill -9 of the leader to the first new ACK: \(empty.time) with an empty journal, \(large.time) with \(Self.largeJournalRecords) actions"
        )
        #expect(
            large.newLeaderLog.contains("schedules read from the checkpoint and the journal after it"),
            "the new leader starts from a checkpoint: \(large.newLeaderLog.suffix(3000))")
        // A bound, not a measurement: the lease must run out at etcd whatever the journal holds, and on a
        // busy machine the empty run may take longer than that; the large one takes at most 1 s more.
        let lease = Duration.milliseconds(2000)
        #expect(
            large.time <= max(empty.time, lease) + .seconds(1),
            "the failover with \(Self.largeJournalRecords) actions took \(large.time), the empty one \(empty.time): the new leader read the journal whole?"
        )
    }

    /// A pair (2 s lease, sync) whose members hold `journaled` actions (`zflux journal fill`), a client
    /// dispatching one action after another, and kill -9 of the leader after its 20th ACK, the leader
    /// started again at once as its supervisor would: the time from the kill to the first new ACK, and
    /// what the member leading at the end logged.
    static func failover(journaled: UInt64) async throws -> (time: Duration, newLeaderLog: String) {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        if journaled > 0 {
            let filled = try zflux(
                [
                    "journal", "fill", "--records", "\(journaled)", "--app", "counter", "--action", "addTapped", "--payload", #"{"amount":1}"#,
                    "--run-dir", runDir,
                ], timeout: .seconds(1800))
            try #require(filled.status == 0, "journal fill: \(filled.stderr.suffix(2000))")
            print("journal fill: \(filled.stdout.split(separator: "\n").last ?? "")")
        }
        var (nodes, leader, _) = try await pair.startFollowing(client)
        defer { for node in nodes.values { node.stop() } }

        let killAfter = 20
        let killed = Locked<ContinuousClock.Instant?>(nil)
        let ackTimes = Locked<[ContinuousClock.Instant]>([])
        let leaderPid = try #require(nodes[leader]).process.pid
        async let load = runLoad(intake: pair.topology.dispatcher.intake, clients: 1, perClient: 40, make: { _, i in try counterAction(i % 5 + 1) }) {
            count in
            ackTimes.withLock { $0.append(.now) }
            if count == killAfter {
                // kill -9: no clean step-down; the lease must run out at etcd.
                signalNode(leaderPid, SIGKILL)
                killed.withLock { $0 = .now }
            }
        }
        while killed.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(waitUntilGone(leaderPid))
        nodes[leader]?.stop()
        nodes[leader] = try pair.start(leader)
        let acked = try await load
        #expect(acked.count == 40, "every dispatch acknowledged: \(nodes.values.map { $0.stderr.suffix(3000) })")
        #expect(acked.first?.seq == journaled + 1, "the new actions follow the journaled ones")
        let killedAt = try #require(killed.withLock { $0 })
        let firstAfter = try #require(ackTimes.withLock { $0 }.first { $0 > killedAt }, "no ACK after the kill")
        let leading = try #require(try await Self.leader(client, pair.key), "nobody leads at the end")
        let log = nodes[leading]?.stderr ?? ""
        for node in nodes.values { node.stop() }
        // Both journals hold every acknowledged action at its seq (read from the first new one: the
        // journaled ones are not read back).
        for name in ["d1", "d2"] {
            let journal = try Journal(directory: "\(runDir)/journal-\(name)", repair: false)
            let records = try journal.read(from: journaled + 1, limit: acked.count + 1)
            #expect(records.count == acked.count, "\(name) holds the acknowledged actions, and no more")
            for (record, entry) in zip(records, acked) {
                #expect(record.header.seq == entry.seq && record.header.clientID == entry.client && record.payload == entry.payload, "\(name)")
            }
        }
        return (killedAt.duration(to: firstAfter), log)
    }
}
