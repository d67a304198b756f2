import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing
import ZeroMQ

/// A TCP forwarder that records every byte it passes, to see what crosses the wire.
final class RecordingProxy: @unchecked Sendable {
    // @unchecked: `seen` is locked; the listening socket is owned by the accept thread.
    let port: Int
    let seen = Locked([UInt8]())
    private let listener: Int32

    init(upstreamPort: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        listen(fd, 8)
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: bound.sin_port))
        let listener = listener, seen = seen
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var target = sockaddr_in()
                target.sin_family = sa_family_t(AF_INET)
                target.sin_addr.s_addr = inet_addr("127.0.0.1")
                target.sin_port = in_port_t(UInt16(upstreamPort).bigEndian)
                _ = withUnsafePointer(to: &target) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                for (from, to) in [(client, upstream), (upstream, client)] {
                    Thread {
                        var buffer = [UInt8](repeating: 0, count: 65536)
                        while true {
                            let n = read(from, &buffer, buffer.count)
                            guard n > 0 else { shutdown(to, Int32(SHUT_WR)); return }
                            seen.withLock { $0 += buffer[0..<n] }
                            _ = buffer.withUnsafeBytes { send(to, $0.baseAddress, n, Int32(MSG_NOSIGNAL)) }
                        }
                    }.start()
                }
            }
        }.start()
    }

    func close() { shutdown(listener, Int32(SHUT_RDWR)); _ = Glibc.close(listener) }
}

