import Foundation
import Testing

/// A devtools page with a key pair of its own on a CURVE cluster: the token of every authorized key
/// dispatches, `zflux devtools token` prints it from the key alone, and revoking the key revokes the
/// token (docs/OPERATIONS.md, "The devtools page").
@Suite("Devtools dispatch tokens from CURVE keys (real processes over tcp)", .serialized, .timeLimit(.minutes(3)))
struct DevtoolsKeyTokenTests {
    static func string(_ object: [String: Any]?, _ key: String) -> String? { object?[key] as? String }

    @Test(
        "with a key of its own, the devtools take every authorized key's token: an unlisted key's, a wrong one, none and a revoked key's are refused, and both are logged"
    )
    func keyTokens() async throws { try await onThread { try self.keyTokensOffThePool() } }

    /// The test, on a thread of its own (``onThread(_:)``): it blocks for a long while, which on the
    /// cooperative pool would hold one of its threads from every async test of the run.
    func keyTokensOffThePool() throws {
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["server", "client", "dev", "stranger", "devtools"] {
            #expect(try zflux(["keygen", name, "--dir", dir + "/keys"]).status == 0)
        }
        func publicKey(_ name: String) throws -> String { try keygenPublicKey(name, in: dir + "/keys") }
        // Edited in place, as an editor or `sed -i`-less script would: the same file, new bytes.
        func authorize(_ names: [String]) throws {
            let handle = try #require(FileHandle(forWritingAtPath: dir + "/keys/authorized_keys"))
            defer { try? handle.close() }
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data((try names.map(publicKey).joined(separator: "\n") + "\n").utf8))
        }
        #expect(FileManager.default.createFile(atPath: dir + "/keys/authorized_keys", contents: nil))
        try authorize(["client", "dev"])
        try """
        [cluster]
        transport = "tcp"
        [security]
        server_key = "keys/server.key"
        client_key = "keys/client.key"
        authorized_keys = "keys/authorized_keys"
        [devtools]
        key = "keys/devtools.key"
        [[store]]
        name = "counter"
        """.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "tcp", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()

