import Dispatcher
import FluxCore
import FluxTesting
import Foundation
import Leadership
import NodeCores
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
        let leaderPid = try #require(nodes[leader]).process.pid
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

extension PairFailoverTests {
    /// Whether this process can bind `port` on `host` (IPv4) right now; the socket is closed at once.
    static func canBind(_ host: String, _ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var reuse: Int32 = 1
        // As libzmq binds (SO_REUSEADDR): the hostile binder of the finding did the same.
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    @Test(
        "a standby over tcp holds its ports while it follows, so no other process can bind them; killed, its leader is replaced by it, and it binds them and serves"
    )
    func standbyHoldsItsPorts() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        // The pair over tcp, each member on its own loopback address (ports 5570–5573 on each).
        let runDir = NSTemporaryDirectory() + "zflux-pair-tcp-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: runDir) }
        let addresses = ["d1": "127.0.0.1", "d2": "127.0.0.2"]
        let pair = try Pair(etcd: run.etcd.endpoint, runDir: runDir, addresses: addresses)
        let started = try await pair.startFollowing(run.client)
        var nodes = started.nodes
        let (leader, standby) = (started.leader, started.standby)
        defer { for node in nodes.values { node.stop() } }
        let standbyHost = try #require(addresses[standby])
        for port: UInt16 in 5570...5573 {
            #expect(!Self.canBind(standbyHost, port), "another process bound the standby's port \(standbyHost):\(port)")
        }
        let before = try await runLoad(
            intake: pair.topology.dispatcher.intake, clients: 2, perClient: 50, make: { _, i in try counterAction(i % 5 + 1) })
        #expect(before.count == 100)

        // The leader dies: the standby lets its ports go, binds them with libzmq and leads.
        let leaderPid = try #require(nodes[leader]).process.pid
        signalNode(leaderPid, SIGKILL)
        #expect(waitUntilGone(leaderPid))
        nodes[leader]?.stop()
        let next = try #require(try await Self.waitForLeader(run.client, pair.key, otherThan: leader), "the standby did not take over")
        #expect(next == standby)
        nodes[leader] = try pair.start(leader)
        let after = try await runLoad(
            intake: pair.topology.dispatcher.intake, clients: 2, perClient: 50, make: { _, i in try counterAction(i % 5 + 1) })
        #expect(after.count == 100, "the new leader serves on the ports it held: \(nodes[standby]?.stderr.suffix(3000) ?? "")")
        for port: UInt16 in 5570...5573 { #expect(!Self.canBind(standbyHost, port), "the new leader binds \(standbyHost):\(port)") }
        // The old leader, started again as the standby, holds its own ports too: at once, or once the
        // connections its killed run left in TIME_WAIT are gone (it tries every second).
        let formerHost = try #require(addresses[leader])
        try await eventually("the restarted member to hold its ports", timeout: .seconds(180), interval: .milliseconds(500)) {
            (5570...5573).allSatisfy { !Self.canBind(formerHost, UInt16($0)) }
        }
    }
}

extension PairFailoverTests {
    @Test(
        "under CURVE a pair's replication port admits the other member's key alone: an impostor holding the cluster's client key, and one with a key of its own, get no welcome, no secret and no record, while the real standby follows and sync dispatches are acknowledged"
    )
    func impostorUnderCurveGetsNothing() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let runDir = NSTemporaryDirectory() + "zflux-pair-curve-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: runDir) }
        let pair = try Pair(etcd: run.etcd.endpoint, runDir: runDir, addresses: ["d1": "127.0.0.1", "d2": "127.0.0.2"], secured: true)
        let (nodes, leader, _) = try await pair.startFollowing(run.client)
        defer { for node in nodes.values { node.stop() } }
        // Under sync an ACK means the standby holds the action too: it follows with its member key.
        func dispatch() throws -> CommandResult {
            try zflux(["dispatch", "counter", "incrementTapped", "--run-dir", runDir, "--timeout", "20"], timeout: .seconds(60))
        }
        let first = try dispatch()
        #expect(first.status == 0, "\(first.stderr)")

