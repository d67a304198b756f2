import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing
import ZeroMQ

/// Peers that ask the dispatcher for answers and never read them (issue 52, items 1 and 14): what the
/// answers hold stays within the dispatcher's byte budgets, and goes back when the peers leave.
// The limit bounds a hang: each test journals 16 MB first, which took minutes beside every other suite.
@Suite("Reply budgets (real processes)", .serialized, .timeLimit(.minutes(10)))
struct ReplyBudgetTests {
    /// A dispatcher and a login store over ipc, fsync none.
    func cluster(_ name: String) throws -> (ClusterProcess, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "[cluster]\ntransport = \"ipc\"\n[journal]\nfsync = \"none\"\n[[store]]\nname = \"login\"\n".write(
            toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        try cluster.waitUntilReady()
        return (cluster, dir)
    }

    /// `count` DEALERs connected to `endpoint` that take in as little as libzmq lets them and never read.
    func silentPeers(_ count: Int, _ endpoint: String) throws -> [Socket] {
        try (0..<count).map { _ in
            let peer = try Socket(.shared, .dealer)
            try peer.setOption(.receiveHighWaterMark, 1)
            try peer.setOption(.receiveBuffer, 4096)
            try peer.setOption(.linger, 0)
            try peer.connect(endpoint)
            return peer
        }
    }

    @Test(
        "20 peers asking for a replay of a 16 MB journal from seq 1 and never reading: the dispatcher stays within its 64 MiB replay budget, goes on acknowledging, and gives the memory back when they leave"
    )
    func replayFlood() async throws {
        let (cluster, dir) = try cluster("replaybudget")
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let topology = try #require(cluster.topology)
        // 160 actions of 100 KB: every answer from seq 1 is 8 MiB, in batches of about 1 MiB.
        let client = try DispatchClient(intake: topology.dispatcher.intake, timeout: .seconds(30))
        let filler = String(repeating: "u", count: 100_000)
        for round in 0..<160 {
            let payload = Array(#"{"usernameChanged":{"username":"\#(round)-\#(filler)"}}"#.utf8)
            let outcome = try await client.dispatch(app: "login", type: "usernameChanged", payload: payload)
            guard case .acknowledged = outcome else { throw TestFailure("dispatch \(round): \(outcome)") }
        }
        let dispatcher = try #require(cluster.currentPid("dispatcher"))
        let resting = try #require(residentKilobytes(dispatcher))
        // The budget, with room for libzmq's buffers, the journal's reads and the allocator's slack.
        // Without it, each peer held up to 130 batches: the dispatcher grew by gigabytes.
        let bound = 64 * 1024 + 48 * 1024  // KiB: the 64 MiB budget (ReplayScheduler.maxQueuedBytes) and slack
        var grewTo = resting
        do {
            let peers = try silentPeers(20, topology.dispatcher.replay)
            defer { for peer in peers { peer.close() } }
            let request = Message(header: Header(kind: .replayRequest, seq: 1)).frames
            flood: for round in 0..<400 {
                for peer in peers { _ = try peer.send(request, dontWait: true) }
                grewTo = max(grewTo, residentKilobytes(dispatcher) ?? 0)
                if grewTo - resting > 2 * bound { break flood }  // stop before the machine suffers
                if round % 100 == 99 {
                    // Dispatches go on being acknowledged meanwhile.
                    let sent = try await client.dispatch(
                        app: "login", type: "usernameChanged", payload: Array(#"{"usernameChanged":{"username":"x"}}"#.utf8))
                    guard case .acknowledged = sent else { throw TestFailure("dispatch during the flood: \(sent)") }
                }
                try await Task.sleep(for: .milliseconds(10))  // the flood's pace, not a wait for anything
            }
            grewTo = max(grewTo, residentKilobytes(dispatcher) ?? 0)
        }
        #expect(grewTo - resting <= bound, "the dispatcher grew from \(resting / 1024) MiB to \(grewTo / 1024) MiB")
        // The peers have gone: the dispatcher learns it from its probes and returns what they held.
        try await eventually("the dispatcher is back near its resting size", timeout: .seconds(60)) {
            (residentKilobytes(dispatcher) ?? .max) - resting <= 32 * 1024
        }
        #expect(cluster.currentPid("dispatcher") == dispatcher && kill(dispatcher, 0) == 0)
    }

    @Test(
        "20 peers sending STATUS requests on the intake and never reading: the dispatcher stays within its 16 MiB STATUS budget, answers others, and is back near its resting size after they leave"
    )
    func statusFlood() async throws {
        let (cluster, dir) = try cluster("statusbudget")
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let topology = try #require(cluster.topology)
        let dispatcher = try #require(cluster.currentPid("dispatcher"))
        let resting = try #require(residentKilobytes(dispatcher))
        // Without a budget every request was answered, and a peer's queue holds 100,000 replies.
        let bound = 16 * 1024 + 32 * 1024  // KiB: the 16 MiB budget (StatusReplies.maxQueuedBytes) and slack
        var grewTo = resting
        do {
            let peers = try silentPeers(20, topology.dispatcher.intake)
            defer { for peer in peers { peer.close() } }
            let request = Message(header: Header(kind: .statusRequest)).frames
            let started = ContinuousClock.now
            flood: while ContinuousClock.now - started < .seconds(8) {
                for peer in peers {
                    for _ in 0..<200 { _ = try peer.send(request, dontWait: true) }
                }
                grewTo = max(grewTo, residentKilobytes(dispatcher) ?? 0)
                if grewTo - resting > 2 * bound { break flood }
                await Task.yield()
            }
            // Another client is still answered, with the flood going on.
            try await eventually("a status request of another client is answered during the flood", timeout: .seconds(30)) {
                grewTo = max(grewTo, residentKilobytes(dispatcher) ?? 0)
                return try cluster.zflux(["status", "--endpoint", topology.dispatcher.intake]).status == 0
            }
            grewTo = max(grewTo, residentKilobytes(dispatcher) ?? 0)
        }
        #expect(grewTo - resting <= bound, "the dispatcher grew from \(resting / 1024) MiB to \(grewTo / 1024) MiB")
        try await eventually("the dispatcher is back near its resting size", timeout: .seconds(60)) {
            (residentKilobytes(dispatcher) ?? .max) - resting <= 16 * 1024
        }
        #expect(cluster.currentPid("dispatcher") == dispatcher && kill(dispatcher, 0) == 0)
    }
}
