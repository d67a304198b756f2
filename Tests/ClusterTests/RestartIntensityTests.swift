import Cluster
import Foundation
import NodeSupport
import Testing

@Suite("The supervisor's restart intensity and poison actions")
struct RestartIntensityTests {
    func supervisor() throws -> (Supervisor, String) {
        let dir = NSTemporaryDirectory() + "zflux-intensity-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let topology = try Topology.make(transport: .ipc, runDirectory: dir, stores: [("drill", "drill")])
        return (Supervisor(topology: topology, runDirectory: dir, logLevel: "error"), dir)
    }

    @Test("deaths on one action count once, however many replicas die on it up to the quarantine; other crashes still stop the cluster")
    func onePoisonCountsOnce() throws {
        let (supervisor, dir) = try supervisor()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for inARow in 1...2 {
            for replica in 0..<5 {
                #expect(supervisor.restartDelay(for: "store-r\(replica)", diedApplying: (seq: 7, inARow: inARow)) != nil)
            }
        }
        // Four more crashes fit the default intensity (5 in 30 s) beside the poison's one; a fifth does not.
        for _ in 0..<4 { #expect(supervisor.restartDelay(for: "store-r0") != nil) }
        #expect(supervisor.restartDelay(for: "store-r0") == nil)
    }

    @Test("a store that keeps dying on an action past the quarantine's count counts each death again")
    func pastTheQuarantineCountsAgain() throws {
        let (supervisor, dir) = try supervisor()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(supervisor.restartDelay(for: "store-drill", diedApplying: (seq: 7, inARow: 1)) != nil)
        #expect(supervisor.restartDelay(for: "store-drill", diedApplying: (seq: 7, inARow: 2)) != nil)
        for inARow in 3...6 { #expect(supervisor.restartDelay(for: "store-drill", diedApplying: (seq: 7, inARow: inARow)) != nil) }
        #expect(supervisor.restartDelay(for: "store-drill", diedApplying: (seq: 7, inARow: 7)) == nil)
    }

    @Test("the supervisor reads a dead store's crash marker as the store will count it, without changing it")
    func crashMarkerAsTheSupervisorReadsIt() throws {
        let dir = NSTemporaryDirectory() + "zflux-marker-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/drill.applying"
        #expect(CrashMarker.lastDeath(path: path) == nil)
        // A run that dies applying seq 9 leaves it behind.
        try #require(CrashMarker(path: path)).applying = 9
        #expect(CrashMarker.lastDeath(path: path).map { [$0.seq, UInt64($0.inARow)] } == [9, 1])
        #expect(CrashMarker.lastDeath(path: path).map { [$0.seq, UInt64($0.inARow)] } == [9, 1], "reading it changes nothing")
        // The next run counts that death, and dies on seq 9 again: the second in a row.
        let next = try #require(CrashMarker(path: path))
        #expect(next.countCrash().map { [$0.seq, $0.count] } == [9, 1])
        next.applying = 9
        #expect(CrashMarker.lastDeath(path: path).map { [$0.seq, UInt64($0.inARow)] } == [9, 2])
        // A run that gets past it, or dies between actions, leaves no death on an action.
        next.applying = 0
        #expect(CrashMarker.lastDeath(path: path) == nil)
    }
}
