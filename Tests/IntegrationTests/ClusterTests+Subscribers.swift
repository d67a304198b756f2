import FluxTesting
import Foundation
import NodeSupport
import Testing
import ZeroMQ

/// The subscribers a node's status counts, from its socket monitor, which the node's loop reads
/// without polling it (each socket polled costs libzmq system calls on every turn).
extension ClusterTests {
    @Test("an idle cluster's status counts a subscriber that connects to the dispatcher's and to a store's publisher, and no longer once it leaves")
    func subscribersComeAndGo() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("subscribers-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
        [cluster]
        transport = "ipc"
        [[store]]
        name = "counter"
        """.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)
        let store = try #require(topology.stores.first)
        func subscribers(_ endpoint: String) -> Int? {
            guard let answered = try? cluster.zflux(["status", "--endpoint", endpoint]), answered.status == 0,
                let object = try? JSONSerialization.jsonObject(with: Data(answered.stdout.utf8)) as? [String: Any]
            else { return nil }
            return object["subscribers"] as? Int
        }
        // The dispatcher's publisher has the one store; the store's has no view.
        let before = [topology.dispatcher.intake: 1, store.snapshot: 0]
        for (endpoint, count) in before {
            try await eventually("\(endpoint) counts \(count) subscribers", timeout: .seconds(30)) { subscribers(endpoint) == count }
        }
        let actions = try Socket(.shared, .sub)
        let states = try Socket(.shared, .sub)
        try actions.connect(topology.dispatcher.actions)
        try states.connect(store.state)
        for (endpoint, count) in before {
            try await eventually("\(endpoint) counts \(count + 1) subscribers", timeout: .seconds(30)) { subscribers(endpoint) == count + 1 }
        }
        actions.close()
        states.close()
        for (endpoint, count) in before {
            try await eventually("\(endpoint) counts \(count) subscribers again", timeout: .seconds(30)) { subscribers(endpoint) == count }
        }
    }
}
