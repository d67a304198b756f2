import Foundation
import NodeSupport
import Testing

@Suite("A pair member's key files")
struct MemberKeyTests {
    @Test(
        "a member whose .pub is not its key's public half refuses to start, saying so, instead of being shut out of replication by its partner"
    )
    func mismatchedMemberKeyRefused() throws {
        var template = Array("/tmp/zf-keys-XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["server", "client", "d1", "d2"] { _ = try KeyPair.generate(name: name, directory: directory + "/keys") }
        try "".write(toFile: directory + "/keys/authorized_keys", atomically: true, encoding: .utf8)
        // d1's .pub is d2's: the partner would admit the wrong key.
        try String(contentsOfFile: directory + "/keys/d2.pub", encoding: .utf8)
            .write(toFile: directory + "/keys/d1.pub", atomically: true, encoding: .utf8)
        let config = directory + "/cluster.toml"
        try """
        [cluster]
        transport = "tcp"

        [ha]
        etcd = ["http://127.0.0.1:1"]

        [[dispatcher]]
        name = "d1"
        host = "127.0.0.1"
        port = 5570
        key = "keys/d1.key"

        [[dispatcher]]
        name = "d2"
        host = "127.0.0.2"
        port = 5570
        key = "keys/d2.key"

        [[store]]
        name = "counter"
        host = "127.0.0.3"
        port = 5580

        [security]
        server_key = "keys/server.key"
        client_key = "keys/client.key"
        authorized_keys = "keys/authorized_keys"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let result = try zflux(["dispatcher", "--config", config, "--node", "d1", "--run-dir", directory + "/run"], timeout: .seconds(60))
        #expect(result.status != 0)
        #expect(result.stderr.contains("d1.key is not that key's public half"), "\(result.stderr)")
    }
}