@Suite("CURVE security (real processes over tcp)", .serialized, .timeLimit(.minutes(3)))
struct SecurityTests {
    @Test("listed keys get in; unknown keys and plain clients are refused and logged; keys reload without a restart; the wire is unreadable")
    func curve() async throws {
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["server", "client", "rogue"] {
            #expect(try zflux(["keygen", name, "--dir", dir + "/keys"]).status == 0)
        }
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: dir + "/keys/client.key")[.posixPermissions] as? Int)
        #expect(mode == 0o600, "secret key files are private")
        #expect(try zflux(["keygen", "client", "--dir", dir + "/keys"]).status != 0, "keygen never overwrites a key")
        func publicKey(_ name: String) throws -> String { try keygenPublicKey(name, in: dir + "/keys") }
        try (try publicKey("client") + "\n").write(toFile: dir + "/keys/authorized_keys", atomically: true, encoding: .utf8)
        let config = dir + "/cluster.toml"
        try """
        [cluster]
        transport = "tcp"
        [security]
        server_key = "keys/server.key"
        client_key = "keys/client.key"
        authorized_keys = "keys/authorized_keys"
        [[store]]
        name = "todo"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "tcp", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let intake = try #require(cluster.topology).dispatcher.intake

        // A listed key: dispatch and read state as usual.
        #expect(try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"listed key"}"#]).stdout == "1\n")

        // An action only the todo app's effects send: refused from a client, even with a listed key (the
        // effect token is derived from the server's secret key, which only nodes hold); the store's own
        // effect of loadTapped (todosLoaded or loadFailed, seq 3) is taken.
        let forged = try cluster.zflux(["dispatch", "todo", "todosLoaded", #"{"todos":[]}"#])
        #expect(forged.status == 1 && forged.stderr.contains("todo.todosLoaded is sent by the app's effects only"), "\(forged.stderr)")
        #expect(try cluster.zflux(["dispatch", "todo", "loadTapped"]).stdout == "2\n")
        try await eventually("the store's effect to be sequenced as seq 3", timeout: .seconds(30)) {
            let status = try cluster.zflux(["status", "--endpoint", intake])
            return ((try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8))) as? [String: Any])?["head"] as? Int == 3
        }

        // An unknown key: no answer, and the refusal is logged with the key.
        let rogue = try zfluxWithKey(cluster, key: dir + "/keys/rogue.key", ["dispatch", "todo", "addTodo", #"{"title":"rogue"}"#, "--timeout", "1"])
        #expect(rogue.status == 2, "\(rogue)")
        let rogueKey = try publicKey("rogue")
        try await eventually("the refusal in the dispatcher's log") {
            ((try? String(contentsOfFile: cluster.runDir + "/logs/dispatcher.log", encoding: .utf8)) ?? "").contains("key=\(rogueKey)")
        }

        // No CURVE at all: a plain DEALER is never answered.
        let plain = try Socket(.shared, .dealer)
        defer { plain.close() }
        try plain.connect(intake)
        try plain.send(Message(topic: "todo", header: Header(kind: .statusRequest)).frames)
        var poller = Poller()
        poller.add(.socket(plain))
        #expect(try poller.poll(timeoutMilliseconds: 1000) == 0, "a client without CURVE gets nothing back")

        // Authorize the rogue key: it gets in without a restart.
        try (try publicKey("client") + "\n" + rogueKey + "\n").write(toFile: dir + "/keys/authorized_keys", atomically: true, encoding: .utf8)
        try await eventually("the newly authorized key to get in") {
            try zfluxWithKey(cluster, key: dir + "/keys/rogue.key", ["dispatch", "todo", "incrementTapped", "--timeout", "1"]).stderr.contains(
                "rejected")
                || (try zfluxWithKey(cluster, key: dir + "/keys/rogue.key", ["state", "todo", "--timeout", "1"])).status == 0
        }

        // On the wire: a dispatch through a recording proxy arrives, and its text is nowhere in the bytes.
        let port = try #require(Int(intake.split(separator: ":").last ?? ""))
        let proxy = try RecordingProxy(upstreamPort: port)
        defer { proxy.close() }
        let proxied = dir + "/proxied"
        try FileManager.default.createDirectory(atPath: proxied, withIntermediateDirectories: true)
        var topology = try #require(cluster.topology)
        topology.dispatcher.intake = "tcp://127.0.0.1:\(proxy.port)"
        topology.security = try Topology.load(runDirectory: cluster.runDir).security
        try topology.write(runDirectory: proxied)
        let marker = "MARKER-\(UInt32.random(in: 0...UInt32.max))"
        let sent = try zflux(["dispatch", "todo", "addTodo", "{\"title\":\"\(marker)\"}", "--run-dir", proxied])
        #expect(sent.status == 0, "\(sent)")
        let bytes = proxy.seen.withLock { $0 }
        #expect(bytes.count > 100, "the dispatch went through the proxy")
        #expect(!String(decoding: bytes, as: UTF8.self).contains(marker), "the action is not readable on the wire")
        #expect(!String(decoding: bytes, as: UTF8.self).contains("addTodo"))
    }

    @Test("removing a key from authorized_keys cuts that peer's open connections; listed peers and the nodes go on")
    func revocationCutsOpenConnections() async throws {
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["server", "client", "user"] { #expect(try zflux(["keygen", name, "--dir", dir + "/keys"]).status == 0) }
        func publicKey(_ name: String) throws -> String { try keygenPublicKey(name, in: dir + "/keys") }
        try (try publicKey("client") + "\n" + publicKey("user") + "\n").write(
            toFile: dir + "/keys/authorized_keys", atomically: true, encoding: .utf8)
        try """
        [cluster]
        transport = "tcp"
        [security]
        server_key = "keys/server.key"
        client_key = "keys/client.key"
        authorized_keys = "keys/authorized_keys"
        [[store]]
        name = "counter"
        """.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "tcp", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)
        let security = try #require(try topology.clientSecurity(keyFile: dir + "/keys/user.key"))
        // The user's connections, opened while its key is listed: one to the intake, one to a store.
        let intake = try Socket(.shared, .dealer)
        let store = try Socket(.shared, .dealer)
        defer {
            intake.close()
            store.close()
        }
        try intake.connectSecurely(topology.dispatcher.intake, security)
        try store.connectSecurely(try #require(topology.store(named: "counter")?.snapshot), security)
        func answers(_ socket: Socket, within milliseconds: Int) throws -> Bool {
            _ = try socket.send(Message(header: Header(kind: .statusRequest)).frames, dontWait: true)
            var poller = Poller()
            poller.add(.socket(socket))
            guard try poller.poll(timeoutMilliseconds: milliseconds) > 0 else { return false }
            while try socket.receive(dontWait: true) != nil {}
            return true
        }
        #expect(try answers(intake, within: 5000) && answers(store, within: 5000), "the listed user is served")
        // Revoke the user's key: its open connections are cut, so nothing it sends is answered any more.
        try (try publicKey("client") + "\n").write(toFile: dir + "/keys/authorized_keys", atomically: true, encoding: .utf8)
        try await eventually("the revoked user's connections are cut", timeout: .seconds(60)) {
            let cut = try !answers(intake, within: 300) && !answers(store, within: 300)
            if !cut { while try intake.receive(dontWait: true) != nil || store.receive(dontWait: true) != nil {} }
            return cut
        }
        // The nodes, which connect with the cluster's own key, go on.
        let sent = try cluster.zflux(["dispatch", "counter", "incrementTapped"])
        #expect(sent.status == 0, "\(sent.stderr)")
        try await eventually("the store applies it") { try cluster.zflux(["state", "counter"]).stdout.contains(#""count":1"#) }
    }
}

func zfluxWithKey(_ cluster: ClusterProcess, key: String, _ arguments: [String]) throws -> CommandResult {
    try cluster.zflux(arguments, environment: ["ZFLUX_KEY": key])
}
