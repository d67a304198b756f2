import Cluster
import Foundation
import NodeSupport
import Testing

@Suite("[ha] in the cluster config: a dispatcher pair and its etcd")
struct HighAvailabilityConfigTests {
    static let pair = """
        [cluster]
        transport = "tcp"
        heartbeat_ms = 200

        [ha]
        etcd = ["http://10.0.0.5:2379", "http://10.0.0.6:2379"]
        unauthenticated_replication = true

        [[dispatcher]]
        name = "d1"
        host = "127.0.0.1"
        port = 5570
        metrics_port = 9470

        [[dispatcher]]
        name = "d2"
        host = "127.0.0.2"
        port = 5570
        listen = "127.0.0.9"
        journal = "/var/lib/zflux/pair-journal"

        [[store]]
        name = "todo"
        host = "127.0.0.3"
        port = 5580
        """

    /// The topology of `text`, in the run directory /run/zflux, as `cluster check` lays it out (on
    /// loopback addresses: hosts beyond need [security], whose keys would have to exist).
    func topology(_ text: String, transport: Topology.Transport? = nil) throws -> Topology {
        try ClusterConfig.parse(text, source: "ha.toml")
            .topology(runDirectory: "/run/zflux", transportOverride: transport, basePortOverride: nil, apps: nil)
    }

