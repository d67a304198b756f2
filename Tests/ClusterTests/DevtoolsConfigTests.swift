import Cluster
import Foundation
import NodeSupport
import Testing

@Suite("[devtools] in the cluster config")
struct DevtoolsConfigTests {
    static func topology(_ section: String, directory: String = "/srv/cluster") throws -> Topology {
        let text = "[[store]]\nname = \"counter\"\n\n[devtools]\n" + section
        // What load(path:) does for a file, without one: the directory relative paths are taken from.
        let path = directory + "/cluster.toml"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return try ClusterConfig.load(path: path).topology(runDirectory: directory + "/run", transportOverride: nil, basePortOverride: nil, apps: nil)
    }

    static func refusal(_ section: String, directory: String) -> String? {
        do {
            _ = try topology(section, directory: directory)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("the three keys are read, the token file taken from the config's directory, and kept in cluster.json's topology")
    func parsed() throws {
        let directory = NSTemporaryDirectory() + "zflux-devtools-config-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let topology = try Self.topology(
            """
            listen = "0.0.0.0:9000"
            token_file = "keys/devtools.token"
            max_connections = 4
            """, directory: directory)
        let expected = Topology.Devtools(listen: "0.0.0.0:9000", tokenFile: directory + "/keys/devtools.token", maxConnections: 4)
        #expect(topology.devtools == expected)
        // An absolute path stays as written; no section, no settings.
        #expect(try Self.topology(#"token_file = "/etc/zflux/token""#, directory: directory).devtools?.tokenFile == "/etc/zflux/token")
        let plain = try ClusterConfig.parse("[[store]]\nname = \"counter\"\n", source: "test")
            .topology(runDirectory: directory + "/run", transportOverride: nil, basePortOverride: nil, apps: nil)
        #expect(plain.devtools == nil)
        // cluster.json round trip: what `zflux devtools` beside the cluster reads.
        let decoded = try JSONDecoder().decode(Topology.self, from: try JSONEncoder().encode(topology))
        #expect(decoded.devtools == expected)
        // A config written in code reads back with its section.
        let config = ClusterConfig(stores: [.init(name: "counter")], devtools: .init(listen: "127.0.0.1:8800", maxConnections: 2))
        #expect(try ClusterConfig.parse(try config.tomlText(), source: "written").devtools == config.devtools)
    }

    @Test(
        "a listen that is not HOST:PORT, one off loopback without token_file, a cap below 1, a key without [security] and an unknown key are refused with their line"
    )
    func refused() throws {
        let directory = NSTemporaryDirectory() + "zflux-devtools-config-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases: [(section: String, says: String)] = [
            (#"listen = "8745""#, "listen '8745' is not HOST:PORT"),
            (#"listen = "127.0.0.1:70000""#, "is not HOST:PORT"),
            (#"listen = "0.0.0.0:8745""#, "listen '0.0.0.0:8745' is not a loopback address: off loopback the devtools need token_file"),
            (#"listen = "10.1.2.3:8745""#, "need token_file"),
            (#"token_file = """#, "token_file is empty"),
            ("max_connections = 0", "max_connections must be between 1 and 10000"),
            ("listn = \"127.0.0.1:8745\"", "unknown key 'listn' in [devtools]"),
            (#"max_connections = "16""#, "takes a whole number"),
            // A name that starts like a loopback address resolves wherever its owner points it.
            (#"listen = "127.evil.example:8745""#, "is not a loopback address"),
            (#"key = "keys/devtools.key""#, "key needs a [security] section"),
        ]
        for (section, says) in cases {
            let refusal = Self.refusal(section, directory: directory)
            #expect(refusal?.contains(says) == true, "\(section): \(refusal ?? "accepted")")
            // The line of the key: [[store]] takes lines 1-2, the section's header 4, the key 5.
            #expect(refusal?.contains("cluster.toml:5:") == true, "\(section): \(refusal ?? "accepted")")
        }
        // Loopback in any spelling needs no token file.
        for listen in ["127.0.0.1:8745", "127.3.4.5:8745", "localhost:0", "[::1]:8745"] {
            #expect(Self.refusal("listen = \"\(listen)\"", directory: directory) == nil, "\(listen)")
        }
        #expect(Self.refusal("listen = \"0.0.0.0:8745\"\ntoken_file = \"t\"", directory: directory) == nil)
    }
}
