import Foundation
import Testing

/// A devtools page off loopback on a CURVE cluster: the token of every authorized key dispatches,
/// `zflux devtools token` prints it from the key alone, and revoking the key revokes the token
/// (docs/OPERATIONS.md, "The devtools page").
@Suite("Devtools dispatch tokens from CURVE keys (real processes over tcp)", .serialized, .timeLimit(.minutes(3)))
struct DevtoolsKeyTokenTests {
    static func string(_ object: [String: Any]?, _ key: String) -> String? { object?[key] as? String }

    @Test("an authorized key's token dispatches from a page off loopback; an unlisted key's, none or a revoked key's is refused")
    func keyTokens() throws {
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["server", "client", "dev", "stranger"] { #expect(try zflux(["keygen", name, "--dir", dir + "/keys"]).status == 0) }
        func publicKey(_ name: String) throws -> String {
            try String(contentsOfFile: "\(dir)/keys/\(name).pub", encoding: .utf8).split(separator: "\n").first { !$0.hasPrefix("#") }.map(
                String.init) ?? ""
        }
        func authorize(_ names: [String]) throws {
            try names.map(publicKey).joined(separator: "\n").appending("\n").write(
                toFile: dir + "/keys/authorized_keys", atomically: true, encoding: .utf8)
        }
        try authorize(["client", "dev"])
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

        // Each key's token, from the key and the cluster (or the server's .pub alone, as on a laptop).
        func token(_ arguments: [String]) throws -> String {
            let printed = try cluster.zflux(["devtools", "token"] + arguments)
            #expect(printed.status == 0, "\(printed.stderr)")
            return printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let clientToken = try token([])
        let devToken = try token(["--key-file", dir + "/keys/dev.key"])
        let strangerToken = try token(["--key-file", dir + "/keys/stranger.key"])
        #expect(devToken.count == 64 && clientToken != devToken && devToken != strangerToken)
        #expect(try token(["--key-file", dir + "/keys/dev.key", "--server-key", dir + "/keys/server.pub"]) == devToken)
        #expect(try cluster.zflux(["devtools", "token", "--server-key", "not-a-key"]).status != 0)

        // Off loopback, with no token set: the printed address carries the cluster client key's token.
        let devtools = try DevtoolsProcess(runDir: cluster.runDir, listen: "0.0.0.0:0")
        defer { devtools.stop() }
        #expect(devtools.url.hasSuffix("/#token=" + clientToken), "\(devtools.url)")
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
        #expect(Self.string(dispatch(String(devToken.dropLast()) + "0"), "outcome") == "refused")
        #expect(Self.string(dispatch(devToken), "outcome") == "ack")
        #expect(Self.string(dispatch(clientToken), "outcome") == "ack")

        // Revoked: dev's key leaves the file, and its token with it; the client's still dispatches.
        try authorize(["client"])
        #expect(Self.string(dispatch(devToken), "outcome") == "refused", "a revoked key's token")
        #expect(Self.string(dispatch(clientToken), "outcome") == "ack")
        // A key added is a token added.
        try authorize(["client", "stranger"])
        #expect(Self.string(dispatch(strangerToken), "outcome") == "ack")
        devtools.stop()

        // With a token of its own set, it takes that one and the keys' tokens too.
        let withToken = try DevtoolsProcess(runDir: cluster.runDir, listen: "0.0.0.0:0", environment: ["ZFLUX_DEVTOOLS_TOKEN": "sesame"])
        defer { withToken.stop() }
        #expect(withToken.url.hasSuffix("/#token=sesame"), "\(withToken.url)")
        let second = try WebSocketClient(port: withToken.port, origin: "http://127.0.0.1:\(withToken.port)")
        deadline = ContinuousClock.now + .seconds(30)
        _ = second.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" }
        for (index, token) in ["sesame", clientToken, devToken].enumerated() {
            second.send(#"{"op":"dispatch","id":\#(index + 1),"app":"counter","type":"incrementTapped","arguments":"{}","token":"\#(token)"}"#)
            let outcome = Self.string(second.receiveJSON(until: ContinuousClock.now + .seconds(30)) { ($0["id"] as? Int) == index + 1 }, "outcome")
            #expect(outcome == (index < 2 ? "ack" : "refused"), "token \(index)")
        }
    }
}