    /// The message `text` is refused with.
    func refusal(_ text: String, transport: Topology.Transport? = nil) -> String {
        do {
            _ = try topology(text, transport: transport)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    @Test("a pair on two hosts: four ports each, its own journal, and clients connect to both")
    func pairOnTwoHosts() throws {
        let topology = try topology(Self.pair)
        let ha = try #require(topology.ha)
        #expect(ha.etcd == ["http://10.0.0.5:2379", "http://10.0.0.6:2379"])
        #expect(ha.leaseMilliseconds == 3000 && ha.replication == "sync" && ha.key == "/zflux/zflux/leader")
        #expect(ha.dispatchers.map(\.name) == ["d1", "d2"])
        let d1 = try #require(ha.member(named: "d1")), d2 = try #require(ha.member(named: "d2"))
        #expect(d1.endpoints.intake == "tcp://127.0.0.1:5570" && d1.endpoints.actions == "tcp://127.0.0.1:5571")
        #expect(d1.endpoints.replay == "tcp://127.0.0.1:5572" && d1.replication == "tcp://127.0.0.1:5573")
        #expect(d2.endpoints.intake == "tcp://127.0.0.2:5570" && d2.replication == "tcp://127.0.0.2:5573")
        #expect(d1.endpoints.metricsPort == 9470 && d1.endpoints.metricsListen == "127.0.0.1" && d1.endpoints.listen == nil)
        #expect(d2.endpoints.listen == "127.0.0.9" && d2.endpoints.bound.intake == "tcp://127.0.0.9:5570" && d2.endpoints.metricsPort == nil)
        #expect(d1.journalDirectory == "/run/zflux/journal/d1" && d2.journalDirectory == "/var/lib/zflux/pair-journal")
        #expect(topology.dispatcher.intake == "tcp://127.0.0.1:5570,tcp://127.0.0.2:5570")
        #expect(Topology.endpointList(topology.dispatcher.replay) == ["tcp://127.0.0.1:5572", "tcp://127.0.0.2:5572"])
        #expect(topology.store(named: "todo")?.state == "tcp://127.0.0.3:5580")
    }

    @Test("on one host: members take four ports each from base_port, stores follow; over ipc, files named after each member")
    func defaults() throws {
        let text = """
            [cluster]
            name = "shop"
            transport = "tcp"
            base_port = 6000
            [journal]
            directory = "/data/journal"
            [ha]
            etcd = ["http://127.0.0.1:2379"]
            lease_ms = 2000
            replication = "async"
            unauthenticated_replication = true
            [[dispatcher]]
            name = "a"
            [[dispatcher]]
            name = "b"
            [[store]]
            name = "todo"
            [[store]]
            name = "counter"
            """
        let tcp = try topology(text)
        let ha = try #require(tcp.ha)
        #expect(ha.key == "/zflux/shop/leader" && ha.leaseMilliseconds == 2000 && ha.replication == "async")
        #expect(ha.dispatchers.map(\.endpoints.intake) == ["tcp://127.0.0.1:6000", "tcp://127.0.0.1:6004"])
        #expect(ha.dispatchers.map(\.replication) == ["tcp://127.0.0.1:6003", "tcp://127.0.0.1:6007"])
        #expect(ha.dispatchers.map(\.journalDirectory) == ["/data/journal/a", "/data/journal/b"])
        #expect(tcp.stores.map(\.state) == ["tcp://127.0.0.1:6008", "tcp://127.0.0.1:6010"])

        let ipc = try topology(text.replacingOccurrences(of: "\"tcp\"", with: "\"ipc\"").replacingOccurrences(of: "base_port = 6000\n", with: ""))
        let members = try #require(ipc.ha).dispatchers
        #expect(members.map(\.endpoints.intake) == ["ipc:///run/zflux/dispatcher-a-intake.sock", "ipc:///run/zflux/dispatcher-b-intake.sock"])
        #expect(members.map(\.replication) == ["ipc:///run/zflux/dispatcher-a-replication.sock", "ipc:///run/zflux/dispatcher-b-replication.sock"])
        #expect(ipc.ipcPaths.contains("/run/zflux/dispatcher-b-replication.sock"))
        #expect(ipc.dispatcher.intake == "ipc:///run/zflux/dispatcher-a-intake.sock,ipc:///run/zflux/dispatcher-b-intake.sock")
    }

    @Test("a config with [ha] written by code reads back the same, [[dispatcher]] and all")
    func roundTrip() throws {
        let config = ClusterConfig(
            cluster: .init(transport: "ipc"), stores: [.init(name: "todo")], ha: .init(etcd: ["http://127.0.0.1:2379"], leaseMs: 4000),
            dispatchers: [.init(name: "d1"), .init(name: "d2", journal: "j2")])
        let text = try config.tomlText()
        #expect(text.contains("[[dispatcher]]"))
        let read = try ClusterConfig.parse(text, source: "written")
        #expect(read.ha == config.ha && read.dispatchers == config.dispatchers && read.dispatcher == nil)
        let single = try ClusterConfig.parse("[dispatcher]\nmetrics_port = 9470\n[[store]]\nname = \"todo\"\n", source: "one")
        #expect(single.dispatcher?.metricsPort == 9470 && single.dispatchers == nil && single.ha == nil)
    }

    @Test("every mistake is refused with its line and what to do")
    func errors() {
        let pair = Self.pair
        let cases: [(String, String)] = [
            // [ha] and [[dispatcher]] come together, exactly two.
            (
                "[ha]\netcd = [\"http://127.0.0.1:2379\"]\n[[store]]\nname = \"todo\"\n",
                "ha.toml:1: [ha] needs exactly two [[dispatcher]] entries, a leader and a standby (the config has 0)"
            ),
            (
                "[ha]\netcd = [\"http://127.0.0.1:2379\"]\n[[dispatcher]]\nname = \"d1\"\n[[store]]\nname = \"todo\"\n",
                "(the config has 1)"
            ),
            (
                "[ha]\netcd = [\"http://127.0.0.1:2379\"]\n[[dispatcher]]\nname = \"d1\"\n[[dispatcher]]\nname = \"d2\"\n[[dispatcher]]\nname = \"d3\"\n[[store]]\nname = \"todo\"\n",
                "(the config has 3)"
            ),
            (
                "[ha]\netcd = [\"http://127.0.0.1:2379\"]\n[dispatcher]\nmetrics_port = 9470\n[[store]]\nname = \"todo\"\n",
                "ha.toml:3: with [ha], list the dispatchers as two [[dispatcher]] entries"
            ),
            (
                "[[dispatcher]]\nname = \"d1\"\n[[dispatcher]]\nname = \"d2\"\n[[store]]\nname = \"todo\"\n",
                "ha.toml:1: [[dispatcher]] entries describe a dispatcher pair and need an [ha] section"
            ),
            (pair.replacingOccurrences(of: "name = \"d2\"", with: "name = \"d1\""), "ha.toml:16: two [[dispatcher]] entries are named 'd1'"),
            (pair.replacingOccurrences(of: "name = \"d2\"", with: "name = \"-d2\""), "ha.toml:16: dispatcher name '-d2' must be 1–64 ASCII letters"),
            // etcd: required, non-empty, http URLs (the client speaks plain HTTP to etcd's gateway).
            (pair.replacingOccurrences(of: "etcd = [\"http://10.0.0.5:2379\", \"http://10.0.0.6:2379\"]", with: ""), "'ha.etcd' is missing"),
            (
                pair.replacingOccurrences(of: "[\"http://10.0.0.5:2379\", \"http://10.0.0.6:2379\"]", with: "[]"),
                "ha.toml:6: [ha] etcd lists no endpoint"
            ),
            (
                pair.replacingOccurrences(of: "http://10.0.0.6:2379", with: "10.0.0.6:2379"),
                "ha.toml:6: etcd endpoint '10.0.0.6:2379' is not an http URL"
            ),
            (pair.replacingOccurrences(of: "http://10.0.0.6", with: "grpc://10.0.0.6"), "is not an http URL"),
            // A wrong type inside a plain table's array names its line too.
            (
                pair.replacingOccurrences(of: "\"http://10.0.0.6:2379\"", with: "1"),
                "ha.toml:6: 'ha.etcd[2]' takes a string in quotes, not a number (write it in quotes)"
            ),
            (
                pair.replacingOccurrences(of: "http://10.0.0.6", with: "https://10.0.0.6"),
                "ha.toml:6: etcd endpoint 'https://10.0.0.6:2379': zflux talks plain HTTP"
            ),
            // The lease, the replication mode, the key.
            (
                pair.replacingOccurrences(of: "[ha]\n", with: "[ha]\nlease_ms = 1000\n"),
                "ha.toml:6: lease_ms 1000 is below 2000: etcd's shortest lease is 2 seconds"
            ),
            (pair.replacingOccurrences(of: "[ha]\n", with: "[ha]\nlease_ms = 3600000\n"), "ha.toml:6: lease_ms 3600000 is over 600000"),
            (
                pair.replacingOccurrences(of: "[ha]\n", with: "[ha]\nreplication = \"eventual\"\n"),
                "ha.toml:6: replication 'eventual' is not one of: sync"
            ),
            (
                pair.replacingOccurrences(of: "[ha]\n", with: "[ha]\nkey = \"leader\"\n"),
                "ha.toml:6: key 'leader' must be an etcd key starting with '/'"
            ),
            (pair.replacingOccurrences(of: "[cluster]\n", with: "[cluster]\nname = \"a b\"\n"), "ha.toml:2: cluster name 'a b' must be"),
            (pair.replacingOccurrences(of: "[ha]\n", with: "[ha]\nleader = \"d1\"\n"), "ha.toml:6: unknown key 'leader' in [ha]"),
            (pair.replacingOccurrences(of: "journal = ", with: "jornal = "), "ha.toml:20: unknown key 'jornal' in [[dispatcher]]"),
            // Where they listen.
            (
                pair.replacingOccurrences(of: "host = \"127.0.0.2\"", with: "host = \"127.0.0.1\""),
                "ha.toml:18: dispatchers 'd1' and 'd2' would both listen on tcp://127.0.0.1:5570"
            ),
            (
                pair.replacingOccurrences(of: "host = \"127.0.0.2\"\nport = 5570", with: "host = \"127.0.0.1\"\nport = 5573"),
                "dispatchers 'd1' and 'd2' would both listen on tcp://127.0.0.1:5573"
            ),
            (
                pair.replacingOccurrences(of: "host = \"127.0.0.3\"", with: "host = \"127.0.0.2\"").replacingOccurrences(of: "5580", with: "5572"),
                "would both listen on tcp://127.0.0.2:5572"
            ),
            (
                pair.replacingOccurrences(of: "host = \"127.0.0.2\"\nport = 5570", with: "host = \"127.0.0.1\"\nport = 5600")
                    .replacingOccurrences(of: "journal = \"/var/lib/zflux/pair-journal\"", with: "journal = \"journal/d1\""),
                "ha.toml:20: dispatchers 'd1' and 'd2' would share the journal /run/zflux/journal/d1 on 127.0.0.1"
            ),
            (
                pair.replacingOccurrences(of: "transport = \"tcp\"", with: "transport = \"ipc\""),
                "ha.toml:11: dispatcher 'd1' is on host 127.0.0.1, but with transport = \"ipc\" every node runs on this host"
            ),
            (
                pair.replacingOccurrences(of: "127.0.0.1", with: "10.0.0.1"),
                "ha.toml:11: dispatcher 'd1''s host 10.0.0.1 is not a loopback address: set allow_remote = true"
            ),
            (
                pair.replacingOccurrences(of: "port = 5570\nmetrics_port", with: "port = 70000\nmetrics_port"),
                "ha.toml:12: port 70000 of dispatcher 'd1'"
            ),
        ]
        for (text, expected) in cases {
            let message = refusal(text)
            #expect(message.contains(expected), "expected \(expected), got: \(message)")
        }
        // A flag that overrides the transport meets the same rule.
        #expect(refusal(pair, transport: .ipc).contains("with transport = \"ipc\" every node runs on this host"))
    }

    @Test(
        "under [security] each member of a tcp pair needs its own key: without one the config is refused and says how to make it; with them, each member's public key is in the topology, read from its .pub file"
    )
    func memberKeys() throws {
        let directory = NSTemporaryDirectory() + "zflux-member-keys-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["server", "client", "d1", "d2"] { _ = try KeyPair.generate(name: name, directory: directory + "/keys") }
        try "".write(toFile: directory + "/keys/authorized_keys", atomically: true, encoding: .utf8)
        let secured =
            Self.pair.replacingOccurrences(of: "unauthenticated_replication = true\n", with: "") + """

                [security]
                server_key = "keys/server.key"
                client_key = "keys/client.key"
                authorized_keys = "keys/authorized_keys"
                """
        func load(_ text: String) throws -> Topology {
            try text.write(toFile: directory + "/cluster.toml", atomically: true, encoding: .utf8)
            return try ClusterConfig.load(path: directory + "/cluster.toml")
                .topology(runDirectory: "/run/zflux", transportOverride: nil, basePortOverride: nil, apps: nil)
        }
        func refusal(_ text: String) -> String {
            do {
                _ = try load(text)
                return "accepted"
            } catch { return "\(error)" }
        }
        let none = refusal(secured)
        #expect(
            none.contains("'d1' and 'd2' have none") && none.contains("zflux keygen d1 --dir keys") && none.contains("zflux keygen d2 --dir keys"),
            "\(none)")
        let one = secured.replacingOccurrences(of: "name = \"d1\"\n", with: "name = \"d1\"\nkey = \"keys/d1.key\"\n")
        #expect(refusal(one).contains("'d2' has none"), "\(refusal(one))")
        let both = one.replacingOccurrences(of: "name = \"d2\"\n", with: "name = \"d2\"\nkey = \"keys/d2.key\"\n")
        let ha = try #require(try load(both).ha)
        for name in ["d1", "d2"] {
            let member = try #require(ha.member(named: name))
            #expect(member.keyFile == directory + "/keys/\(name).key")
            #expect(member.publicKey == (try KeyPair.load(directory + "/keys/\(name).key")).publicKey)
        }
        // A host that runs only d1 has d2's public half alone: that is enough.
        try FileManager.default.removeItem(atPath: directory + "/keys/d2.key")
        #expect(try load(both).ha?.member(named: "d2")?.publicKey == ha.member(named: "d2")?.publicKey)
        // A member key without [security] means nothing, and is refused rather than ignored.
        let unsecured = both.components(separatedBy: "[security]")[0] + "\n"
        #expect(refusal(unsecured).contains("no [security] section"), "\(refusal(unsecured))")
    }
}
