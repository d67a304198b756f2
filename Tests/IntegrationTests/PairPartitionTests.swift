import FluxCore
import FluxTesting
import Foundation
import Leadership
import Logging
import NodeSupport
import Testing

/// A dispatcher pair on three hosts (network namespaces: etcd, d1, d2), with the clients on the
/// operator's host. The leader is cut off from etcd and from the standby while it keeps running and
/// while the clients still reach it: a partition, not a crash (issue 27).
@Suite("dispatcher pair: a leader partitioned from etcd and its standby (network namespaces)", .serialized)
struct PairPartitionTests {
    /// One acknowledgement as a client saw it: when, and from which leader's history.
    struct Seen: Sendable {
        var acked: Acked
        var at: ContinuousClock.Instant
        var history: UInt64
    }

    @Test(
        "the leader is cut off from etcd and from its standby, the clients still reaching it: no client sees an ACK from it once the standby leads; healed and started again, it follows",
        .enabled(if: NetworkLab.isAvailable, "needs root and `ip netns` (network namespaces); this machine does not allow them"),
        .timeLimit(.minutes(3)),
        arguments: ["sync", "async"])
    func leaderPartitioned(replication: String) async throws {
        let lab = try NetworkLab(hosts: ["etcd", "d1", "d2"])
        defer { lab.cleanUp(lab.hosts) }
        let runDir = NSTemporaryDirectory() + "zflux-partition-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: runDir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: runDir) }
        let address = ["etcd": lab.address(1), "d1": lab.address(2), "d2": lab.address(3)]

        // etcd on its own host, reached by the dispatchers and (through the bridge) by this process.
        let etcdURL = "http://\(address["etcd"]!):2379"
        let peerURL = "http://\(address["etcd"]!):2380"
        let etcd = try HostProcess(
            lab: lab, host: "etcd", executable: which("etcd") ?? "/usr/bin/etcd",
            arguments: [
                "--name", "zf", "--data-dir", runDir + "/etcd", "--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
                "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL, "--initial-cluster", "zf=\(peerURL)",
            ], log: runDir + "/etcd.log")
        defer { etcd.stop() }
        let pair = try PairFailoverTests.Pair(
            etcd: etcdURL, runDir: runDir, replication: replication, addresses: ["d1": address["d1"]!, "d2": address["d2"]!])
        let client = try EtcdClient(endpoints: [etcdURL], logger: Logger(label: "zflux.test.partition"))
        defer { Task { [client] in try? await client.shutdown() } }

        func startDispatcher(_ name: String) throws -> HostProcess {
            try HostProcess(
                lab: lab, host: name, arguments: ["dispatcher", "--run-dir", runDir, "--node", name, "--supervisor-pid", "\(getpid())"],
                log: runDir + "/\(name)-\(UUID().uuidString.prefix(4)).log")
        }
        var nodes = ["d1": try startDispatcher("d1"), "d2": try startDispatcher("d2")]
        defer { for node in nodes.values { node.stop() } }
        func diagnostics() -> String {
            nodes.merging(["etcd": etcd]) { node, _ in node }.map { "\($0.key): \($0.value.output.suffix(2500))" }.joined(separator: "\n")
        }

        var elected: String?
        let deadline = ContinuousClock.now + .seconds(60)
        while elected == nil && ContinuousClock.now < deadline {
            elected = try? await PairFailoverTests.leader(client, pair.key)
            if elected == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let leader = try #require(elected, "no dispatcher won the lease within 60 s: \(diagnostics())")
        let standby = leader == "d1" ? "d2" : "d1"

        // Load from the operator's host over both intakes, until told to stop; each ACK noted with its
        // time and the history of the dispatcher that sent it.
        let seen = Locked<[Seen]>([])
        let stop = Locked(false)
        let intake = pair.topology.dispatcher.intake
        async let load: Void = withThrowingTaskGroup(of: Void.self) { group in
            for number in 0..<3 {
                group.addTask {
                    try await onThread {
                        let connection = try DispatchConnection(intake: intake)
                        defer { connection.close() }
                        connection.timeout = .seconds(90)
                        connection.retryInterval = .milliseconds(250)
                        var i = 0
                        while !stop.withLock({ $0 }) {
                            let (app, type, payload) = try counterAction(i % 7 + 1)
                            let outcome = try connection.dispatch(app: app, actionType: type, payload: payload)
                            guard case .acknowledged(let seq) = outcome else {
                                Issue.record("client \(number) dispatch \(i): \(outcome)")
                                return
                            }
                            i += 1
                            let acked = Acked(seq: seq, client: connection.clientID, clientSeq: UInt64(i), app: app, payload: payload)
                            seen.withLock { $0.append(Seen(acked: acked, at: .now, history: connection.lastAcknowledgedHistory ?? 0)) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        defer { stop.withLock { $0 = true } }

        while seen.withLock({ $0.count }) < 200 { try await Task.sleep(for: .milliseconds(20)) }
        let oldHistory = try #require(seen.withLock { $0.first?.history })
        // The partition: the leader's packets to etcd and to its standby go nowhere, and theirs to it;
        // the bridge to this host stays open, so the clients keep reaching the old leader.
        let cuts = [(leader, "etcd"), (leader, standby), ("etcd", leader), (standby, leader)]
        for (from, to) in cuts { try lab.ip(["-n", lab.namespace(from), "route", "add", "blackhole", address[to]! + "/32"]) }
        let cutAt = ContinuousClock.now

        // etcd lets the old leader's lease run out and the standby wins: noted as soon as etcd says so.
        var takeoverSeen: ContinuousClock.Instant?
        while takeoverSeen == nil && ContinuousClock.now < cutAt + .seconds(30) {
            if (try? await PairFailoverTests.leader(client, pair.key)) == standby {
                takeoverSeen = .now
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let takeover = try #require(takeoverSeen, "the standby did not win the lease within 30 s of the cut: \(diagnostics())")
        // The old leader, running but unable to renew, gives leadership up on its own clock and exits
        // with 75 (its supervisor would start it again as the standby).
        let oldPid = try #require(nodes[leader]).process.pid
        let gone = waitUntilGone(oldPid, timeout: .seconds(20))
        #expect(gone, "the partitioned leader stepped down: \(diagnostics())")
        if gone {
            #expect(nodes[leader]?.process.waitUntilExit() == .exited(75), "it exits as a stepped-down leader: \(diagnostics())")
        }

        // Healed, and started again, it follows the new leader; the load finishes.
        for (from, to) in cuts { try lab.ip(["-n", lab.namespace(from), "route", "del", "blackhole", address[to]! + "/32"]) }
        nodes[leader]?.stop()
        nodes[leader] = try startDispatcher(leader)
        // The new leader serves the clients (under sync, once the healed node follows it).
        let served = ContinuousClock.now + .seconds(60)
        while seen.withLock({ list in list.filter { $0.history != oldHistory }.count }) < 300 && ContinuousClock.now < served {
            try await Task.sleep(for: .milliseconds(50))
        }
        stop.withLock { $0 = true }
        try await load
        let all = seen.withLock { $0 }
        let fromOld = all.filter { $0.history == oldHistory }
        let fromNew = all.filter { $0.history != oldHistory }
        #expect(fromNew.count >= 300, "the new leader serves the clients: \(diagnostics())")
        let lastOld = try #require(fromOld.map(\.at).max())
        #expect(lastOld < takeover, "an ACK from the old leader came \(takeover.duration(to: lastOld)) after etcd named the standby")
        #expect(fromNew.allSatisfy { $0.at > lastOld }, "no client saw the old leader's ACK after a new leader's")
        print(
            "pair partition (\(replication)): the old leader's last ACK \(cutAt.duration(to: lastOld)) after the cut, "
                + "\(lastOld.duration(to: takeover)) before etcd named the standby; \(fromOld.count) ACKs from it, \(fromNew.count) from the new leader"
        )

        let leading = try #require(try await PairFailoverTests.leader(client, pair.key))
        for node in nodes.values { node.stop() }
        if replication == "sync" {
            // Nothing acknowledged is lost: both journals hold every ACKed action, once, at its seq.
            try PairFailoverTests.checkJournals(runDir: runDir, acked: all.map(\.acked), leading: leading)
        } else {
            // Async: what the new leader acknowledged is in its journal; the old leader's last ACKs
            // before the cut may be gone (GUARANTEES.md), which is why sync is the default.
            try PairFailoverTests.checkJournals(runDir: runDir, acked: fromNew.map(\.acked), leading: leading, in: [leading])
        }
    }
}
