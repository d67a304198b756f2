import Examples
import FluxCore
import Foundation
import NodeSupport
import TOMLKit

/// The cluster config file (TOML). With no file, `ClusterConfig.embeddedDefault` is used.
///
/// ```toml
/// [cluster]
/// transport = "ipc"        # ipc (socket files in the run directory) or tcp
/// host = "127.0.0.1"       # tcp only: the address every node binds and connects to
/// allow_remote = false     # a host that is not loopback needs this set to true
/// base_port = 5570         # tcp only: first of the consecutive ports the nodes use
/// heartbeat_ms = 200
/// high_water_mark = 100000 # messages a publisher queues for a slow subscriber before dropping
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
/// ```
struct ClusterConfig: Codable, Equatable {
    struct Cluster: Codable, Equatable {
        var transport: String?
        var host: String?
        var basePort: Int?
        var heartbeatMs: Int?
        var highWaterMark: Int?
        var allowRemote: Bool?
        var codec: String?

        enum CodingKeys: String, CodingKey {
            case transport, host, codec
            case allowRemote = "allow_remote"
            case basePort = "base_port"
            case heartbeatMs = "heartbeat_ms"
            case highWaterMark = "high_water_mark"
        }
    }

    struct JournalSection: Codable, Equatable {
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

    struct Store: Codable, Equatable {
        var name: String
        var app: String?
        /// false for a replica: only one store per app should run the app's effects.
        var effects: Bool?
    }

    var cluster: Cluster?
    var journal: JournalSection?
    var limits: LimitsSection?
    var security: SecuritySection?
    /// The config file's directory: relative key paths are resolved against it.
    var baseDirectory: String?

    struct SecuritySection: Codable, Equatable {
        var serverKey: String
        var clientKey: String
        var authorizedKeys: String

        enum CodingKeys: String, CodingKey {
            case serverKey = "server_key"
            case clientKey = "client_key"
            case authorizedKeys = "authorized_keys"
        }
    }

    struct LimitsSection: Codable, Equatable {
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

    static let embeddedDefault = """
        # zflux's default cluster: a dispatcher and one store per example app, over ipc.
        [cluster]
        transport = "ipc"
        heartbeat_ms = 200

        [journal]
        fsync = "batch"

        [[store]]
        name = "todo"

        [[store]]
        name = "star"

        [[store]]
        name = "filter"

        [[store]]
        name = "login"

        [[store]]
        name = "counter"

        # reads the todo store's state (waitFor)
        [[store]]
        name = "stats"
        """

    static func parse(_ text: String, source: String) throws -> ClusterConfig {
        try checkTableHeaders(text, source: source)
        do {
            return try TOMLDecoder().decode(ClusterConfig.self, from: text)
        } catch let error as TOMLParseError {
            throw CLIError("\(source):\(error.source.begin.line): \(error.description)")
        } catch let error as DecodingError {
            // TOMLKit reports a value of the wrong type as a missing key, so name both possibilities.
            if case .keyNotFound(let key, let context) = error {
                let keys = (context.codingPath + [key]).map { $0.intValue.map { "[\($0 + 1)]" } ?? $0.stringValue }
                let path = keys.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
                    .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
                throw CLIError("\(source): '\(path)' is missing or has the wrong type")
            }
            throw CLIError("\(source): \(error.shortDescription)")
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
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard let first = rest.first else { continue }
            if !(first.isASCII && (first.isLetter || first.isNumber)) && !"_-\"'[]".contains(first) {
                throw CLIError("\(source):\(index + 1): a table name must start with a letter, digit, '_', '-' or a quote")
            }
        }
    }

    static func load(path: String?) throws -> ClusterConfig {
        guard let path else { return try parse(embeddedDefault, source: "embedded default config") }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CLIError("cannot read the config file \(path)")
        }
        var config = try parse(text, source: path)
        let absolute = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
        config.baseDirectory = absolute.deletingLastPathComponent().path
        return config
    }

    func durability(runDirectory: String) throws -> Topology.Durability {
        func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : runDirectory + "/" + path }
        let fsync = journal?.fsync ?? "batch"
        guard ["always", "batch", "none"].contains(fsync) else { throw CLIError("journal fsync '\(fsync)' is not one of: always, batch, none") }
        let segmentMb = journal?.segmentMb ?? 64
        guard (1...4096).contains(segmentMb) else { throw CLIError("journal segment_mb must be between 1 and 4096") }
        let every = journal?.snapshotEvery ?? 10_000
        guard every >= 1 else { throw CLIError("journal snapshot_every must be at least 1") }
        return Topology.Durability(
            journalDirectory: resolve(journal?.directory ?? "journal"), fsync: fsync, segmentBytes: segmentMb << 20,
            snapshotDirectory: resolve(journal?.snapshotDirectory ?? "snapshots"), snapshotEveryActions: every)
    }