        // Each developer's token, from their key and the cluster (or the devtools' .pub alone, as on a laptop).
        func token(_ arguments: [String]) throws -> String {
            let printed = try cluster.zflux(["devtools", "token"] + arguments)
            #expect(printed.status == 0, "\(printed.stderr)")
            return printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let devToken = try token(["--key-file", dir + "/keys/dev.key"])
        let strangerToken = try token(["--key-file", dir + "/keys/stranger.key"])
        let unlisted = try cluster.zflux(["devtools", "token", "--key-file", dir + "/keys/stranger.key"])
        #expect(unlisted.stderr.contains("is not in") && unlisted.stderr.contains("authorized_keys"), "\(unlisted.stderr)")
        #expect(try !cluster.zflux(["devtools", "token", "--key-file", dir + "/keys/dev.key"]).stderr.contains("is not in"))
        #expect(devToken.count == 64 && devToken != strangerToken)
        #expect(try token(["--key-file", dir + "/keys/dev.key", "--devtools-key", dir + "/keys/devtools.pub"]) == devToken)
        // With `=`: a Z85 key may start with '-', which would read as an option (1 run in 85 failed so).
        #expect(try token(["--key-file", dir + "/keys/dev.key", "--devtools-key=" + (try publicKey("devtools"))]) == devToken)
        // Made against another key (the server's), it is another token.
        #expect(try token(["--key-file", dir + "/keys/dev.key", "--devtools-key", dir + "/keys/server.pub"]) != devToken)
        #expect(try cluster.zflux(["devtools", "token", "--key-file", dir + "/keys/dev.key", "--devtools-key", "not-a-key"]).status != 0)
        #expect(try cluster.zflux(["devtools", "token"]).stderr.contains("--key-file"), "no key pair named")

        // Off loopback: the address carries a fresh token of its own, not a key's.
        let devtools = try DevtoolsProcess(runDir: cluster.runDir, listen: "0.0.0.0:0")
        defer { devtools.stop() }
        #expect(!devtools.url.contains("0.0.0.0"), "the host's name, which another machine can open: \(devtools.url)")
        let printed = String(devtools.url.split(separator: "#token=").last ?? "")
        #expect(printed.count == 32 && printed != devToken, "\(devtools.url)")
        let page = try WebSocketClient(port: devtools.port, origin: "http://127.0.0.1:\(devtools.port)")
        var deadline = ContinuousClock.now + .seconds(30)
        #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" }?["tokenRequired"] as? Bool == true)
        var id = 0
        func dispatch(_ token: String?) -> [String: Any]? {
            id += 1
            let carried = token.map { #","token":"\#($0)""# } ?? ""
            page.send(#"{"op":"dispatch","id":\#(id),"app":"counter","type":"incrementTapped","arguments":"{}"\#(carried)}"#)
            return page.receiveJSON(until: ContinuousClock.now + .seconds(30)) { ($0["id"] as? Int) == id }
        }
        let none = dispatch(nil)
        #expect(Self.string(none, "outcome") == "refused")
        #expect(Self.string(none, "reason")?.contains("devtools token") == true, "the refusal says where a token comes from: \(none ?? [:])")
        #expect(Self.string(dispatch(strangerToken), "outcome") == "refused", "a key the cluster does not list")
        #expect(Self.string(dispatch(String(devToken.dropLast()) + (devToken.hasSuffix("0") ? "1" : "0")), "outcome") == "refused")
        #expect(Self.string(dispatch(devToken), "outcome") == "ack")
        #expect(Self.string(dispatch(printed), "outcome") == "ack")

        // Revoked: dev's key leaves the file, and its token with it, at the next dispatch.
        try authorize(["client"])
        #expect(Self.string(dispatch(devToken), "outcome") == "refused", "a revoked key's token")
        // A key added is a token added.
        try authorize(["client", "stranger"])
        #expect(Self.string(dispatch(strangerToken), "outcome") == "ack")
        // Who dispatched and that someone was refused are in its log.
        let log = try String(contentsOfFile: devtools.log, encoding: .utf8), dev = try publicKey("dev")
        #expect(log.contains("request from a page") && log.contains(dev), "\(log)")
        #expect(log.contains("refused requests from a page"), "\(log)")
        // The refusals held back after the first line are logged once their ten seconds are up, though
        // no refusal comes after them: the one without a token at once, the two wrong ones later.
        let logged = ContinuousClock.now + .seconds(60)
        var lines = 0
        while ContinuousClock.now < logged {
            let text = (try? String(contentsOfFile: devtools.log, encoding: .utf8)) ?? ""
            lines = text.components(separatedBy: "refused requests from a page").count - 1
            if lines >= 2 { break }
            usleep(100_000)
        }
        #expect(lines >= 2, "the held-back refusals were never logged")
        devtools.stop()

        // On loopback with a token of its own set, it takes that one and the keys' tokens too.
        let withToken = try DevtoolsProcess(runDir: cluster.runDir, environment: ["ZFLUX_DEVTOOLS_TOKEN": "sesame"])
        defer { withToken.stop() }
        #expect(withToken.url.hasSuffix("/#token=sesame"), "\(withToken.url)")
        let second = try WebSocketClient(port: withToken.port, origin: "http://127.0.0.1:\(withToken.port)")
        deadline = ContinuousClock.now + .seconds(30)
        _ = second.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" }
        for (index, token) in ["sesame", strangerToken, devToken].enumerated() {
            second.send(#"{"op":"dispatch","id":\#(index + 1),"app":"counter","type":"incrementTapped","arguments":"{}","token":"\#(token)"}"#)
            let outcome = Self.string(second.receiveJSON(until: ContinuousClock.now + .seconds(30)) { ($0["id"] as? Int) == index + 1 }, "outcome")
            #expect(outcome == (index < 2 ? "ack" : "refused"), "token \(index)")
        }
    }
}