        // Two impostors say hello to the leader's replication endpoint as a fresh standby would: one
        // with the client key, which may dispatch, and one with a key nobody listed.
        let security = try #require(pair.topology.security)
        let endpoint = try #require(pair.topology.ha?.member(named: leader)?.replication)
        let clientKey = try KeyPair.load(security.clientKeyFile)
        let strangerKey = try KeyPair.load(try KeyPair.generate(name: "stranger", directory: runDir + "/other-keys").secretFile)
        let impostors = try [clientKey, strangerKey].map { key -> Socket in
            let socket = try Socket(.shared, .dealer)
            try socket.setOption(.linger, 0)
            try socket.makeCurveClient(serverKey: security.serverPublicKey, publicKey: key.publicKey, secretKey: key.secretKey)
            try socket.connect(endpoint)
            return socket
        }
        defer { impostors.forEach { $0.close() } }
        var received: [[[UInt8]]] = []
        try await eventually("the leader to refuse both impostors' keys on its replication port", timeout: .seconds(60)) {
            for socket in impostors {
                _ = try? socket.send(Message(header: Header(kind: .replicaHello, seq: 0)).frames, dontWait: true)
                while let frames = try? socket.receive(dontWait: true) { received.append(frames) }
            }
            let log = nodes[leader]?.stderr ?? ""
            return [clientKey, strangerKey].allSatisfy { key in
                log.split(separator: "\n").contains {
                    $0.contains("refused a peer") && $0.contains(key.publicKey) && $0.contains(ZAPHandler.replicationDomain)
                }
            }
        }
        // A dispatch after them is acknowledged (the standby still counts), and still nothing came.
        let second = try dispatch()
        #expect(second.status == 0, "\(second.stderr)")
        for socket in impostors {
            while let frames = try? socket.receive(dontWait: true) { received.append(frames) }
        }
        #expect(received.isEmpty, "an impostor was answered: \(received.count) messages")
    }
}

extension PairFailoverTests {
    @Test(
        "six peers that say hello on the leader's replication port and never read each hold a few appends, not the journal: with 64 MiB journaled, the leader's memory stays within 64 MiB of where it was, and it goes on leading"
    )
    func neverReadingHellosAreBounded() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, runDir) = (run.pair, run.pair.runDir)
        let (nodes, leader, _) = try await pair.startFollowing(run.client)
        defer { for node in nodes.values { node.stop() } }
        // 64 MiB in the journal: 1,024 actions of 64 KiB.
        let memo = String(repeating: "m", count: 64 << 10)
        let filled = try zflux(
            ["dispatch", "ledger", "post", #"{"account":1,"amount":1,"memo":"\#(memo)"}"#, "--repeat", "1024", "--run-dir", runDir],
            timeout: .seconds(600))
        try #require(filled.status == 0, "\(filled.stderr)")
        let leaderPid = try #require(nodes[leader]).process.pid
        let before = try #require(residentKilobytes(leaderPid))
        let bound = 64 * 1024  // KiB; a queue per peer of the whole journal is 6 × 64 MiB
        func welcomes() -> Int { (nodes[leader]?.stderr ?? "").components(separatedBy: "standby following").count - 1 }
        let welcomedBefore = welcomes()

        // Six peers say hello from nothing, each with a receive queue of one message, and never read.
        let endpoint = try #require(pair.topology.ha?.member(named: leader)?.replication)
        let peers = try (0..<6).map { _ -> Socket in
            let socket = try Socket(.shared, .dealer)
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveHighWaterMark, 1)
            try socket.setOption(.receiveBuffer, 4096)
            try socket.connect(endpoint)
            return socket
        }
        defer { peers.forEach { $0.close() } }
        var grewTo = before
        // Peers of the same user, which read the member token in the run directory as a member does:
        // the token keeps out those that cannot (a hello without its proof gets nothing, below).
        let hello = Message(header: Header(kind: .replicaHello, seq: 0, clientID: try Self.memberHelloProof(runDir: runDir)))
        for socket in peers { _ = try socket.send(hello.frames) }
        try await eventually("the leader to have welcomed all six", timeout: .seconds(60)) {
            grewTo = max(grewTo, residentKilobytes(leaderPid) ?? 0)
            return welcomes() >= welcomedBefore + 6 || grewTo - before > bound
        }
        // Each was fed as far as its queue takes: look a while longer, as the leader's reads go on.
        for _ in 0..<20 {
            grewTo = max(grewTo, residentKilobytes(leaderPid) ?? 0)
            try await Task.sleep(for: .milliseconds(100))  // an observation window, not a wait for an event
        }
        #expect(grewTo - before <= bound, "the leader grew from \(before / 1024) MiB to \(grewTo / 1024) MiB")
        #expect(kill(leaderPid, 0) == 0, "the leader still runs")
        #expect(try await Self.leader(run.client, pair.key) == leader, "and still leads")
    }
}

