import FluxCore
import Foundation
import NodeSupport
import TOMLKit

/// The cluster config file (TOML). With no file, the binary's default is used (``defaultText(apps:)``).
///
/// ```toml
/// [cluster]
/// transport = "ipc"        # ipc (socket files in the run directory) or tcp
/// host = "127.0.0.1"       # tcp only: the address every node binds and connects to
/// allow_remote = false     # a host or listen address that is not loopback needs this (and [security])
/// base_port = 5570         # tcp only: first of the consecutive ports the nodes use
/// heartbeat_ms = 200
/// high_water_mark = 100000 # messages a publisher queues for a slow subscriber before dropping
/// queue_mb = 1024          # and at most this much per peer: high-water marks are lowered to fit
/// codec = "binary"         # what nodes write on the wire: binary (compact) or json (readable); both are read
///
/// [journal]
/// directory = "journal"    # relative to the run directory
/// fsync = "batch"          # always | batch (group commit) | none
/// segment_mb = 64
/// snapshot_directory = "snapshots"
/// snapshot_every = 10000   # actions between store snapshots
///
/// [limits]
/// client_rate = 1000       # actions/s per client; more are NACKed "rate limited" (default: no limit)
/// max_payload_bytes = 65536
/// payload = { "todo.addTodo" = 1024 }   # per action type
///
/// [security]               # CURVE on every tcp socket (make keys with `zflux keygen`)
/// server_key = "keys/server.key"
/// client_key = "keys/client.key"
/// authorized_keys = "keys/authorized_keys"
///
/// [[store]]
/// name = "todo"            # the store's name (views and `zflux state` use it)
/// app = "todo"             # which app it hosts; defaults to the name
/// effects = true           # false for a replica of an app another store already runs effects for
/// environment = "live"     # or "mock": the app's mock environment (instant answers, no network)
/// ```
public struct ClusterConfig: Codable, Equatable, Sendable {
    struct Cluster: Codable, Equatable, Sendable {
        var transport: String?
        var host: String?
        var basePort: Int?
        var heartbeatMs: Int?
        var highWaterMark: Int?
        var queueMb: Int?
        var allowRemote: Bool?
        var codec: String?
        var timeoutMs: Int?

        enum CodingKeys: String, CodingKey {
            case transport, host, codec
            case timeoutMs = "timeout_ms"
            case allowRemote = "allow_remote"
            case basePort = "base_port"
            case heartbeatMs = "heartbeat_ms"
            case highWaterMark = "high_water_mark"
            case queueMb = "queue_mb"
        }
    }

    struct JournalSection: Codable, Equatable, Sendable {
        var directory: String?
        var fsync: String?
        var segmentMb: Int?
        var snapshotDirectory: String?
        var snapshotEvery: Int?

        enum CodingKeys: String, CodingKey {
            case directory, fsync
            case segmentMb = "segment_mb"
            case snapshotDirectory = "snapshot_directory"
            case snapshotEvery = "snapshot_every"
        }
    }

    struct Store: Codable, Equatable, Sendable {
        var name: String
        var app: String?
        /// false for a replica: only one store per app should run the app's effects.
        var effects: Bool?
        var host: String?
        var listen: String?
        var port: Int?
        var metricsPort: Int?
        var metricsListen: String?
        /// "live" (default) or "mock": the app's mock environment.
        var environment: String?

        enum CodingKeys: String, CodingKey {
            case name, app, effects, host, listen, port, environment
            case metricsPort = "metrics_port"
            case metricsListen = "metrics_listen"
        }
    }

    /// Where the dispatcher runs, when the nodes are on several hosts.
    struct DispatcherSection: Codable, Equatable, Sendable {
        var host: String?
        var listen: String?
        var port: Int?
        var metricsPort: Int?
        var metricsListen: String?

        enum CodingKeys: String, CodingKey {
            case host, listen, port
            case metricsPort = "metrics_port"
            case metricsListen = "metrics_listen"
        }
    }

