import Dispatcher
import FluxCore
import FluxTesting
import Foundation
import Leadership
import NodeSupport
import Testing
import ZeroMQ

/// Hostile peers on a pair's replication port (issue 35).
extension PairFailoverTests {
    @Test(
        "forged REPLICA-HELLOs and REPLICA-REFUSEs naming the largest epoch, sent to both members all through a load, depose no leader: it asks etcd, which says it leads, and every dispatch is acknowledged"
    )
    func forgedEpochDeposesNoLeader() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        let nodes = ["d1": try pair.start("d1"), "d2": try pair.start("d2")]
        defer { for node in nodes.values { node.stop() } }
        let leader = try #require(try await Self.waitForLeader(client, pair.key), "no dispatcher won the lease within 30 s")
        let leaderPid = try #require(nodes[leader]).process.processIdentifier
        let replication = try #require(pair.topology.ha).dispatchers.map(\.replication)

        // The forger: a DEALER to each member's replication endpoint, sending a hello that claims the
        // newest epoch there is and a refusal that names it, over and over until the load is done.
        let largest: UInt64 = (1 << 40) - 1
        let done = Locked(false)
        let sent = Locked(0)
        let forger = Thread { [done, sent] in
            guard
                let sockets = try? replication.map({ endpoint -> Socket in
                    let socket = try Socket(.shared, .dealer)
                    try socket.connect(endpoint)
                    return socket
                })
            else { return }
            defer { sockets.forEach { $0.close() } }
            let hello = Message(header: Header(kind: .replicaHello, seq: 0, ref: largest))
            let refuse = Message(header: Header(kind: .replicaRefuse, ref: largest, history: HistoryID(cluster: 1, epoch: largest).rawValue))
            while !done.withLock({ $0 }) {
                for socket in sockets {
                    for message in [hello, refuse] where (try? socket.send(message.frames, dontWait: true)) == true {
                        sent.withLock { $0 += 1 }
                    }
                    while (try? socket.receive(dontWait: true)) != nil {}
                }
                usleep(50_000)  // a pace for the forger, not a wait for anything
            }
        }
        forger.start()
        defer { done.withLock { $0 = true } }

        let acked = try await runLoad(
            intake: pair.topology.dispatcher.intake, clients: 2, perClient: 200, make: { _, i in try counterAction(i % 5 + 1) })
        // Until the forger has been heard plenty, whatever the load's pace.
        try await eventually("the forger to have sent 200 claims", timeout: .seconds(120)) { sent.withLock { $0 } >= 200 }
        done.withLock { $0 = true }

        #expect(acked.count == 400, "every dispatch acknowledged")
        #expect(kill(leaderPid, 0) == 0, "the leader still runs: it did not step down (exit 75)")
        #expect(try await Self.leader(client, pair.key) == leader, "etcd still names the same leader")
        let log = nodes[leader]?.stderr ?? ""
        #expect(!log.contains("stepping down"), "\(log.suffix(3000))")
        #expect(log.contains("a peer claims a newer epoch, but etcd says this member leads"), "\(log.suffix(3000))")
        for node in nodes.values { node.stop() }
        try Self.checkJournals(runDir: runDir, acked: acked, leading: leader)
    }
}
