import Foundation
import Testing

/// Findings of the hostile review (issue 15), each reproduced against the real binary.
@Suite("Hardening (real processes)", .serialized)
struct HardeningTests {
    /// A cluster of the dispatcher and one counter store, both with a metrics port.
    func metricsCluster(_ dir: String, base: Int) throws -> ClusterProcess {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let config = """
            [cluster]
            transport = "ipc"
            [dispatcher]
            metrics_port = \(base)
            [[store]]
            name = "counter"
            metrics_port = \(base + 1)
            """
        try config.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        try cluster.waitUntilReady()
        return cluster
    }

    @Test("peers that reset their connection to a metrics port (SO_LINGER 0) do not kill the node")
    func resetConnectionsKeepTheNodeAlive() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("reset-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = try freePortRange(count: 4)
        let cluster = try metricsCluster(dir, base: base)
        defer { cluster.stop() }
        let dispatcher = try #require(cluster.currentPid("dispatcher"))
        let store = try #require(cluster.currentPid("store-counter"))
        // Half of them reset before sending anything, half right after a request.
        for round in 0..<20 {
            for port in [base, base + 1] {
                sendAndReset(port, round.isMultiple(of: 2) ? "" : "GET \(["/metrics", "/live", "/ready"][round % 3]) HTTP/1.1\r\nHost: x\r\n\r\n")
            }
        }
        // Each server has answered (or tried to answer) the resets before it answers this.
        for port in [base, base + 1] {
            for path in ["/metrics", "/live", "/ready"] {
                #expect(httpGet(port, path)?.0 == 200, "port \(port) \(path)")
            }
        }
        #expect(kill(dispatcher, 0) == 0 && cluster.currentPid("dispatcher") == dispatcher, "the dispatcher was not restarted")
        #expect(kill(store, 0) == 0 && cluster.currentPid("store-counter") == store, "the store was not restarted")
        #expect(!cluster.logs().contains("exited"), "\(cluster.logs())")
    }

    @Test("clients that never finish their request do not block /live for others")
    func stuckClientsDoNotBlockProbes() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stuck-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = try freePortRange(count: 4)
        let cluster = try metricsCluster(dir, base: base)
        defer { cluster.stop() }
        // Ten connections that never send a byte: a server that serves one connection at a time
        // waits on each of them before it reaches the probe below.
        var stuck: [Int32] = []
        defer { stuck.forEach { close($0) } }
        for _ in 0..<10 {
            let fd = try #require(connectLoopback(base + 1))
            stuck.append(fd)
        }
        #expect(httpGet(base + 1, "/live", timeoutSeconds: 5)?.0 == 200)
        #expect(httpGet(base + 1, "/metrics", timeoutSeconds: 5)?.0 == 200)
    }
}
