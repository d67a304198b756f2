import FluxCore
import FluxTesting
import Foundation
import NodeCores
import NodeSupport
import Testing
import ZeroMQ

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

    /// The permission bits of `path`, or nil when it does not exist.
    func mode(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_mode & 0o777) : nil
    }

    @Test("a standalone dispatcher keeps its run directory 0700 and its journal files 0600, whatever the umask")
    func privateFilesOnEveryEntryPoint() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("perm-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[cluster]\ntransport = \"ipc\"\n[[store]]\nname = \"counter\"\n".write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let run = dir + "/run"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // A permissive umask: what the files get must come from zflux, not from the shell.
        process.arguments = ["-c", "umask 000; exec \"$0\" dispatcher --config \"$1\" --run-dir \"$2\"", zfluxBinary, dir + "/cluster.toml", run]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        try await eventually("the dispatcher answers status") {
            (try? zflux(["status", "--endpoint", "ipc://\(run)/dispatcher-intake.sock", "--run-dir", run]))?.status == 0
        }
        let sent = try zflux(["dispatch", "counter", "incrementTapped", "--config", dir + "/cluster.toml", "--run-dir", run])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(mode(run) == 0o700)
        #expect(mode(run + "/journal") == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: run + "/journal")
        #expect(files.contains("LOCK") && files.contains { $0.hasSuffix(".journal") }, "\(files)")
        for file in files { #expect(mode(run + "/journal/" + file) == 0o600, "\(file)") }
    }

    @Test("a secret key file others can read is refused, naming the file and the fix; group-read (Kubernetes' fsGroup) is allowed")
    func keyFilePermissions() throws {
        let dir = try directoryWithKeys("keymode")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = """
            [cluster]
            transport = "tcp"
            [security]
            server_key = "keys/server.key"
            client_key = "keys/client.key"
            authorized_keys = "keys/authorized_keys"
            [[store]]
            name = "counter"
            """
        try config.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        func check() throws -> CommandResult { try zflux(["cluster", "check", dir + "/cluster.toml", "--run-dir", dir + "/run"]) }
        #expect(mode(dir + "/keys/server.key") == 0o600, "keygen writes 0600")
        #expect(try check().status == 0)
        chmod(dir + "/keys/server.key", 0o644)
        let refused = try check()
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("keys/server.key") && refused.stderr.contains("chmod 600"), "\(refused.stderr)")
        chmod(dir + "/keys/server.key", 0o600)
        chmod(dir + "/keys/client.key", 0o666)
        #expect(try check().status != 0)
        chmod(dir + "/keys/client.key", 0o440)
        #expect(try check().status == 0)
    }

    @Test("states and replays over the 16 MiB receive limit still arrive: 150 actions of 120 KB", .timeLimit(.minutes(3)))
    func largeStatesArrive() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("large-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = """
            [cluster]
            transport = "ipc"
            [limits]
            max_payload_bytes = 200000
            [journal]
            snapshot_every = 100000
            [[store]]
            name = "ledger"
            """
        try config.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let memo = String(repeating: "m", count: 120_000)
        for account in 1...150 {
            let sent = try cluster.zflux(["dispatch", "ledger", "post", #"{"account":\#(account),"amount":1,"memo":"\#(memo)"}"#])
            try #require(sent.status == 0, "\(sent.stderr)")
        }
        func accounts() throws -> (version: Int, count: Int)? {
            let answer = try cluster.zflux(["state", "ledger", "--timeout", "10"])
            guard answer.status == 0, let object = try? JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any],
                let version = object["version"] as? Int, let state = object["state"] as? [String: Any],
                let flat = state["accounts"] as? [Any]  // key, value, key, value…
            else { return nil }
            return (version, flat.count / 2)
        }
        let whole = try #require(try accounts(), "zflux state answers with a state of about 18 MB")
        #expect(whole.version == 150 && whole.count == 150)
        // A view joining now gets the same state, in parts, on credit.
        let view = try ViewProcess(runDir: cluster.runDir, stores: ["ledger"])
        let shown = try await view.waitForVersion(store: "ledger", 150)
        view.process.terminate()
        view.process.waitUntilExit()
        let shownAccounts = (try JSONSerialization.jsonObject(with: shown) as? [String: Any])?["accounts"] as? [Any]
        #expect(shownAccounts?.count == 300, "150 accounts, as key, value pairs")
        // A store restarted with no snapshot catches up from replay batches of these actions.
        let store = try #require(cluster.currentPid("store-ledger"))
        signalNode(store, SIGKILL)
        try await eventually("the store is restarted", timeout: .seconds(30)) {
            if let pid = cluster.currentPid("store-ledger") { return pid != store } else { return false }
        }
        try await eventually("the restarted store is back at version 150", timeout: .seconds(60)) {
            (try? accounts()).flatMap { $0 }.map { $0.version == 150 && $0.count == 150 } ?? false
        }
    }

    @Test("2,000 replay requests from seq 1 by a peer that never reads: the dispatcher's memory stays bounded and dispatches keep being ACKed")
    func replayFloodFromAPeerThatNeverReads() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("replayflood-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[cluster]\ntransport = \"ipc\"\n[[store]]\nname = \"counter\"\n[[store]]\nname = \"ledger\"\n".write(
            toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)
        // A journal long enough that every answer is megabytes.
        let memo = String(repeating: "r", count: 800)
        let filled = try cluster.zflux(
            ["dispatch", "ledger", "post", #"{"account":1,"amount":1,"memo":"\#(memo)"}"#, "--repeat", "4000"], timeout: .seconds(180))
        try #require(filled.status == 0, "\(filled.stderr)")
        let dispatcher = try #require(cluster.currentPid("dispatcher"))
        let before = try #require(residentKilobytes(dispatcher))
        let bound = 300 * 1024  // KiB of growth allowed; unbounded queues reach gigabytes here
        let peer = try Socket(.shared, .dealer)
        defer { peer.close() }
        try peer.setOption(.receiveHighWaterMark, 1)
        try peer.setOption(.receiveBuffer, 4096)
        try peer.setOption(.linger, 0)
        try peer.connect(topology.dispatcher.replay)
        var grewTo = before
        for request in 0..<2000 {
            _ = try peer.send(Message(header: Header(kind: .replayRequest, seq: 1)).frames, dontWait: true)
            if request % 50 == 0 {
                grewTo = max(grewTo, residentKilobytes(dispatcher) ?? 0)
                if grewTo - before > bound { break }  // stop before the machine suffers
            }
        }
        // Dispatches go on being acknowledged meanwhile.
        for _ in 0..<5 {
            let sent = try cluster.zflux(["dispatch", "counter", "incrementTapped", "--timeout", "10"])
            #expect(sent.status == 0, "\(sent.stderr)")
            grewTo = max(grewTo, residentKilobytes(dispatcher) ?? 0)
        }
        #expect(grewTo - before <= bound, "the dispatcher grew from \(before / 1024) MiB to \(grewTo / 1024) MiB")
        #expect(cluster.currentPid("dispatcher") == dispatcher && kill(dispatcher, 0) == 0)
    }

    @Test("2,000 snapshot requests by a peer that never reads: the store's memory stays bounded and it keeps serving")
    func snapshotFloodFromAPeerThatNeverReads() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("snapflood-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[cluster]\ntransport = \"ipc\"\n[[store]]\nname = \"ledger\"\n".write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        // A state of about a megabyte.
        let opened = try cluster.zflux(["dispatch", "ledger", "open", #"{"count":60000}"#])
        try #require(opened.status == 0, "\(opened.stderr)")
        let store = try #require(cluster.currentPid("store-ledger"))
        let endpoint = try #require(cluster.topology?.store(named: "ledger")?.snapshot)
        let before = try #require(residentKilobytes(store))
        let bound = 300 * 1024
        let peer = try Socket(.shared, .dealer)
        defer { peer.close() }
        try peer.setOption(.receiveHighWaterMark, 1)
        try peer.setOption(.receiveBuffer, 4096)
        try peer.setOption(.linger, 0)
        try peer.connect(endpoint)
        try peer.setOption(.sendTimeout, 5000)
        var grewTo = before
        var sent = 0
        for request in 0..<2000 {
            if try peer.send(Message(header: Header(kind: .snapshotRequest)).frames) { sent += 1 }
            if request % 50 == 0 {
                grewTo = max(grewTo, residentKilobytes(store) ?? 0)
                if grewTo - before > bound { break }
            }
        }
        // Once the store has taken in every request, its memory says what they cost.
        #expect(sent == 2000)
        try await eventually("the store has received the 2,000 requests", timeout: .seconds(60)) {
            grewTo = max(grewTo, residentKilobytes(store) ?? 0)
            let status = try cluster.zflux(["status", "--endpoint", endpoint])
            guard let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any] else { return false }
            return (object["snapshot_requests"] as? Int ?? 0) >= sent || grewTo - before > bound
        }
        grewTo = max(grewTo, residentKilobytes(store) ?? 0)
        let posted = try cluster.zflux(["dispatch", "ledger", "post", #"{"account":1,"amount":5,"memo":"after"}"#])
        #expect(posted.status == 0, "\(posted.stderr)")
        try await eventually("the store still answers snapshot requests of others", timeout: .seconds(30)) {
            grewTo = max(grewTo, residentKilobytes(store) ?? 0)
            let answer = try cluster.zflux(["state", "ledger", "--timeout", "5"])
            return answer.status == 0 && answer.stdout.hasPrefix(#"{"version":2,"#)
        }
        #expect(grewTo - before <= bound, "the store grew from \(before / 1024) MiB to \(grewTo / 1024) MiB")
        #expect(cluster.currentPid("store-ledger") == store && kill(store, 0) == 0)
    }

    @Test(
        "20 peers that ask for snapshots of a 3.6 MB state as it changes and never read: the store stays within its snapshot budget, and gives the memory back when they leave",
        .timeLimit(.minutes(4)))
    func snapshotFloodFromManyPeers() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("snapfloodmany-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[cluster]\ntransport = \"ipc\"\n[journal]\nfsync = \"none\"\n[[store]]\nname = \"ledger\"\n".write(
            toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let opened = try cluster.zflux(["dispatch", "ledger", "open", #"{"count":216000}"#])
        try #require(opened.status == 0, "\(opened.stderr)")
        let store = try #require(cluster.currentPid("store-ledger"))
        let topology = try #require(cluster.topology)
        let endpoint = try #require(topology.store(named: "ledger")?.snapshot)
        func requestsTaken() -> Int {
            let status = try? cluster.zflux(["status", "--endpoint", endpoint])
            let object = status.flatMap { try? JSONSerialization.jsonObject(with: Data($0.stdout.utf8)) as? [String: Any] }
            return object?["snapshot_requests"] as? Int ?? 0
        }
        // One answer read whole first: the encoded state is part of the resting size.
        let read = try cluster.zflux(["state", "ledger", "--timeout", "20"])
        try #require(read.status == 0 && read.stdout.count > 3_000_000, "\(read.stderr)")
        let resting = try #require(residentKilobytes(store))
        // The store's budget for answers queued for peers, plus slack for the allocator and a state
        // being encoded (KiB). Without a budget across peers, each peer's queue held up to 64
        // answers: the store reached gigabytes.
        let budget = SnapshotBudget.queuedBytes / 1024, slack = 48 * 1024
        var peers: [Socket] = []
        defer { for peer in peers { peer.close() } }
        for _ in 0..<20 {
            let peer = try Socket(.shared, .dealer)
            try peer.setOption(.receiveHighWaterMark, 1)
            try peer.setOption(.receiveBuffer, 4096)
            try peer.setOption(.linger, 0)
            try peer.connect(endpoint)
            peers.append(peer)
        }
        let client = try DispatchClient(intake: topology.dispatcher.intake, timeout: .seconds(30))
        var peak = resting, sent = 0
        // The state changes as they ask, so the answers are of many versions, not one.
        flood: for round in 0..<60 {
            for peer in peers {
                if try peer.send(Message(header: Header(kind: .snapshotRequest)).frames, dontWait: true) { sent += 1 }
            }
            let payload = Array(#"{"post":{"account":\#(round),"amount":1,"memo":"flood"}}"#.utf8)
            let outcome = try await client.dispatch(app: "ledger", type: "post", payload: payload)
            guard case .acknowledged = outcome else { throw TestFailure("post \(round): \(outcome)") }
            for _ in 0..<5 {
                peak = max(peak, residentKilobytes(store) ?? 0)
                if peak - resting > budget + slack { break flood }  // stop before the machine suffers
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        try await eventually("the store has taken in the \(sent) requests", timeout: .seconds(60)) {
            peak = max(peak, residentKilobytes(store) ?? 0)
            return requestsTaken() >= sent || peak - resting > budget + slack
        }
        peak = max(peak, residentKilobytes(store) ?? 0)
        #expect(peak - resting <= budget + slack, "the store grew from \(resting / 1024) MiB to \(peak / 1024) MiB")
        // The peers leave: what was queued for them goes, and so does the store's memory.
        for peer in peers { peer.close() }
        peers = []
        var after = peak
        try await eventually("the store's memory comes back near its resting size", timeout: .seconds(30)) {
            after = residentKilobytes(store) ?? after
            return after - resting <= 24 * 1024
        }
        print("snapshot flood: resting \(resting / 1024) MiB, peak \(peak / 1024) MiB, after the peers left \(after / 1024) MiB")
        let answer = try cluster.zflux(["state", "ledger", "--timeout", "20"])
        #expect(answer.status == 0 && answer.stdout.hasPrefix(#"{"version":61,"#), "\(answer.stderr)")
        #expect(cluster.currentPid("store-ledger") == store && kill(store, 0) == 0)
    }

    @Test(
        "subscribers that never read hold at most queue_mb each in the dispatcher and in a store, whatever the actions' size",
        .timeLimit(.minutes(4)))
    func stalledSubscribersHoldBoundedBytes() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stalledsub-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[cluster]\ntransport = \"ipc\"\nqueue_mb = 8\n[journal]\nfsync = \"none\"\n[[store]]\nname = \"login\"\n".write(
            toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)
        let dispatcher = try #require(cluster.currentPid("dispatcher"))
        let store = try #require(cluster.currentPid("store-login"))
        let stateEndpoint = try #require(topology.store(named: "login")?.state)
        // Three subscribers to each publisher that take nothing off their connection.
        var stalled: [Socket] = []
        defer { for socket in stalled { socket.close() } }
        for endpoint in [topology.dispatcher.actions, stateEndpoint] {
            for _ in 0..<3 {
                let socket = try Socket(.shared, .sub)
                try socket.setOption(.receiveHighWaterMark, 1)
                try socket.setOption(.receiveBuffer, 4096)
                try socket.setOption(.linger, 0)
                try socket.subscribe()
                try socket.connect(endpoint)
                stalled.append(socket)
            }
        }
        let before = (dispatcher: try #require(residentKilobytes(dispatcher)), store: try #require(residentKilobytes(store)))
        // 300 MB of actions, each a different 100 KB user name, so each also changes the state.
        let clients = try (0..<6).map { _ in try DispatchClient(intake: topology.dispatcher.intake, timeout: .seconds(30)) }
        let filler = String(repeating: "u", count: 100_000)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    for round in 0..<500 {
                        let payload = Array(#"{"usernameChanged":{"username":"\#(index)-\#(round)-\#(filler)"}}"#.utf8)
                        let outcome = try await client.dispatch(app: "login", type: "usernameChanged", payload: payload)
                        guard case .acknowledged = outcome else { throw TestFailure("dispatch \(index)-\(round): \(outcome)") }
                    }
                }
            }
            try await group.waitForAll()
        }
        // The store has applied everything, so what it published is queued or dropped by now.
        try await eventually("the store applied the 3,000 actions", timeout: .seconds(60)) {
            let status = try cluster.zflux(["status", "--endpoint", try #require(topology.store(named: "login")).snapshot])
            guard let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any] else { return false }
            return object["version"] as? Int == 3000
        }
        let after = (dispatcher: try #require(residentKilobytes(dispatcher)), store: try #require(residentKilobytes(store)))
        // Without byte bounds the stalled subscribers hold every message (libzmq shares one copy among
        // them): the dispatcher grew by ~330 MiB, the store (one update per burst) by ~66 MiB. Bounded:
        // 8 MiB each, besides the dispatcher's 64 MiB journal tail cache and allocator slack.
        #expect(
            after.dispatcher - before.dispatcher <= 200 * 1024,
            "the dispatcher grew from \(before.dispatcher / 1024) MiB to \(after.dispatcher / 1024) MiB")
        #expect(after.store - before.store <= 32 * 1024, "the store grew from \(before.store / 1024) MiB to \(after.store / 1024) MiB")
    }
}