    /// `zflux cluster up`'s restart policy for its nodes.
    struct RestartSection: Codable, Equatable, Sendable {
        var maxRestarts: Int?
        var windowS: Int?

        enum CodingKeys: String, CodingKey {
            case maxRestarts = "max_restarts"
            case windowS = "window_s"
        }
    }

    var cluster: Cluster?
    var dispatcher: DispatcherSection?
    var journal: JournalSection?
    var limits: LimitsSection?
    var security: SecuritySection?
    var restart: RestartSection?
    /// The config file's directory: relative key paths are resolved against it.
    var baseDirectory: String?
    /// The file's text and name, to point errors at their line.
    var text: String?
    var source: String?

    enum CodingKeys: String, CodingKey {
        case cluster, dispatcher, journal, limits, security, restart, store
    }

    /// Every key a config may hold, by table; anything else is refused (a typo must not pass silently).
    static let knownKeys: [String: Set<String>] = [
        "": ["cluster", "dispatcher", "journal", "limits", "security", "restart", "store"],
        "cluster": ["transport", "host", "allow_remote", "base_port", "heartbeat_ms", "timeout_ms", "high_water_mark", "queue_mb", "codec"],
        "dispatcher": ["host", "listen", "port", "metrics_port", "metrics_listen"],
        "journal": ["directory", "fsync", "segment_mb", "snapshot_directory", "snapshot_every"],
        "limits": ["client_rate", "max_payload_bytes", "payload"],
        "security": ["server_key", "client_key", "authorized_keys"],
        "restart": ["max_restarts", "window_s"],
        "store": ["name", "app", "effects", "host", "listen", "port", "metrics_port", "metrics_listen", "environment"],
    ]

    /// "FILE:LINE: message", the line being where `key` is set in `table` (the n-th [[store]] for stores).
    func error(_ message: String, key: String? = nil, table: String? = nil, storeIndex: Int? = nil) -> ClusterError {
        ClusterError(
            "\(source ?? "config"):\(ClusterConfig.line(in: text ?? "", key: key, table: table, storeIndex: storeIndex).map { "\($0): " } ?? " ")\(message)"
        )
    }

    static func line(in text: String, key: String?, table: String?, storeIndex: Int?) -> Int? {
        var current = "", storeCount = -1
        var tableLine: Int?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[[") {
                current = line.trimmingCharacters(in: CharacterSet(charactersIn: "[] "))
                if current == "store" { storeCount += 1 }
            } else if line.hasPrefix("[") {
                current = line.trimmingCharacters(in: CharacterSet(charactersIn: "[] "))
            } else {
                guard current == (table ?? ""), storeIndex == nil || storeIndex == storeCount else { continue }
                if tableLine == nil { tableLine = index }
                if let key, line.hasPrefix(key), line.dropFirst(key.count).trimmingCharacters(in: .whitespaces).hasPrefix("=") {
                    return index + 1
                }
                continue
            }
            if current == (table ?? ""), storeIndex == nil || storeIndex == storeCount, key == nil { return index + 1 }
        }
        return tableLine.map { $0 }
    }

    /// Refuses keys the config format does not have, naming the line.
    func checkKeys() throws {
        guard let text, let table = try? TOMLTable(string: text) else { return }
        func check(_ table: TOMLTable, name: String, storeIndex: Int?) throws {
            let known = ClusterConfig.knownKeys[name] ?? []
            for key in table.keys where !known.contains(key) {
                let place = name.isEmpty ? "at the top level" : (name == "store" ? "in [[store]]" : "in [\(name)]")
                throw error(
                    "unknown key '\(key)' \(place) (known: \(known.sorted().joined(separator: ", ")))",
                    key: key, table: name, storeIndex: storeIndex)
            }
        }
        try check(table, name: "", storeIndex: nil)
        for name in ["cluster", "dispatcher", "journal", "limits", "security", "restart"] {
            if let sub = table[name]?.table { try check(sub, name: name, storeIndex: nil) }
        }
        if let stores = table["store"]?.array {
            for (index, entry) in stores.enumerated() {
                if let sub = entry.table { try check(sub, name: "store", storeIndex: index) }
            }
        }
    }

