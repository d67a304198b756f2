import FluxCore
import Foundation
import NodeSupport

/// `[ha]` and its `[[dispatcher]]` entries: a dispatcher pair, and the etcd that decides which of them
/// leads. Each member is laid out like the single dispatcher (``Topology/make``): intake on its port,
/// actions and replay on the next two, and its replication endpoint on the third; over ipc, socket
/// files named after it in the run directory.
extension ClusterConfig {
    /// `[ha]`'s lease when it names none, in milliseconds (``Settings/HighAvailability/leaseMs``).
    public static let defaultLeaseMilliseconds = Settings.HighAvailability.leaseMs.fallback

    /// `[ha]` comes with exactly two `[[dispatcher]]` entries and `[[dispatcher]]` only with `[ha]`;
    /// the names follow ``NodeName`` and differ.
    func checkPairTables(transport: Topology.Transport) throws {
        guard ha != nil else {
            if dispatchers?.isEmpty == false {
                throw error(
                    "[[dispatcher]] entries describe a dispatcher pair and need an [ha] section (etcd = [\"http://host:2379\"], the etcd "
                        + "that picks the leader); for one dispatcher write a [dispatcher] table instead",
                    table: "dispatcher", storeIndex: 0)
            }
            return
        }
        if dispatcher != nil {
            throw error(
                "with [ha], list the dispatchers as two [[dispatcher]] entries (each with a name), not one [dispatcher] table",
                table: "dispatcher")
        }
        let members = dispatchers ?? []
        // Exactly two: a standby follows one leader, and a third member could not take part in sync
        // replication (each hello would go to whichever peer's connection came up first).
        guard members.count == 2 else {
            throw error(
                "[ha] needs exactly two [[dispatcher]] entries, a leader and a standby (the config has \(members.count)); "
                    + "give each a name, and over tcp its host and port",
                table: "ha")
        }
        var seen = Set<String>()
        for (index, member) in members.enumerated() {
            guard NodeName.isValid(member.name) else {
                throw error("dispatcher name '\(member.name)' must be \(NodeName.rule)", key: "name", table: "dispatcher", storeIndex: index)
            }
            guard seen.insert(member.name).inserted else {
                throw error(
                    "two [[dispatcher]] entries are named '\(member.name)': each member needs its own name (`\(StandardOutput.programName) dispatcher --node NAME` runs it)",
                    key: "name", table: "dispatcher", storeIndex: index)
            }
            if transport != .tcp, let host = member.host {
                throw error(
                    "dispatcher '\(member.name)' is on host \(host), but with transport = \"ipc\" every node runs on this host: "
                        + "set transport = \"tcp\" in [cluster] for dispatchers on other hosts",
                    key: "host", table: "dispatcher", storeIndex: index)
            }
        }
    }

    /// `[ha]`'s default key: the cluster's name (or zflux's own) in zflux's namespace of etcd.
    package static func leaderKey(cluster: String?) -> String { "/zflux/\(cluster ?? "zflux")/leader" }

    /// `[cluster]`'s name, which names `[ha]`'s default key.
    func clusterName() throws -> String? {
        guard let name = cluster?.name else { return nil }
        guard NodeName.isValid(name) else { throw error("cluster name '\(name)' must be \(NodeName.rule)", key: "name", table: "cluster") }
        return name
    }

