import Examples
import FluxProtocol
import FluxTesting
import Foundation
import NodeSupport
import Testing

extension FaultTests {
    @Test(
        "3c. a store's snapshot with a byte flipped in the middle is set aside, not deleted: the store rebuilds its state from the journal, says so, and counts it in its status"
    )
    func flippedByteInSnapshot() async throws {
        let config = try writeConfig(faultConfig.replacingOccurrences(of: "%FSYNC%", with: "batch"))
        defer { try? FileManager.default.removeItem(atPath: config) }
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let runDir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: runDir) }
        let cluster = try ClusterProcess(transport: "ipc", runDir: runDir, extraArguments: ["--config", config])
        try cluster.waitUntilReady()
        let acked = try await runLoad(intake: try #require(cluster.topology).dispatcher.intake, clients: 2, perClient: 500) { client, i in
            try todoAction("c\(client)-\(i)")
        }
        #expect(acked.count == 1_000)
        // Each store writes its snapshot as it stops.
        cluster.stop(keepRunDirectory: true)

        let snapshot = runDir + "/" + RunDirectory.snapshotsName + "/todo.snapshot"
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: snapshot)))
        #expect(bytes.count > 10_000, "the snapshot holds the thousand todos: \(bytes.count) bytes")
        bytes[bytes.count / 2] ^= 0x10  // a latent sector error in the state
        try Data(bytes).write(to: URL(fileURLWithPath: snapshot))
        let counterSnapshot = runDir + "/" + RunDirectory.snapshotsName + "/counter.snapshot"
        #expect(FileManager.default.fileExists(atPath: counterSnapshot))

        let again = try ClusterProcess(transport: "ipc", runDir: runDir, extraArguments: ["--config", config])
        defer { again.stop() }
        try again.waitUntilReady(timeout: .seconds(60))
        let expected = try expectedStates(acked)
        #expect(try await waitForState(again, "todo", version: 1_000, as: Todo.State.self, timeout: .seconds(60)) == expected.todo)

        // The damaged file is kept as it was found, beside the new one.
        let kept = FileManager.default.contents(atPath: snapshot + ".set-aside").map { [UInt8]($0) }
        #expect(kept != nil, "the damaged snapshot is kept, renamed")
        #expect(kept.map { $0 == bytes } ?? false, "byte for byte as it was found")
        let topology = try #require(again.topology)
        let todoEndpoints = try #require(topology.store(named: "todo"))
        let todo = try #require(nodeStatus(endpoint: todoEndpoints.snapshot))
        #expect(todo.snapshotsSetAside == 1, "\(todo)")
        #expect(todo.replayed == 1_000, "rebuilt from the journal, from seq 1: \(todo)")
        // The other store's snapshot was whole: it resumed from it.
        let counterEndpoints = try #require(topology.store(named: "counter"))
        let counter = try #require(nodeStatus(endpoint: counterEndpoints.snapshot))
        #expect(counter.snapshotsSetAside == 0 && counter.replayed == 0, "\(counter)")
        #expect(!FileManager.default.fileExists(atPath: counterSnapshot + ".set-aside"))
        let log = try String(contentsOfFile: runDir + "/logs/store-todo.log", encoding: .utf8)
        #expect(log.contains("snapshot not usable: set aside, rebuilding the state from the journal"), "\(log.suffix(2000))")
        #expect(log.contains("fails its checksum"), "the log says why: \(log.suffix(2000))")
    }
}
