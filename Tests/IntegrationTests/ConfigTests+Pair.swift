import FluxTesting
import Foundation
import Leadership
import Logging
import NodeSupport
import Testing

extension ConfigTests {
    @Test("cluster up with an [ha] config runs the pair against the config's etcd (starting none) and the stores reach the leader")
    func pairFromConfig() async throws {
        let etcd = try await EtcdProcess.start(logger: Logger(label: "zflux.test.etcd"))
        defer { etcd.stop() }
        let dir = NSTemporaryDirectory() + "zflux-ha-up-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = """
            [cluster]
            transport = "ipc"
            [ha]
            etcd = ["\(etcd.endpoint)"]
            lease_ms = 2000
            [[dispatcher]]
            name = "d1"
            [[dispatcher]]
            name = "d2"
            [[store]]
            name = "counter"
            """
        try config.write(toFile: dir + "/ha.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/ha.toml"])
        defer { cluster.stop() }
        // Stopping a cluster still starting is a failed start (exit 1): wait for its word that it is up.
        try cluster.waitUntilReady()
        try await eventually("a dispatch is acknowledged by whichever dispatcher leads", timeout: .seconds(30), interval: .milliseconds(200)) {
            (try? cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":2}"#]))?.status == 0
        }
        try await eventually("the store applies it", timeout: .seconds(60), interval: .milliseconds(100)) {
            (try? cluster.zflux(["state", "counter"]))?.stdout.contains("\"version\":1") == true
        }
        #expect(cluster.currentPid("dispatcher-d1") != nil && cluster.currentPid("dispatcher-d2") != nil)
        let up = try String(contentsOfFile: dir + "/run/cluster-up.log", encoding: .utf8)
        #expect(!up.contains("etcd for the pair"), "the config names the etcd: cluster up starts none")
        let topology = try Topology.load(runDirectory: dir + "/run")
        #expect(
            topology.ha?.etcd == [etcd.endpoint]
                && topology.ha?.dispatchers.map(\.journalDirectory) == [dir + "/run/journal/d1", dir + "/run/journal/d2"])
    }
}
