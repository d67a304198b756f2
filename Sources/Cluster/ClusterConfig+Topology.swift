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
        let heartbeat = try heartbeatMilliseconds()
        try checkPairTables(transport: transport)
        let pairSettings = try highAvailabilitySettings()
        do {
            let host = cluster?.host ?? "127.0.0.1", basePort = basePortOverride ?? cluster?.basePort ?? 5570
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
                if entry.effects == false { topology.stores[index].runsEffects = false }
                topology.stores[index].listen = entry.listen
                topology.stores[index].metricsPort = entry.metricsPort
                if entry.metricsPort != nil { topology.stores[index].metricsListen = entry.metricsListen ?? "127.0.0.1" }
                topology.stores[index].environment = try environment(of: entry, index: index)
            }
            topology.dispatcher.listen = dispatcher?.listen
            topology.dispatcher.metricsPort = dispatcher?.metricsPort
            if dispatcher?.metricsPort != nil { topology.dispatcher.metricsListen = dispatcher?.metricsListen ?? "127.0.0.1" }
            topology.timeoutMilliseconds = try timeoutMilliseconds(heartbeat: heartbeat)
            topology.restart = try restartPolicy()
            topology.highWaterMark = cluster?.highWaterMark
            topology.queueBytes = try queueBytes()
            topology.codec = try codec()
            topology.limits = try intakeLimits()
            topology.durability = try durability(runDirectory: runDirectory)
            topology.security = try securityFiles()
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
            journalDirectory: ClusterConfig.resolve(journal?.directory ?? RunDirectory.journalName, against: runDirectory),
            fsync: settings.fsync, segmentBytes: settings.segmentBytes,
            snapshotDirectory: ClusterConfig.resolve(journal?.snapshotDirectory ?? RunDirectory.snapshotsName, against: runDirectory),
            snapshotEveryActions: settings.snapshotEvery)
    }

    /// `[security]`'s key files, relative to the config file's directory: both key pairs must load and
    /// the authorized keys file must exist.
    func securityFiles() throws -> Topology.SecurityFiles? {
        guard let security else { return nil }
        let directory = baseDirectory ?? "."
        let serverKeyFile = ClusterConfig.resolve(security.serverKey, against: directory)
        let clientKeyFile = ClusterConfig.resolve(security.clientKey, against: directory)
        let server = try KeyPair.load(serverKeyFile)
        _ = try KeyPair.load(clientKeyFile)
        let authorized = ClusterConfig.resolve(security.authorizedKeys, against: directory)
        guard FileManager.default.fileExists(atPath: authorized) else {
            throw ClusterError("the authorized keys file \(authorized) is missing")
        }
        return .init(
            serverKeyFile: serverKeyFile, serverPublicKey: server.publicKey, clientKeyFile: clientKeyFile, authorizedKeysFile: authorized)
    }

    /// `path` as written in a config: absolute, or relative to `directory`.
    static func resolve(_ path: String, against directory: String) -> String {
        path.hasPrefix("/") ? path : directory + "/" + path
    }
}
