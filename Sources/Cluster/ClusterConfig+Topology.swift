import FluxCore
import Foundation
import NodeSupport

/// The endpoint layout: where each node listens, and where the cluster keeps its files.
extension ClusterConfig {
    /// Checks the config and lays out its endpoints. With `apps` (the apps of the binary that will run
    /// the nodes: `cluster up`, `cluster check`, a node), every store's app must be one of them and
    /// their dependencies must be met; a client that only talks to the cluster passes nil, since it
    /// needs no app's types to address one.
    public func topology(
        runDirectory: String, transportOverride: Topology.Transport?, basePortOverride: Int?, apps: [any AnyApp]?
    ) throws -> Topology {
        let transport = try transport(override: transportOverride)
        let stores = try checkedStores(apps: apps)
        try checkCluster(transport: transport)
        // The name follows the one rule for names whether or not a pair's key is made from it.
        _ = try clusterName()
        let heartbeat = try heartbeatMilliseconds()
        try checkPairTables(transport: transport)
        let pairSettings = try highAvailabilitySettings()
        do {
            let host = Settings.Cluster.host.value(cluster?.host), basePort = try basePort(override: basePortOverride)
            try checkPlacement(transport: transport, stores: stores)
            var placement: [String: (host: String?, port: Int?)] = [:]
            if let dispatcher { placement["dispatcher"] = (dispatcher.host, dispatcher.port) }
            for entry in stores { placement[entry.name] = (entry.host, entry.port) }
            let pair = try pairSettings.map { _ in
                try pairMembers(
                    transport: transport, runDirectory: runDirectory, host: host, basePort: basePort,
                    journalDirectory: try durability(runDirectory: runDirectory).journalDirectory)
            }
            if let pair, let first = dispatchers?.first {
                // The single dispatcher's layout, for member one; the stores follow the last member.
                placement["dispatcher"] = (first.host, first.port)
                if let store = stores.first, store.port == nil { placement[store.name] = (store.host, pair.nextPort) }
            }
            var topology = try Topology.make(
                transport: transport, runDirectory: runDirectory, host: host, basePort: basePort,
                stores: stores.map { ($0.name, $0.app ?? $0.name) }, heartbeatMilliseconds: heartbeat, placement: placement)
            for (index, entry) in stores.enumerated() {
                if !Settings.Store.effects.value(entry.effects) { topology.stores[index].runsEffects = false }
                entry.bind(&topology.stores[index])
                topology.stores[index].environment = try environment(of: entry, index: index)
            }
            dispatcher?.bind(&topology.dispatcher)
            topology.timeoutMilliseconds = try timeoutMilliseconds(heartbeat: heartbeat)
            topology.restart = try restartPolicy()
            topology.highWaterMark = cluster?.highWaterMark
            topology.queueBytes = try queueBytes()
            topology.codec = try codec()
            topology.limits = try intakeLimits()
            topology.durability = try durability(runDirectory: runDirectory)
            topology.security = try securityFiles()
            topology.devtools = try devtoolsSettings()
            let values = try SettingValues(config: self)
            try checkRanges(values)
            topology.settings = values
            if pairSettings != nil, transport == .tcp, topology.security == nil, ha?.unauthenticatedReplication != true {
                throw error(
                    "a dispatcher pair over tcp without [security] trusts whoever reaches its ports: any process that connects to a "
                        + "member's replication port can follow it as its standby, read every action and the cluster's client secret, "
                        + "and make the pair lose acknowledged actions. Add [security] (zflux keygen makes the keys), or, on a network "
                        + "where every process is yours, say so in [ha]: unauthenticated_replication = true",
                    table: "ha")
            }
            if let pairSettings, let pair {
                try checkStoresApart(from: pair.members, stores: topology.stores)
                let ha = Topology.HighAvailability(
                    etcd: pairSettings.etcd, leaseMilliseconds: pairSettings.leaseMilliseconds, replication: pairSettings.replication,
                    key: pairSettings.key, dispatchers: pair.members)
                topology.ha = ha
                // Those who connect reach every member; each member binds its own (listen and metrics included).
                topology.dispatcher = ha.joined
            }
            return topology
        } catch let error as NodeError {
            throw ClusterError(error.message)
        }
    }

    /// The journal and the snapshots: in the run directory unless `[journal]` says otherwise.
    func durability(runDirectory: String) throws -> Topology.Durability {
        let settings = try journalSettings()
        return Topology.Durability(
            journalDirectory: ClusterConfig.resolve(Settings.Journal.directory.value(journal?.directory), against: runDirectory),
            fsync: settings.fsync, segmentBytes: settings.segmentBytes,
            snapshotDirectory: ClusterConfig.resolve(Settings.Journal.snapshotDirectory.value(journal?.snapshotDirectory), against: runDirectory),
            snapshotEveryActions: settings.snapshotEvery)
    }