    /// `[ha]`'s values, checked, with their defaults; the members are laid out by ``pairMembers``.
    func highAvailabilitySettings() throws -> (etcd: [String], leaseMilliseconds: Int, replication: String, key: String)? {
        guard let ha else { return nil }
        guard !ha.etcd.isEmpty else {
            throw error("[ha] etcd lists no endpoint: name etcd's client URLs, e.g. etcd = [\"http://10.0.0.5:2379\"]", key: "etcd", table: "ha")
        }
        for endpoint in ha.etcd {
            if endpoint.lowercased().hasPrefix("https://") {
                throw error(
                    "etcd endpoint '\(endpoint)': zflux talks plain HTTP to etcd's gateway; give its http:// URL on the cluster's own network, "
                        + "or a local TLS proxy's (docs/OPERATIONS.md, \"etcd\")",
                    key: "etcd", table: "ha")
            }
            guard let url = URLComponents(string: endpoint), url.scheme == "http", url.host?.isEmpty == false else {
                throw error("etcd endpoint '\(endpoint)' is not an http URL such as http://10.0.0.5:2379", key: "etcd", table: "ha")
            }
        }
        // etcd grants leases of whole seconds, at least 2.
        let leases = Settings.HighAvailability.leaseMs, lease = leases.value(ha.leaseMs)
        guard leases.allows(lease) else {
            throw error(
                lease < leases.bounds.lowerBound
                    ? "lease_ms \(lease) is below \(leases.bounds.lowerBound): etcd's shortest lease is 2 seconds"
                    : "lease_ms \(lease) is over \(leases.bounds.upperBound): the standby would wait that long for a dead leader",
                key: "lease_ms", table: "ha")
        }
        let replication = Settings.HighAvailability.replication.value(ha.replication)
        guard ["sync", "async"].contains(replication) else {
            throw error(
                "replication '\(replication)' is not one of: sync (an ACK waits for the standby's journal too), async", key: "replication",
                table: "ha")
        }
        let key = try ha.key ?? ClusterConfig.leaderKey(cluster: clusterName())
        guard key.hasPrefix("/"), key.count > 1, !key.contains(where: \.isWhitespace) else {
            throw error("key '\(key)' must be an etcd key starting with '/' and holding no spaces, e.g. /zflux/shop/leader", key: "key", table: "ha")
        }
        return (ha.etcd, lease, replication, key)
    }

    /// Where each member listens and keeps its journal, and the port the stores start from when they
    /// name none (past the last member's four). Over ipc every member runs on this host.
    func pairMembers(
        transport: Topology.Transport, runDirectory: String, host: String, basePort: Int, journalDirectory: String
    ) throws -> (members: [Topology.HighAvailability.Member], nextPort: Int) {
        var port = basePort
        var members: [Topology.HighAvailability.Member] = []
        for entry in dispatchers ?? [] {
            if let first = entry.port { port = first }
            let memberHost = entry.host ?? host
            func endpoint(_ part: String) throws -> String {
                guard transport == .ipc else {
                    defer { port += 1 }
                    return "tcp://\(memberHost.contains(":") ? "[\(memberHost)]" : memberHost):\(port)"
                }
                let path = (runDirectory as NSString).appendingPathComponent("dispatcher-\(entry.name)-\(part).sock")
                // sockaddr_un holds 107 bytes of path, as Topology.make checks for the other nodes.
                guard path.utf8.count <= 107 else {
                    throw ClusterError("the ipc socket path \(path) is longer than 107 bytes; choose a shorter --run-dir")
                }
                return "ipc://\(path)"
            }
            var endpoints = Topology.DispatcherEndpoints(
                intake: try endpoint("intake"), actions: try endpoint("actions"), replay: try endpoint("replay"))
            entry.bind(&endpoints)
            let replication = try endpoint("replication")
            guard port <= 65_536 else { throw ClusterError("dispatcher '\(entry.name)''s ports run past 65535; choose a lower port") }
            members.append(
                .init(
                    name: entry.name, endpoints: endpoints, replication: replication,
                    journalDirectory: ClusterConfig.resolve(entry.journal ?? journalDirectory + "/" + entry.name, against: runDirectory)))
        }
        for (index, entry) in (dispatchers ?? []).enumerated() {
            guard let key = entry.key else { continue }
            guard security != nil else {
                throw error(
                    "dispatcher '\(entry.name)' names a key, but the config has no [security] section: member keys are used under CURVE only",
                    key: "key", table: "dispatcher", storeIndex: index)
            }
            let file = ClusterConfig.resolve(key, against: baseDirectory ?? ".")
            members[index].keyFile = file
            do {
                members[index].publicKey = try ClusterConfig.publicKey(keyFile: file, whose: "this member's")
            } catch let problem as ClusterError {
                throw error(
                    "dispatcher '\(entry.name)''s key: \(problem.message) (key paths are relative to this file)", key: "key", table: "dispatcher",
                    storeIndex: index)
            }
        }
        let keyless = (dispatchers ?? []).indices.filter { dispatchers?[$0].key == nil }
        if security != nil, transport == .tcp, let index = keyless.first {
            let names = keyless.map { members[$0].name }
            throw error(
                "under [security] each member of the pair needs a key of its own, and \(names.map { "'\($0)'" }.joined(separator: " and ")) "
                    + "\(names.count == 1 ? "has" : "have") none: a member's replication port admits its partner's key alone, never a "
                    + "client's (a client's key could otherwise follow the leader, read every action and lose acknowledged ones). Make "
                    + "\(names.count == 1 ? "it" : "them") with "
                    + names.map { "`\(StandardOutput.programName) keygen \($0) --dir keys`" }.joined(separator: " and ")
                    + ", and add to each [[dispatcher]] entry its key, e.g. key = \"keys/\(names[0]).key\" (paths are relative to this file)",
                table: "dispatcher", storeIndex: index)
        }
        try checkMembersApart(members, transport: transport, host: host)
        return (members, port)
    }

