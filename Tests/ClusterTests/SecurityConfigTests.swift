import Cluster
import Foundation
import NodeSupport
import Testing

@Suite("[security] key files")
struct SecurityConfigTests {
    @Test(
        "a host that runs only commands and clients needs the server's public key, not its secret: server.pub alone is enough; with neither file the error names both"
    )
    func clientHostNeedsNoServerSecret() throws {
        let directory = NSTemporaryDirectory() + "zflux-security-keys-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["server", "client"] { _ = try KeyPair.generate(name: name, directory: directory + "/keys") }
        try "".write(toFile: directory + "/keys/authorized_keys", atomically: true, encoding: .utf8)
        try """
        [[store]]
        name = "counter"

        [security]
        server_key = "keys/server.key"
        client_key = "keys/client.key"
        authorized_keys = "keys/authorized_keys"
        """.write(toFile: directory + "/cluster.toml", atomically: true, encoding: .utf8)
        func load() throws -> Topology {
            try ClusterConfig.load(path: directory + "/cluster.toml")
                .topology(runDirectory: directory + "/run", transportOverride: nil, basePortOverride: nil, apps: nil)
        }
        let server = try KeyPair.load(directory + "/keys/server.key")
        #expect(try load().security?.serverPublicKey == server.publicKey)
        // A server.pub that is another pair's, beside server.key: refused before any node starts.
        let serverPub = try String(contentsOfFile: directory + "/keys/server.pub", encoding: .utf8)
        let client = try String(contentsOfFile: directory + "/keys/client.pub", encoding: .utf8)
        try client.write(toFile: directory + "/keys/server.pub", atomically: true, encoding: .utf8)
        do {
            _ = try load()
            Issue.record("a server.pub of another key pair was accepted beside server.key")
        } catch {
            #expect("\(error)".contains("is not that key's public half"), "\(error)")
        }
        try serverPub.write(toFile: directory + "/keys/server.pub", atomically: true, encoding: .utf8)
        // A client host: the server's secret half is not there.
        try FileManager.default.removeItem(atPath: directory + "/keys/server.key")
        #expect(try load().security?.serverPublicKey == server.publicKey)
        // Neither half: the error names both files.
        try FileManager.default.removeItem(atPath: directory + "/keys/server.pub")
        do {
            _ = try load()
            Issue.record("a config whose server key files are both missing was accepted")
        } catch {
            #expect("\(error)".contains("server.pub") && "\(error)".contains("server.key"), "\(error)")
        }
    }

    @Test("[cluster] name follows the rule for names in every config, not only in one with [ha]")
    func clusterNameChecked() throws {
        let text = "[cluster]\nname = \"not a name!\"\n\n[[store]]\nname = \"counter\"\n"
        do {
            _ = try ClusterConfig.parse(text, source: "name.toml")
                .topology(runDirectory: "/run/zflux", transportOverride: nil, basePortOverride: nil, apps: nil)
            Issue.record("a cluster name with spaces and '!' was accepted")
        } catch {
            #expect("\(error)".contains("cluster name 'not a name!'"), "\(error)")
        }
    }
}