extension PairFailoverTests {
    /// The proof a hello from nothing carries (seq 0, no epoch seen, no history), made with the member
    /// token in the pair's run directory, as a member makes it.
    static func memberHelloProof(runDir: String) throws -> UInt64 {
        let text = try String(contentsOfFile: runDir + "/member-token", encoding: .utf8)
        let token = try #require(UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16))
        return StandbyLink.helloProof(token: token, seq: 0, seen: 0, history: 0)
    }

    @Test(
        "over ipc a pair's replication port answers only a hello that proves the member token: an impostor's hello at epoch 0 gets no welcome, no client secret and no record, and is logged, while the real standby follows and sync dispatches are acknowledged"
    )
    func impostorOverIpcGetsNothing() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, runDir) = (run.pair, run.pair.runDir)
        let (nodes, leader, _) = try await pair.startFollowing(run.client)
        defer { for node in nodes.values { node.stop() } }
        // Under sync an ACK means the standby holds the action too.
        func dispatch() throws -> CommandResult {
            try zflux(["dispatch", "counter", "incrementTapped", "--run-dir", runDir, "--timeout", "20"], timeout: .seconds(60))
        }
        let first = try dispatch()
        #expect(first.status == 0, "\(first.stderr)")
        func welcomes() -> Int { (nodes[leader]?.stderr ?? "").components(separatedBy: "standby following").count - 1 }
        let welcomed = welcomes()

        // The impostor says hello to the leader's replication endpoint as a fresh standby would, at
        // epoch 0, without the proof (a process of another user cannot reach the socket at all).
        let endpoint = try #require(pair.topology.ha?.member(named: leader)?.replication)
        #expect(endpoint.hasPrefix("ipc://"))
        let impostor = try Socket(.shared, .dealer)
        defer { impostor.close() }
        try impostor.setOption(.linger, 0)
        try impostor.connect(endpoint)
        var received: [[[UInt8]]] = []
        try await eventually("the leader to log the impostor's hello, or answer it", timeout: .seconds(60)) {
            _ = try? impostor.send(Message(header: Header(kind: .replicaHello, seq: 0)).frames, dontWait: true)
            while let frames = try? impostor.receive(dontWait: true) { received.append(frames) }
            return !received.isEmpty || (nodes[leader]?.stderr ?? "").contains("a REPLICA-HELLO without the member token's proof")
        }
        // A dispatch after it is acknowledged (the real standby still counts), and still nothing came.
        let second = try dispatch()
        #expect(second.status == 0, "\(second.stderr)")
        while let frames = try? impostor.receive(dontWait: true) { received.append(frames) }
        #expect(received.isEmpty, "the impostor was answered: \(received.count) messages")
        #expect(welcomes() == welcomed, "no second standby was welcomed")
    }
}
