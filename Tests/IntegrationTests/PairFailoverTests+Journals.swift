import Dispatcher
import FluxCore
import FluxTesting
import Foundation
import Leadership
import NodeSupport
import Testing

/// A pair's members with journals that are not what they were: wiped, or carried over from a single
/// dispatcher. Neither may cost an acknowledged action.
extension PairFailoverTests {
    /// The leader's record in etcd: how far, as etcd last heard, the pair has committed.
    static func ledHead(_ client: EtcdClient, _ key: String) async throws -> UInt64? {
        guard let held = try await client.get(key + "/led").keyValue,
            let object = try JSONSerialization.jsonObject(with: Data(held.value)) as? [String: Any]
        else { return nil }
        return (object["head"] as? NSNumber)?.uint64Value
    }

    @Test(
        "a member whose journal was wiped, started while the other is down, does not lead: it waits, then follows the other and holds every acknowledged action"
    )
    func wipedMemberDoesNotLead() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        var nodes = ["d1": try pair.start("d1"), "d2": try pair.start("d2")]
        defer { for node in nodes.values { node.stop() } }
        let leader = try #require(try await Self.waitForLeader(client, pair.key), "no dispatcher won the lease within 30 s")
        let wiped = leader == "d1" ? "d2" : "d1"
        let acked = try await runLoad(
            intake: pair.topology.dispatcher.intake, clients: 1, perClient: 100, make: { _, i in try counterAction(i % 5 + 1) })
        #expect(acked.count == 100)
        // The leader records in etcd that it has committed past where it began (at once, the first time).
        var recorded: UInt64 = 0
        let deadline = ContinuousClock.now + .seconds(15)
        while recorded == 0 && ContinuousClock.now < deadline {
            recorded = try await Self.ledHead(client, pair.key) ?? 0
            if recorded == 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(recorded > 0, "the leader's record in etcd moved past 0")

        // Both stop; one loses its disk and comes back alone.
        for node in nodes.values { node.stop() }
        try FileManager.default.removeItem(atPath: "\(runDir)/journal-\(wiped)")
        nodes[wiped] = try pair.start(wiped)
        let alone = try #require(nodes[wiped])
        let said = ContinuousClock.now + .seconds(20)
        while !alone.stderr.contains("will not lead until it has followed a leader") && ContinuousClock.now < said {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(alone.stderr.contains("will not lead until it has followed a leader"), "\(alone.stderr.suffix(3000))")
        #expect(try await Self.leader(client, pair.key) == nil, "nobody leads: the only member up lacks acknowledged actions")

        // The other comes back: it leads, the wiped one follows and catches up.
        nodes[leader] = try pair.start(leader)
        #expect(try await Self.waitForLeader(client, pair.key) == leader)
        let more = try await runLoad(
            intake: pair.topology.dispatcher.intake, clients: 1, perClient: 20, make: { _, i in try counterAction(i % 5 + 1) })
        #expect(more.count == 20, "under sync the leader acknowledges once the wiped member holds what it sends")
        for node in nodes.values { node.stop() }
        try Self.checkJournals(runDir: runDir, acked: acked + more, leading: leader)
    }

    @Test(
        "a member whose journal has a byte flipped mid-segment sets aside from the damaged record and fetches it again from the other member: every acknowledged action is back, and the cut bytes are kept"
    )
    func corruptMemberRepairsFromTheOther() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        var nodes = ["d1": try pair.start("d1"), "d2": try pair.start("d2")]
        defer { for node in nodes.values { node.stop() } }
        let leader = try #require(try await Self.waitForLeader(client, pair.key), "no dispatcher won the lease within 30 s")
        let damaged = leader == "d1" ? "d2" : "d1"
        let acked = try await runLoad(
            intake: pair.topology.dispatcher.intake, clients: 2, perClient: 500, make: { _, i in try counterAction(i % 5 + 1) })
        #expect(acked.count == 1_000)

        // The standby stops; a synced sector of its journal rots; it comes back.
        nodes[damaged]?.stop()
        let directory = "\(runDir)/journal-\(damaged)"
        let segment =
            directory + "/"
            + (try #require(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".journal") }.sorted().last))
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: segment)))
        bytes[bytes.count / 2] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        nodes[damaged] = try pair.start(damaged)
        let member = try #require(nodes[damaged])
        let said = ContinuousClock.now + .seconds(30)
        while !member.stderr.contains("set aside from it, to be fetched again") && ContinuousClock.now < said {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(member.stderr.contains("set aside from it, to be fetched again"), "\(member.stderr.suffix(3000))")

        // Under sync the leader acknowledges only what the repaired member holds too.
        let more = try await runLoad(
            intake: pair.topology.dispatcher.intake, clients: 1, perClient: 20, make: { _, i in try counterAction(i % 5 + 1) })
        #expect(more.count == 20)
        for node in nodes.values { node.stop() }
        try Self.checkJournals(runDir: runDir, acked: acked + more, leading: leader)
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".set-aside") }
        #expect(!aside.isEmpty, "the cut bytes are kept beside the journal")
        #expect(try zflux(["journal", "verify", "--journal", directory]).status == 0)
    }

    /// A journal a single dispatcher wrote (its own, non-leadership epoch), which acknowledged all of it.
    static func singleDispatcherJournal(at directory: String, count: UInt64) throws {
        let journal = try Journal(directory: directory)
        let history = journal.history
        #expect(!history.isLeadership)
        try journal.append(
            (1...count).map { seq in
                Message(
                    topic: Array("counter".utf8),
                    header: Header(
                        kind: .action, seq: seq, clientID: 5, clientSeq: seq, timestamp: Int64(seq), actionType: "addTapped",
                        history: history.rawValue),
                    payload: (try? counterAction(1).payload) ?? [])
            })
        try journal.commit()
    }

    @Test(
        "started together, the member holding a single dispatcher's journal leads (an empty one gives it a lease's head start); the other follows it")
    func singleDispatcherJournalLeadsFirst() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        try Self.singleDispatcherJournal(at: "\(runDir)/journal-d1", count: 40)
        let nodes = ["d2": try pair.start("d2"), "d1": try pair.start("d1")]
        defer { for node in nodes.values { node.stop() } }
        #expect(try await Self.waitForLeader(client, pair.key) == "d1")
        // Under sync the leader acknowledges once d2 holds its journal too.
        let acked = try await runLoad(
            intake: pair.topology.dispatcher.intake, clients: 1, perClient: 10, make: { _, i in try counterAction(i % 5 + 1) })
        #expect(acked.count == 10 && acked.first?.seq == 41)
        for node in nodes.values { node.stop() }
        try Self.checkJournals(runDir: runDir, acked: acked, leading: "d1")
        #expect(try Journal(directory: "\(runDir)/journal-d2", repair: false).lastSeq == 50, "d2 holds the carried-over records too")
    }

    @Test(
        "a member starting from a single dispatcher's journal refuses to drop it for an empty leader: it stops with the reason, and every record stays"
    )
    func singleDispatcherJournalIsNotDropped() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        try Self.singleDispatcherJournal(at: "\(runDir)/journal-d1", count: 40)
        // The empty d2 starts first and leads; then d1, whose records d2 does not hold.
        var nodes = ["d2": try pair.start("d2")]
        defer { for node in nodes.values { node.stop() } }
        #expect(try await Self.waitForLeader(client, pair.key) == "d2")
        nodes["d1"] = try pair.start("d1")
        let d1 = try #require(nodes["d1"])
        // All of its stderr is read once it has exited: the reason may be the last line it wrote.
        #expect(d1.exits(within: .seconds(60)), "d1 stops rather than drop: \(d1.stderr.suffix(3000))")
        #expect(d1.stderr.contains("which a single dispatcher journaled"), "\(d1.stderr.suffix(3000))")
        for node in nodes.values { node.stop() }
        let journal = try Journal(directory: "\(runDir)/journal-d1", repair: false)
        #expect(journal.lastSeq == 40, "every record the single dispatcher journaled is still there")
    }
}

extension PairFailoverTests {
    @Test("zflux dispatch to a pair waits three leases and 2 s by default (time for a failover), not the 5 s it gives one dispatcher")
    func dispatchWaitsOutAFailover() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        // Nothing runs: the dispatch is never answered, and the message says how long it waited.
        let result = try zflux(["dispatch", "counter", "addTapped", #"{"amount":1}"#, "--run-dir", run.pair.runDir], timeout: .seconds(30))
        #expect(result.status == 2 && result.stderr.contains("within 8.0 s"), "\(result.stderr)")
    }
}