    /// Checks the config against the apps this binary knows and lays out its endpoints.
    func topology(runDirectory: String, transportOverride: Topology.Transport?, basePortOverride: Int?) throws -> Topology {
        let transportName = transportOverride?.rawValue ?? cluster?.transport ?? "ipc"
        guard let transport = Topology.Transport(rawValue: transportName), transport != .inproc else {
            throw CLIError("transport '\(transportName)' is not one of: ipc, tcp")
        }
        let stores = store ?? []
        guard !stores.isEmpty else { throw CLIError("the config has no [[store]] entries") }
        for entry in stores {
            let app = entry.app ?? entry.name
            guard Catalog.app(named: app) != nil else {
                throw CLIError("store '\(entry.name)': unknown app '\(app)' (known apps: \(Catalog.names.joined(separator: ", ")))")
            }
            guard !entry.name.isEmpty, entry.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw CLIError("store name '\(entry.name)' must be letters, digits, '-' or '_'")
            }
        }
        do {
            try DependencyGraph.check(stores.compactMap { Catalog.app(named: $0.app ?? $0.name) })
        } catch {
            throw CLIError(error.reason)
        }
        var effectsOwners: [String: String] = [:]
        for entry in stores where entry.effects ?? true {
            let app = entry.app ?? entry.name
            if let owner = effectsOwners[app] {
                throw CLIError("stores '\(owner)' and '\(entry.name)' both run app '\(app)' with effects, so every follow-up action would be sent twice; set effects = false on the replica")
            }
            effectsOwners[app] = entry.name
        }
        if let hwm = cluster?.highWaterMark, !(1...10_000_000).contains(hwm) {
            throw CLIError("high_water_mark must be between 1 and 10000000")
        }
        let host = cluster?.host ?? "127.0.0.1"
        if transport == .tcp && !["127.0.0.1", "localhost", "::1"].contains(host) && cluster?.allowRemote != true {
            throw CLIError("host \(host) is not a loopback address: set allow_remote = true in [cluster] to listen on it (and give the cluster a [security] section)")
        }
        let heartbeat = cluster?.heartbeatMs ?? 200
        guard (10...60_000).contains(heartbeat) else { throw CLIError("heartbeat_ms must be between 10 and 60000") }
        do {
            var topology = try Topology.make(
                transport: transport, runDirectory: runDirectory, host: cluster?.host ?? "127.0.0.1",
                basePort: basePortOverride ?? cluster?.basePort ?? 5570,
                stores: stores.map { ($0.name, $0.app ?? $0.name) }, heartbeatMilliseconds: heartbeat)
            for (index, entry) in stores.enumerated() where entry.effects == false { topology.stores[index].runsEffects = false }
            topology.highWaterMark = cluster?.highWaterMark
            if let name = cluster?.codec {
                guard let codec = WireCodec.Format(rawValue: name) else { throw CLIError("codec '\(name)' is not one of: binary, json") }
                topology.codec = codec
            }
            if let limits {
                if let rate = limits.clientRate, rate < 1 { throw CLIError("limits client_rate must be at least 1") }
                if let max = limits.maxPayloadBytes, !(1...(16 << 20)).contains(max) {
                    throw CLIError("limits max_payload_bytes must be between 1 and 16777216")
                }
                topology.limits = .init(clientRate: limits.clientRate, maxPayloadBytes: limits.maxPayloadBytes,
                                        maxPayloadBytesByType: limits.payload)
            }
            topology.durability = try durability(runDirectory: runDirectory)
            if let security {
                func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : (baseDirectory ?? ".") + "/" + path }
                let server = try KeyPair.load(resolve(security.serverKey))
                _ = try KeyPair.load(resolve(security.clientKey))
                let authorized = resolve(security.authorizedKeys)
                guard FileManager.default.fileExists(atPath: authorized) else { throw CLIError("the authorized keys file \(authorized) is missing") }
                topology.security = .init(
                    serverKeyFile: resolve(security.serverKey), serverPublicKey: server.publicKey,
                    clientKeyFile: resolve(security.clientKey), authorizedKeysFile: authorized)
            }
            return topology
        } catch let error as NodeError {
            throw CLIError(error.message)
        }
    }
}
