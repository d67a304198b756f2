import Dispatcher
import FluxCore
import FluxTesting
import Foundation
import Leadership
import NodeSupport
import Testing
import ZeroMQ

/// A pair keeps one quarantine list (issue 35): what the leader quarantines, its standby keeps too.
extension PairFailoverTests {
    @Test(
        "a pair's standby keeps the leader's quarantine list: after kill -9 of the leader the new leader still skips the action, lists it, and releases it; the restarted member keeps the release too"
    )
    func quarantineSurvivesFailover() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, client, runDir) = (run.pair, run.client, run.pair.runDir)
        var (nodes, leader, standby) = try await pair.startFollowing(client)
        defer { for node in nodes.values { node.stop() } }
        let members = try #require(pair.topology.ha).dispatchers
        func member(_ name: String) throws -> Topology.HighAvailability.Member { try #require(members.first { $0.name == name }) }
        let acked = try await runLoad(intake: pair.topology.dispatcher.intake, clients: 1, perClient: 5, make: { _, i in try counterAction(i + 1) })
        #expect(acked.count == 5)

        // A store asks the leader to quarantine seq 2, as one does after its reducer died on it twice,
        // with the nodes' effect token (over ipc it is kept in the run directory).
        let tokenText = try String(contentsOfFile: runDir + "/effect-token", encoding: .utf8)
        let token = try #require(UInt64(tokenText.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16))
        let asker = try Socket(.shared, .dealer)
        defer { asker.close() }
        try asker.setOption(.linger, 0)
        try asker.connect(try member(leader).endpoints.replay)
        _ = try asker.send(
            Message(topic: "counter", header: Header(kind: .quarantineRequest, seq: 2, ref: token), payload: Array("died 2 times in a row".utf8))
                .frames)
        func quarantined(_ name: String) -> [[String: Any]] {
            guard let answer = try? zflux(["status", "--endpoint", (try? member(name).endpoints.intake) ?? ""]), answer.status == 0,
                let status = try? JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any]
            else { return [] }
            return status["quarantined"] as? [[String: Any]] ?? []
        }
        /// The list a member keeps beside its journal.
        func kept(_ name: String) -> [Quarantine] {
            guard let data = FileManager.default.contents(atPath: "\(runDir)/journal-\(name)/QUARANTINE") else { return [] }
            return (try? JSONDecoder().decode([Quarantine].self, from: data)) ?? []
        }
        try await eventually("the leader to quarantine seq 2", timeout: .seconds(30)) { quarantined(leader).compactMap { $0["seq"] as? Int } == [2] }
        try await eventually("the standby to keep the leader's list", timeout: .seconds(30)) { kept(standby).map(\.seq) == [2] }
        #expect(kept(standby).first?.actionType == "addTapped")

        // kill -9 the leader: the standby leads, with the list.
        let killedPid = try #require(nodes[leader]).process.pid
        signalNode(killedPid, SIGKILL)
        #expect(waitUntilGone(killedPid))
        nodes[leader]?.stop()
        let old = leader
        leader = try #require(try await Self.waitForLeader(client, pair.key, otherThan: old), "the standby did not take the lease")
        #expect(leader == standby)
        try await eventually("the new leader to list the quarantine", timeout: .seconds(30)) {
            quarantined(leader).compactMap { $0["seq"] as? Int } == [2]
        }

        // The old leader comes back as the standby; a release on the new leader is sequenced (a pair used
        // to refuse releases), and the mark of it reaches the standby's list.
        nodes[old] = try pair.start(old)
        try await eventually("the restarted member to follow", timeout: .seconds(60)) { (nodes[old]?.stderr ?? "").contains("following the leader") }
        let released = try zflux(["quarantine", "release", "2", "--run-dir", runDir])
        #expect(released.status == 0, "\(released.stderr)")
        let again = try #require(UInt64(released.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(released.stdout)")
        #expect(again == 6)
        try await eventually("the standby to keep the release", timeout: .seconds(30)) { kept(old).first?.releasedAs == again }
        let twice = try zflux(["quarantine", "release", "2", "--run-dir", runDir])
        #expect(twice.status == 1 && twice.stderr.contains("released already, as seq \(again)"), "\(twice.stderr)")
    }
}