    /// A key pair's public half: from NAME.pub beside its key file when there is one (a host that runs
    /// only the other member, or only clients, needs no more), else from the key file itself. `whose`
    /// names the key in the error ("this member's").
    static func publicKey(keyFile: String, whose: String) throws -> String {
        let publicFile = (keyFile.hasSuffix(".key") ? String(keyFile.dropLast(4)) : keyFile) + ".pub"
        if let text = try? String(contentsOfFile: publicFile, encoding: .utf8) {
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter {
                !$0.isEmpty && !$0.hasPrefix("#")
            }
            guard lines.count == 1, KeyPair.isPublicKey(lines[0]) else {
                throw ClusterError("\(publicFile) does not hold one public key (make the pair with `\(StandardOutput.programName) keygen`)")
            }
            return lines[0]
        }
        do {
            return try KeyPair.load(keyFile).publicKey
        } catch let error as NodeError {
            throw ClusterError("neither \(publicFile) nor \(keyFile) gives \(whose) public key: \(error.message)")
        }
    }

    /// No store listens where a member of the pair does.
    func checkStoresApart(from members: [Topology.HighAvailability.Member], stores: [Topology.StoreEndpoints]) throws {
        for member in members {
            let taken = Set([member.endpoints.intake, member.endpoints.actions, member.endpoints.replay, member.replication])
            for (index, store) in stores.enumerated() {
                for endpoint in [store.state, store.snapshot] where taken.contains(endpoint) {
                    throw error(
                        "store '\(store.name)' and dispatcher '\(member.name)' would both listen on \(endpoint): check their ports "
                            + "(a dispatcher of the pair takes four: intake, actions, replay, replication)",
                        key: "port", table: "store", storeIndex: index)
                }
            }
        }
    }

    /// Members on one host must not share an endpoint, a journal or a metrics port.
    func checkMembersApart(_ members: [Topology.HighAvailability.Member], transport: Topology.Transport, host: String) throws {
        var endpoints: [String: String] = [:], journals: [String: String] = [:], metrics: [String: String] = [:]
        for (index, (member, entry)) in zip(members, dispatchers ?? []).enumerated() {
            let memberHost = transport == .tcp ? entry.host ?? host : "this host"
            for endpoint in [member.endpoints.intake, member.endpoints.actions, member.endpoints.replay, member.replication] {
                if let other = endpoints.updateValue(member.name, forKey: endpoint) {
                    throw error(
                        "dispatchers '\(other)' and '\(member.name)' would both listen on \(endpoint): give each its own port "
                            + "(a member takes four: intake, actions, replay, replication)",
                        key: "port", table: "dispatcher", storeIndex: index)
                }
            }
            if let other = journals.updateValue(member.name, forKey: "\(memberHost) \(member.journalDirectory)") {
                throw error(
                    "dispatchers '\(other)' and '\(member.name)' would share the journal \(member.journalDirectory) on \(memberHost): "
                        + "each keeps its own; set journal in one of them",
                    key: "journal", table: "dispatcher", storeIndex: index)
            }
            if let port = entry.metricsPort, let other = metrics.updateValue(member.name, forKey: "\(memberHost) \(port)") {
                throw error(
                    "dispatchers '\(other)' and '\(member.name)' both use metrics_port \(port) on \(memberHost)", key: "metrics_port",
                    table: "dispatcher", storeIndex: index)
            }
        }
    }
}
