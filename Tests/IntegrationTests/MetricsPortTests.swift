import FluxCore
import FluxTesting
import Foundation
import Testing

/// The metrics port under hostile peers (hardening round 3): it never takes the file descriptors the
/// node's ZeroMQ sockets need, and it can require a bearer token.
@Suite("Metrics port limits (real processes)", .serialized, .timeLimit(.minutes(2)))
struct MetricsPortTests {
    func cluster(_ name: String, environment: [String: String] = [:]) throws -> (ClusterProcess, port: Int, dir: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let port = try freePortRange(count: 2)
        try """
        [cluster]
        transport = "ipc"
        [dispatcher]
        metrics_port = \(port)
        [[store]]
        name = "counter"
        """.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(
            transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"], environment: environment)
        try cluster.waitUntilReady()
        return (cluster, port, dir)
    }

    /// How many of `fds` the server closed within `timeout`, all watched at once.
    func closedByServer(_ fds: [Int32], within timeout: Duration) -> Int {
        let deadline = ContinuousClock.now + timeout
        var closed = Set<Int32>()
        var byte: UInt8 = 0
        while ContinuousClock.now < deadline && closed.count < fds.count {
            var waiting = fds.filter { !closed.contains($0) }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&waiting, nfds_t(waiting.count), 100) > 0 else { continue }
            for entry in waiting where entry.revents != 0 && read(entry.fd, &byte, 1) <= 0 { closed.insert(entry.fd) }
        }
        return closed.count
    }

    @Test("a request whose body trickles in is cut at the time limit; a large body is refused at once")
    func slowBody() throws {
        let (cluster, port, dir) = try cluster("slowbody")
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let fd = try #require(connectLoopback(port))
        defer { close(fd) }
        let head = "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
        _ = Array(head.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        // One body byte a second: every byte is "activity", so only a limit on the whole request ends it.
        let started = ContinuousClock.now
        var closed = false
        while !closed && ContinuousClock.now - started < .seconds(16) {
            _ = [UInt8(ascii: "x")].withUnsafeBytes { write(fd, $0.baseAddress, 1) }
            closed = closedByServer([fd], within: .seconds(1)) == 1
        }
        #expect(closed, "the connection was still open after 16 s of a trickling body")

        let big = try #require(connectLoopback(port))
        defer { close(big) }
        let request = "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n" + String(repeating: "x", count: 4096)
        _ = Array(request.utf8).withUnsafeBytes { write(big, $0.baseAddress, $0.count) }
        var answer = [UInt8](repeating: 0, count: 512)
        let count = read(big, &answer, answer.count)
        #expect(count > 0 && String(decoding: answer[0..<max(count, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 413"))
    }

    @Test("connections beyond the cap are closed as they come, and the node keeps serving")
    func connectionCap() async throws {
        let (cluster, port, dir) = try cluster("connections")
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        // The finding's reproduction: the dispatcher under a low descriptor limit (as `ulimit -n` would
        // set it), then more connections than it has room for. Without the cap the next ipc connection
        // (`zflux dispatch`) aborted it with "Too many open files".
        let dispatcher = try #require(cluster.currentPid("dispatcher"))
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(dispatcher)/fd").count
        let limit = open + 128
        let prlimit = try runProgram("/usr/bin/prlimit", ["--nofile=\(limit):\(limit)", "--pid", "\(dispatcher)"])
        #expect(prlimit.status == 0, "\(prlimit.stderr)")
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<(limit + 72) { if let fd = connectLoopback(port) { held.append(fd) } }
        // At once, while every connection is held (the request deadline would free them in 10 s).
        #expect(try cluster.zflux(["dispatch", "counter", "incrementTapped"]).stdout == "1\n", "the dispatcher still serves")
        #expect(cluster.currentPid("dispatcher") == dispatcher && kill(dispatcher, 0) == 0, "the same dispatcher, not a restarted one")
        let refused = closedByServer(held, within: .seconds(2))
        #expect(held.count == limit + 72 && refused >= held.count - 64, "\(refused) of \(held.count) closed")
        // Idle connections holding every slot cannot lock a probe out: it takes the oldest one's place.
        #expect(httpGet(port, "/live", timeoutSeconds: 3)?.0 == 200, "a probe is answered while the slots are held")
        #expect(try cluster.zflux(["dispatch", "counter", "incrementTapped"]).stdout == "2\n", "and after")
        held.forEach { close($0) }
        held = []
        // The held connections are gone: the port answers again.
        try await eventually("the port answers again", timeout: .seconds(60)) { httpGet(port, "/live")?.0 == 200 }
    }

    @Test("with ZFLUX_METRICS_TOKEN set, a request needs Authorization: Bearer TOKEN")
    func bearerToken() throws {
        let (cluster, port, dir) = try cluster("token", environment: ["ZFLUX_METRICS_TOKEN": "s3cret-token"])
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        #expect(httpGet(port, "/metrics")?.0 == 401)
        #expect(httpGet(port, "/live", headers: ["Authorization": "Bearer wrong-token!"])?.0 == 401)
        #expect(httpGet(port, "/live", headers: ["Authorization": "Bearer s3cret-token"])?.0 == 200)
        let metrics = httpGet(port, "/metrics", headers: ["Authorization": "Bearer s3cret-token"])
        #expect(metrics?.0 == 200 && metrics?.1.contains("zflux_up") == true)
    }
}