    struct SecuritySection: Codable, Equatable, Sendable {
        var serverKey: String
        var clientKey: String
        var authorizedKeys: String

        enum CodingKeys: String, CodingKey {
            case serverKey = "server_key"
            case clientKey = "client_key"
            case authorizedKeys = "authorized_keys"
        }
    }

    struct LimitsSection: Codable, Equatable, Sendable {
        var clientRate: Int?
        var maxPayloadBytes: Int?
        var payload: [String: Int]?

        enum CodingKeys: String, CodingKey {
            case clientRate = "client_rate"
            case maxPayloadBytes = "max_payload_bytes"
            case payload
        }
    }
    var store: [Store]?

    /// The config `cluster up` uses without `--config`: a dispatcher and one store per app, named
    /// after it, over ipc.
    public static func defaultText(apps: [String]) -> String {
        var text = """
            # \(apps.isEmpty ? "no apps" : "one store per app"), over ipc
            [cluster]
            transport = "ipc"
            heartbeat_ms = 200

            [journal]
            fsync = "batch"

            """
        for app in apps { text += "\n[[store]]\nname = \"\(app)\"\n" }
        return text
    }

    public static func parse(_ text: String, source: String) throws -> ClusterConfig {
        try checkTableHeaders(text, source: source)
        do {
            var config = try TOMLDecoder().decode(ClusterConfig.self, from: text)
            config.text = text
            config.source = source
            try config.checkKeys()
            return config
        } catch let error as ClusterError {
            throw error
        } catch let error as TOMLParseError {
            throw ClusterError("\(source):\(error.source.begin.line): \(error.description)")
        } catch let error as DecodingError {
            // TOMLKit reports a value of the wrong type as a missing key, so name both possibilities.
            if case .keyNotFound(let key, let context) = error {
                let keys = (context.codingPath + [key]).map { $0.intValue.map { "[\($0 + 1)]" } ?? $0.stringValue }
                let path = keys.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
                    .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
                throw ClusterError("\(source): '\(path)' is missing or has the wrong type")
            }
            throw ClusterError("\(source): \(error.shortDescription)")
        }
    }

