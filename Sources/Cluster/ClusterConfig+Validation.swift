import FluxCore
import Foundation
import NodeSupport

/// What a config must satisfy, each rule with an error a person can act on: the line of the key when
/// the file has it. ``topology(runDirectory:transportOverride:basePortOverride:apps:)`` applies them in
/// order as it lays out the endpoints.
extension ClusterConfig {
    /// An integer key's value as the config gives it (nil: left out), checked against the key's range:
    /// the error names its line (in the `index`-th entry of an array of tables).
    func checked(_ setting: Setting<Int>, _ configured: Int?, index: Int? = nil) throws -> Int? {
        guard let configured else { return nil }
        if let problem = setting.problem(configured) {
            throw error(problem, key: setting.key, table: setting.table.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), storeIndex: index)
        }
        return configured
    }

    /// Every integer key of a one-of table in its range, those without a rule of their own included:
    /// checked after those rules, so that a key's own words come first.
    func checkRanges(_ values: SettingValues) throws {
        for case let setting as Setting<Int> in Settings.all { _ = try checked(setting, values[setting]) }
    }

    /// `port` (a node's port, or `metrics` its metrics port) unless out of `setting`'s range: "port 0 of
    /// store 'todo' is not between 1 and 65000".
    func checkPort(_ setting: Setting<Int>, _ port: Int?, of name: String, index: Int?) throws {
        guard let port, !setting.allows(port) else { return }
        let table = setting.table.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let problem =
            setting.key == "port"
            ? "port \(port) of \(name) is not between \(setting.bounds.lowerBound) and \(setting.bounds.upperBound)"
            : "\(setting.key) \(port) of \(name) is not a port"
        throw error(problem, key: setting.key, table: table, storeIndex: index)
    }

    /// The transport: `override` (a command's flag), else the config's, else ipc.
    func transport(override: Topology.Transport?) throws -> Topology.Transport {
        let transportName = override?.rawValue ?? Settings.Cluster.transport.value(cluster?.transport)
        guard let transport = Topology.Transport(rawValue: transportName), transport != .inproc else {
            throw ClusterError("transport '\(transportName)' is not one of: ipc, tcp")
        }
        return transport
    }

    /// The `[[store]]` entries: at least one, each named with letters, digits, '-' and '_'. With `apps`
    /// (the apps of the binary that will run the nodes), every store's app must be one of them and
    /// their dependencies must be met. At most one store per app runs its effects.
    func checkedStores(apps: [any AnyApp]?) throws -> [StoreSection] {
        let stores = self.stores ?? []
        guard !stores.isEmpty else {
            throw ClusterError(
                "the config has no [[store]] entries: a cluster runs at least one store; add one, such as [[store]] with name = \"counter\" (docs/reference/config.md lists its keys)"
            )
        }
        for entry in stores {
            let app = entry.app ?? entry.name
            if let apps, !apps.contains(where: { $0.name == app }) {
                throw ClusterError("store '\(entry.name)': unknown app '\(app)' (known apps: \(apps.map(\.name).joined(separator: ", ")))")
            }
            guard NodeName.isValid(entry.name) else {
                throw ClusterError("store name '\(entry.name)' must be \(NodeName.rule)")
            }
        }
        if let apps {
            do {
                try DependencyGraph.check(stores.compactMap { entry in apps.first { $0.name == entry.app ?? entry.name } })
            } catch {
                throw ClusterError(error.reason)
            }
        }
        var effectsOwners: [String: String] = [:]
        for entry in stores where Settings.Store.effects.value(entry.effects) {
            let app = entry.app ?? entry.name
            if let owner = effectsOwners[app] {
                throw ClusterError(
                    "stores '\(owner)' and '\(entry.name)' both run app '\(app)' with effects, so every follow-up action would be sent twice; set effects = false on the replica"
                )
            }
            effectsOwners[app] = entry.name
        }
        return stores
    }

    /// `[cluster]`'s queue limit and reach: a host beyond loopback needs allow_remote, and allow_remote
    /// needs `[security]`.
    func checkCluster(transport: Topology.Transport) throws {
        _ = try checked(Settings.Cluster.highWaterMark, cluster?.highWaterMark)
        let host = Settings.Cluster.host.value(cluster?.host)
        if cluster?.allowRemote == true, security == nil {
            throw error(
                "allow_remote = true needs a [security] section: a cluster reachable from other hosts must authenticate and encrypt with CURVE (make keys with `\(StandardOutput.programName) keygen`)",
                key: "allow_remote", table: "cluster")
        }
        if transport == .tcp && !isLoopbackHost(host) && cluster?.allowRemote != true {
            throw ClusterError(
                "host \(host) is not a loopback address: set allow_remote = true in [cluster] to listen on it (and give the cluster a [security] section)"
            )
        }
    }

    /// base_port (default 5570), or a command's `--base-port`: the first of the nodes' consecutive tcp
    /// ports, in the range a node's own `port` takes.
    func basePort(override: Int?) throws -> Int {
        // The range of a node's own port.
        let ports = Settings.Dispatcher.port, range = "between \(ports.bounds.lowerBound) and \(ports.bounds.upperBound)"
        if let override {
            guard ports.allows(override) else { throw ClusterError("--base-port \(override) is not \(range)") }
            return override
        }
        let basePort = Settings.Cluster.basePort.value(cluster?.basePort)
        guard ports.allows(basePort) else { throw error("base_port \(basePort) is not \(range)", key: "base_port", table: "cluster") }
        return basePort
    }

    /// heartbeat_ms.
    func heartbeatMilliseconds() throws -> Int {
        Settings.Cluster.heartbeatMs.value(try checked(Settings.Cluster.heartbeatMs, cluster?.heartbeatMs))
    }

    /// Ports, hosts and metrics ports: in range, tcp-only where they mean tcp, and no two alike.
    func checkPlacement(transport: Topology.Transport, stores: [StoreSection]) throws {
        var metricsPorts: [Int: String] = [:]
        func checkNode<Node: NodePlacement>(_ name: String, _ node: Node, index: Int?) throws {
            let (host, port, listen, metrics, metricsListen, table) = (
                node.host, node.port, node.listen, node.metricsPort, node.metricsListen, Node.table
            )
            try checkPort(Node.portSetting, port, of: name, index: index)
            if transport != .tcp, host != nil || port != nil || listen != nil {
                throw error(
                    "\(name) sets host, port or listen, which only mean something with transport = \"tcp\"",
                    key: host != nil ? "host" : port != nil ? "port" : "listen", table: table, storeIndex: index)
            }
            if let host, !isLoopbackHost(host), cluster?.allowRemote != true {
                throw error(
                    "\(name)'s host \(host) is not a loopback address: set allow_remote = true in [cluster] (and give the cluster a [security] section)",
                    key: "host", table: table, storeIndex: index)
            }
            if let listen, !isLoopbackHost(listen), cluster?.allowRemote != true {
                throw error(
                    "\(name)'s listen address \(listen) is not a loopback address: set allow_remote = true in [cluster] (and give the cluster a [security] section)",
                    key: "listen", table: table, storeIndex: index)
            }
            if let metricsListen, !isLoopbackHost(metricsListen), cluster?.allowRemote != true {
                throw error(
                    "\(name)'s metrics_listen \(metricsListen) is not a loopback address: metrics are plain HTTP; set allow_remote = true in [cluster] to serve them beyond this host",
                    key: "metrics_listen", table: table, storeIndex: index)
            }
            if metricsListen != nil, metrics == nil {
                throw error("\(name) sets metrics_listen without metrics_port", key: "metrics_listen", table: table, storeIndex: index)
            }
            if let metrics {
                try checkPort(Node.metricsPortSetting, metrics, of: name, index: index)
                // Nodes on different hosts may share a metrics port; on one host they may not.
                let key = metrics
                if let other = metricsPorts[key], (host ?? cluster?.host) == nil || transport != .tcp {
                    throw error("\(name) and \(other) both use metrics_port \(metrics)", key: "metrics_port", table: table, storeIndex: index)
                }
                metricsPorts[key] = name
            }
        }
        if let dispatcher { try checkNode("the dispatcher", dispatcher, index: nil) }
        for (index, entry) in (ha == nil ? [] : dispatchers ?? []).enumerated() { try checkNode("dispatcher '\(entry.name)'", entry, index: index) }
        for (index, entry) in stores.enumerated() { try checkNode("store '\(entry.name)'", entry, index: index) }
    }

    /// The environment of the `index`-th store: nil (live), "live" or "mock".
    func environment(of entry: StoreSection, index: Int) throws -> String? {
        guard let environment = entry.environment else { return nil }
        guard ["live", "mock"].contains(environment) else {
            throw error(
                "environment '\(environment)' of store '\(entry.name)' is not one of: live, mock", key: "environment", table: "store",
                storeIndex: index)
        }
        return environment
    }

    /// timeout_ms: nil (the topology's default), or in its range and above the heartbeat.
    func timeoutMilliseconds(heartbeat: Int) throws -> Int? {
        guard let timeout = cluster?.timeoutMs else { return nil }
        guard Settings.Cluster.timeoutMs.allows(timeout), timeout > heartbeat else {
            throw error("timeout_ms must be between 100 and 600000 and above heartbeat_ms", key: "timeout_ms", table: "cluster")
        }
        return timeout
    }

    /// `[restart]`, with its keys' defaults for those it leaves out.
    func restartPolicy() throws -> Topology.RestartPolicy? {
        guard let restart else { return nil }
        let max = Settings.Restart.maxRestarts.value(try checked(Settings.Restart.maxRestarts, restart.maxRestarts))
        let window = Settings.Restart.windowS.value(try checked(Settings.Restart.windowS, restart.windowS))
        return .init(maxRestarts: max, windowSeconds: window)
    }

    /// queue_mb, in bytes (nil: the nodes' default).
    func queueBytes() throws -> Int? {
        try checked(Settings.Cluster.queueMb, cluster?.queueMb).map { $0 << 20 }
    }

    /// The codec nodes write (nil: the default, binary).
    func codec() throws -> WireCodec.Format? {
        guard let name = cluster?.codec else { return nil }
        guard let codec = WireCodec.Format(rawValue: name) else {
            throw error("codec '\(name)' is not one of: binary, json", key: "codec", table: "cluster")
        }
        return codec
    }

    /// `[limits]`: a client's rate, and payload sizes that fit a message the nodes receive.
    func intakeLimits() throws -> Topology.Limits? {
        guard let limits else { return nil }
        _ = try checked(Settings.Limits.clientRate, limits.clientRate)
        let ceiling = Settings.Limits.maxPayloadBytes.bounds.upperBound
        if let max = limits.maxPayloadBytes, !Settings.Limits.maxPayloadBytes.allows(max) {
            throw error(
                max < 1
                    ? "max_payload_bytes must be at least 1"
                    : "max_payload_bytes \(max) is over \(ceiling): nodes receive messages of at most 16 MiB, and an action "
                        + "must fit one with its headers around it",
                key: "max_payload_bytes", table: "limits")
        }
        for (type, max) in (limits.payload ?? [:]).sorted(by: { $0.key < $1.key }) where !Settings.Limits.payload.allows(max) {
            throw error(
                "the payload limit of \(type), \(max), is \(max < 1 ? "below 1" : "over \(ceiling) (the 16 MiB receive limit less room for headers)")",
                key: "payload", table: "limits")
        }
        return .init(clientRate: limits.clientRate, maxPayloadBytes: limits.maxPayloadBytes, maxPayloadBytesByType: limits.payload)
    }

    /// `[journal]`'s fsync policy, segment size in bytes and snapshot interval in actions.
    func journalSettings() throws -> (fsync: FsyncPolicy, segmentBytes: Int, snapshotEvery: Int) {
        let fsyncName = journal?.fsync ?? Settings.Journal.fsync.fallback.rawValue
        guard let fsync = FsyncPolicy(rawValue: fsyncName) else {
            throw error("fsync '\(fsyncName)' is not one of: always, batch, none", key: "fsync", table: "journal")
        }
        let segmentMb = Settings.Journal.segmentMb.value(try checked(Settings.Journal.segmentMb, journal?.segmentMb))
        let every = Settings.Journal.snapshotEvery.value(try checked(Settings.Journal.snapshotEvery, journal?.snapshotEvery))
        return (fsync, segmentMb << 20, every)
    }
}