    /// `[security]`'s key files, relative to the config file's directory: the client key pair must
    /// load, the server's public key must be there (its `.pub`, or the key pair where a host has no
    /// `.pub`), and the authorized keys file must exist. Only a node loads the server's secret half, when
    /// it starts: a host that runs only commands and clients needs `server.pub`, never `server.key`.
    func securityFiles() throws -> Topology.SecurityFiles? {
        guard let security else { return nil }
        let directory = baseDirectory ?? "."
        let serverKeyFile = ClusterConfig.resolve(security.serverKey, against: directory)
        let clientKeyFile = ClusterConfig.resolve(security.clientKey, against: directory)
        let serverPublicKey = try ClusterConfig.publicKey(keyFile: serverKeyFile, whose: "the server's")
        // Where the secret half is here too and this user may read it (a node's host), the two must be
        // one pair: a node would refuse to start, and `cluster check` says so first. An operator who
        // may not read server.key runs commands as a client host does.
        if access(serverKeyFile, R_OK) == 0 { _ = try KeyPair.load(serverKeyFile, publicHalf: serverPublicKey) }
        _ = try KeyPair.load(clientKeyFile)
        let authorized = ClusterConfig.resolve(security.authorizedKeys, against: directory)
        guard FileManager.default.fileExists(atPath: authorized) else {
            throw ClusterError("the authorized keys file \(authorized) is missing")
        }
        return .init(
            serverKeyFile: serverKeyFile, serverPublicKey: serverPublicKey, clientKeyFile: clientKeyFile, authorizedKeysFile: authorized)
    }

    /// `path` as written in a config: absolute, or relative to `directory`.
    static func resolve(_ path: String, against directory: String) -> String {
        path.hasPrefix("/") ? path : directory + "/" + path
    }

    /// The range the kernel picks local ports of outgoing connections from (`net.ipv4.ip_local_port_range`),
    /// or nil where it cannot be read.
    package static func ephemeralPorts(path: String = "/proc/sys/net/ipv4/ip_local_port_range") -> ClosedRange<Int>? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1] else { return nil }
        return bounds[0]...bounds[1]
    }

    /// The ports `net.ipv4.ip_local_reserved_ports` keeps out of the ephemeral range (`8080,9000-9010`).
    package static func reservedPorts(path: String = "/proc/sys/net/ipv4/ip_local_reserved_ports") -> [ClosedRange<Int>] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(whereSeparator: { $0 == "," || $0.isWhitespace }).compactMap { part in
            let bounds = part.split(separator: "-").compactMap { Int($0) }
            guard let low = bounds.first, let high = bounds.last, low <= high else { return nil }
            return low...high
        }
    }

    /// Refuses a tcp port a node binds (or a metrics port) inside the ephemeral range, unless
    /// `ip_local_reserved_ports` keeps it out: any outgoing connection on the machine may be given it
    /// first, and a connection to a port nobody has bound yet can even connect to itself (seen: a
    /// standby's own intake port, taken so, failed its bind five times when it won the lease, and the
    /// supervisor stopped the cluster). `cluster check` and `cluster up` call it, on this host's range.
    package static func checkOutsideEphemeralPorts(
        _ topology: Topology, ephemeral: ClosedRange<Int>? = ephemeralPorts(), reserved: [ClosedRange<Int>] = reservedPorts()
    ) throws {
        guard let ephemeral else { return }
        var bound: [(name: String, port: Int)] = []
        func add(_ name: String, _ endpoint: String) {
            for one in Topology.endpointList(endpoint) where one.hasPrefix("tcp://") {
                if let colon = one.lastIndex(of: ":"), let port = Int(one[one.index(after: colon)...]) { bound.append((name, port)) }
            }
        }
        if let ha = topology.ha {
            for member in ha.dispatchers {
                add("dispatcher \(member.name)'s intake", member.endpoints.intake)
                add("dispatcher \(member.name)'s actions", member.endpoints.actions)
                add("dispatcher \(member.name)'s replay", member.endpoints.replay)
                add("dispatcher \(member.name)'s replication", member.replication)
            }
        } else {
            add("the dispatcher's intake", topology.dispatcher.intake)
            add("the dispatcher's actions", topology.dispatcher.actions)
            add("the dispatcher's replay", topology.dispatcher.replay)
        }
        if let metrics = topology.dispatcher.metricsPort { bound.append(("the dispatcher's metrics", metrics)) }
        for store in topology.stores {
            add("store \(store.name)'s state", store.state)
            add("store \(store.name)'s snapshot", store.snapshot)
            if let metrics = store.metricsPort { bound.append(("store \(store.name)'s metrics", metrics)) }
        }
        let exposed = bound.first { port in ephemeral.contains(port.port) && !reserved.contains { $0.contains(port.port) } }
        if let (name, port) = exposed {
            throw ClusterError(
                "port \(port) (\(name)) is inside the range the kernel gives outgoing connections "
                    + "(net.ipv4.ip_local_port_range \(ephemeral.lowerBound)–\(ephemeral.upperBound)): another connection may take it "
                    + "before the node binds it; choose base_port and ports below \(ephemeral.lowerBound), "
                    + "or keep them out of that range with net.ipv4.ip_local_reserved_ports")
        }
    }
}