    /// toml++ (inside TOMLKit) stops the process with an assertion on a table header whose name starts
    /// with anything but a key character or a quote (`[= "x"]`, `[.a]`), instead of reporting an error.
    /// Found by the config fuzz test; such headers are refused here first, with their line.
    static func checkTableHeaders(_ text: String, source: String) throws {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var rest = line.drop { $0 == " " || $0 == "\t" }
            guard rest.first == "[" else { continue }
            rest = rest.dropFirst()
            if rest.first == "[" { rest = rest.dropFirst() }
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            // An empty name (the line ends after "[" or "[[") aborts toml++ too, so it is refused here.
            guard let first = rest.first, first.isASCII && (first.isLetter || first.isNumber) || "_-\"'[]".contains(first) else {
                throw ClusterError("\(source):\(index + 1): a table name must start with a letter, digit, '_', '-' or a quote")
            }
        }
    }

    /// Reads the config at `path`; without one, parses `defaultText` (the binary's default cluster).
    public static func load(path: String?, defaultText: String = "") throws -> ClusterConfig {
        guard let path else { return try parse(defaultText, source: "the default config") }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ClusterError("cannot read the config file \(path)")
        }
        var config = try parse(text, source: path)
        let absolute = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
        config.baseDirectory = absolute.deletingLastPathComponent().path
        return config
    }

    /// Ports, hosts and metrics ports: in range, tcp-only where they mean tcp, and no two alike.
    func checkPlacement(transport: Topology.Transport, stores: [Store]) throws {
        var metricsPorts: [Int: String] = [:]
        func checkNode(
            _ name: String, host: String?, port: Int?, listen: String?, metrics: Int?, metricsListen: String?, table: String, index: Int?
        ) throws {
            if let port, !(1...65_000).contains(port) {
                throw error("port \(port) of \(name) is not between 1 and 65000", key: "port", table: table, storeIndex: index)
            }
            if transport != .tcp, host != nil || port != nil || listen != nil {
                throw error(
                    "\(name) sets host, port or listen, which only mean something with transport = \"tcp\"",
                    key: host != nil ? "host" : port != nil ? "port" : "listen", table: table, storeIndex: index)
            }
            if let host, !ClusterConfig.isLoopback(host), cluster?.allowRemote != true {
                throw error(
                    "\(name)'s host \(host) is not a loopback address: set allow_remote = true in [cluster] (and give the cluster a [security] section)",
                    key: "host", table: table, storeIndex: index)
            }
            if let listen, !ClusterConfig.isLoopback(listen), cluster?.allowRemote != true {
                throw error(
                    "\(name)'s listen address \(listen) is not a loopback address: set allow_remote = true in [cluster] (and give the cluster a [security] section)",
                    key: "listen", table: table, storeIndex: index)
            }
            if let metricsListen, !ClusterConfig.isLoopback(metricsListen), cluster?.allowRemote != true {
                throw error(
                    "\(name)'s metrics_listen \(metricsListen) is not a loopback address: metrics are plain HTTP; set allow_remote = true in [cluster] to serve them beyond this host",
                    key: "metrics_listen", table: table, storeIndex: index)
            }
            if metricsListen != nil, metrics == nil {
                throw error("\(name) sets metrics_listen without metrics_port", key: "metrics_listen", table: table, storeIndex: index)
            }
            if let metrics {
                guard (1...65_535).contains(metrics) else {
                    throw error("metrics_port \(metrics) of \(name) is not a port", key: "metrics_port", table: table, storeIndex: index)
                }
                // Nodes on different hosts may share a metrics port; on one host they may not.
                let key = metrics
                if let other = metricsPorts[key], (host ?? cluster?.host) == nil || transport != .tcp {
                    throw error("\(name) and \(other) both use metrics_port \(metrics)", key: "metrics_port", table: table, storeIndex: index)
                }
                metricsPorts[key] = name
            }
        }
        if let dispatcher {
            try checkNode(
                "the dispatcher", host: dispatcher.host, port: dispatcher.port, listen: dispatcher.listen, metrics: dispatcher.metricsPort,
                metricsListen: dispatcher.metricsListen, table: "dispatcher", index: nil)
        }
        for (index, entry) in stores.enumerated() {
            try checkNode(
                "store '\(entry.name)'", host: entry.host, port: entry.port, listen: entry.listen, metrics: entry.metricsPort,
                metricsListen: entry.metricsListen, table: "store", index: index)
        }
    }

    /// Whether binding `host` keeps a port on this machine: 0.0.0.0, `*` and `::` are every interface.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || (host.hasPrefix("127.") && host.split(separator: ".").count == 4)
    }

    func durability(runDirectory: String) throws -> Topology.Durability {
        func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : runDirectory + "/" + path }
        let fsyncName = journal?.fsync ?? "batch"
        guard let fsync = FsyncPolicy(rawValue: fsyncName) else {
            throw error("fsync '\(fsyncName)' is not one of: always, batch, none", key: "fsync", table: "journal")
        }
        let segmentMb = journal?.segmentMb ?? 64
        guard (1...4096).contains(segmentMb) else { throw ClusterError("journal segment_mb must be between 1 and 4096") }
        let every = journal?.snapshotEvery ?? 10_000
        guard every >= 1 else { throw ClusterError("journal snapshot_every must be at least 1") }
        return Topology.Durability(
            journalDirectory: resolve(journal?.directory ?? RunDirectory.journalName), fsync: fsync, segmentBytes: segmentMb << 20,
            snapshotDirectory: resolve(journal?.snapshotDirectory ?? RunDirectory.snapshotsName), snapshotEveryActions: every)
    }

    /// Checks the config and lays out its endpoints. With `apps` (the apps of the binary that will run
    /// the nodes: `cluster up`, `cluster check`, a node), every store's app must be one of them and
    /// their dependencies must be met; a client that only talks to the cluster passes nil, since it
    /// needs no app's types to address one.
    public func topology(
        runDirectory: String, transportOverride: Topology.Transport?, basePortOverride: Int?, apps: [any AnyApp]?
    ) throws -> Topology {
        let transportName = transportOverride?.rawValue ?? cluster?.transport ?? "ipc"
        guard let transport = Topology.Transport(rawValue: transportName), transport != .inproc else {
            throw ClusterError("transport '\(transportName)' is not one of: ipc, tcp")
        }
        let stores = store ?? []
        guard !stores.isEmpty else { throw ClusterError("the config has no [[store]] entries") }
        for entry in stores {
            let app = entry.app ?? entry.name
            if let apps, !apps.contains(where: { $0.name == app }) {
                throw ClusterError("store '\(entry.name)': unknown app '\(app)' (known apps: \(apps.map(\.name).joined(separator: ", ")))")
            }
            guard !entry.name.isEmpty, entry.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw ClusterError("store name '\(entry.name)' must be letters, digits, '-' or '_'")
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
        for entry in stores where entry.effects ?? true {
            let app = entry.app ?? entry.name
            if let owner = effectsOwners[app] {
                throw ClusterError(
                    "stores '\(owner)' and '\(entry.name)' both run app '\(app)' with effects, so every follow-up action would be sent twice; set effects = false on the replica"
                )
            }
            effectsOwners[app] = entry.name
        }
        if let hwm = cluster?.highWaterMark, !(1...10_000_000).contains(hwm) {
            throw ClusterError("high_water_mark must be between 1 and 10000000")
        }
        let host = cluster?.host ?? "127.0.0.1"
        if cluster?.allowRemote == true, security == nil {
            throw error(
                "allow_remote = true needs a [security] section: a cluster reachable from other hosts must authenticate and encrypt with CURVE (make keys with `zflux keygen`)",
                key: "allow_remote", table: "cluster")
        }
        if transport == .tcp && !ClusterConfig.isLoopback(host) && cluster?.allowRemote != true {
            throw ClusterError(
                "host \(host) is not a loopback address: set allow_remote = true in [cluster] to listen on it (and give the cluster a [security] section)"
            )
        }
        let heartbeat = cluster?.heartbeatMs ?? 200
        guard (10...60_000).contains(heartbeat) else { throw ClusterError("heartbeat_ms must be between 10 and 60000") }
        do {
            var placement: [String: (host: String?, port: Int?)] = [:]
            if let dispatcher { placement["dispatcher"] = (dispatcher.host, dispatcher.port) }
            for entry in stores { placement[entry.name] = (entry.host, entry.port) }
            try checkPlacement(transport: transport, stores: stores)
            var topology = try Topology.make(
                transport: transport, runDirectory: runDirectory, host: cluster?.host ?? "127.0.0.1",
                basePort: basePortOverride ?? cluster?.basePort ?? 5570,
                stores: stores.map { ($0.name, $0.app ?? $0.name) }, heartbeatMilliseconds: heartbeat, placement: placement)
            for (index, entry) in stores.enumerated() {
                if entry.effects == false { topology.stores[index].runsEffects = false }
                topology.stores[index].listen = entry.listen
                topology.stores[index].metricsPort = entry.metricsPort
                if entry.metricsPort != nil { topology.stores[index].metricsListen = entry.metricsListen ?? "127.0.0.1" }
                if let environment = entry.environment {
                    guard ["live", "mock"].contains(environment) else {
                        throw error(
                            "environment '\(environment)' of store '\(entry.name)' is not one of: live, mock", key: "environment", table: "store",
                            storeIndex: index)
                    }
                    topology.stores[index].environment = environment
                }
            }
            topology.dispatcher.listen = dispatcher?.listen
            topology.dispatcher.metricsPort = dispatcher?.metricsPort
            if dispatcher?.metricsPort != nil { topology.dispatcher.metricsListen = dispatcher?.metricsListen ?? "127.0.0.1" }
            if let timeout = cluster?.timeoutMs {
                guard (100...600_000).contains(timeout), timeout > heartbeat else {
                    throw error("timeout_ms must be between 100 and 600000 and above heartbeat_ms", key: "timeout_ms", table: "cluster")
                }
                topology.timeoutMilliseconds = timeout
            }
            if let restart {
                let max = restart.maxRestarts ?? 5, window = restart.windowS ?? 30
                guard (0...1000).contains(max) else { throw error("max_restarts must be between 0 and 1000", key: "max_restarts", table: "restart") }
                guard (1...86_400).contains(window) else { throw error("window_s must be between 1 and 86400", key: "window_s", table: "restart") }
                topology.restart = .init(maxRestarts: max, windowSeconds: window)
            }
            topology.highWaterMark = cluster?.highWaterMark
            if let megabytes = cluster?.queueMb {
                guard (1...65_536).contains(megabytes) else {
                    throw error("queue_mb must be between 1 and 65536 (MiB a node may queue for one peer)", key: "queue_mb", table: "cluster")
                }
                topology.queueBytes = megabytes << 20
            }
            if let name = cluster?.codec {
                guard let codec = WireCodec.Format(rawValue: name) else {
                    throw error("codec '\(name)' is not one of: binary, json", key: "codec", table: "cluster")
                }
                topology.codec = codec
            }
            if let limits {
                if let rate = limits.clientRate, rate < 1 { throw ClusterError("limits client_rate must be at least 1") }
                let ceiling = SocketDefaults.maxPayloadBytes
                if let max = limits.maxPayloadBytes, !(1...ceiling).contains(max) {
                    throw error(
                        max < 1
                            ? "max_payload_bytes must be at least 1"
                            : "max_payload_bytes \(max) is over \(ceiling): nodes receive messages of at most 16 MiB, and an action "
                                + "must fit one with its headers around it",
                        key: "max_payload_bytes", table: "limits")
                }
                for (type, max) in (limits.payload ?? [:]).sorted(by: { $0.key < $1.key }) where !(1...ceiling).contains(max) {
                    throw error(
                        "the payload limit of \(type), \(max), is \(max < 1 ? "below 1" : "over \(ceiling) (the 16 MiB receive limit less room for headers)")",
                        key: "payload", table: "limits")
                }
                topology.limits = .init(
                    clientRate: limits.clientRate, maxPayloadBytes: limits.maxPayloadBytes,
                    maxPayloadBytesByType: limits.payload)
            }
            topology.durability = try durability(runDirectory: runDirectory)
            if let security {
                func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : (baseDirectory ?? ".") + "/" + path }
                let server = try KeyPair.load(resolve(security.serverKey))
                _ = try KeyPair.load(resolve(security.clientKey))
                let authorized = resolve(security.authorizedKeys)
                guard FileManager.default.fileExists(atPath: authorized) else {
                    throw ClusterError("the authorized keys file \(authorized) is missing")
                }
                topology.security = .init(
                    serverKeyFile: resolve(security.serverKey), serverPublicKey: server.publicKey,
                    clientKeyFile: resolve(security.clientKey), authorizedKeysFile: authorized)
            }
            return topology
        } catch let error as NodeError {
            throw ClusterError(error.message)
        }
    }
}
