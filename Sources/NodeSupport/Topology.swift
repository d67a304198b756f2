import FluxCore
import Foundation

/// Where every node of one cluster listens. `zflux cluster up` writes it to `RUN_DIR/cluster.json`;
/// every other command reads it from there.
public struct Topology: Codable, Equatable, Sendable {
    public struct DispatcherEndpoints: Codable, Equatable, Sendable {
        public var intake: String
        public var actions: String
        public var replay: String

        /// The address it binds instead of the one in its endpoints (e.g. 0.0.0.0 behind a service name).
        public var listen: String? = nil
        /// Its HTTP port for metrics, readiness and liveness (nil: none).
        public var metricsPort: Int? = nil
        /// The address that HTTP port binds (nil: loopback).
        public var metricsListen: String? = nil

        public init(intake: String, actions: String, replay: String) {
            self.intake = intake
            self.actions = actions
            self.replay = replay
        }

        /// The endpoints it binds.
        public var bound: DispatcherEndpoints {
            var copy = self
            copy.intake = Topology.bindEndpoint(intake, listen: listen)
            copy.actions = Topology.bindEndpoint(actions, listen: listen)
            copy.replay = Topology.bindEndpoint(replay, listen: listen)
            return copy
        }
    }

    public struct StoreEndpoints: Codable, Equatable, Sendable {
        public var name: String
        public var app: String
        public var state: String
        public var snapshot: String
        /// Whether this store runs its app's effects (nil: yes). Replicas of an app set it false.
        public var runsEffects: Bool? = nil
        public var listen: String? = nil
        public var metricsPort: Int? = nil
        /// The address the metrics port binds (nil: loopback).
        public var metricsListen: String? = nil
        /// Which environment the store gives its app: nil or "live", or "mock" (instant answers, no
        /// network, files in memory: the seeds' playground).
        public var environment: String? = nil

        /// Whether the store runs its app with the app's mock environment.
        public var usesMockEnvironment: Bool { environment == "mock" }

        public init(name: String, app: String, state: String, snapshot: String) {
            self.name = name
            self.app = app
            self.state = state
            self.snapshot = snapshot
        }
    }

    /// The endpoints an endpoint string names: one, or several separated by commas (the dispatchers of
    /// a cluster with a standby, in `[ha]` order).
    public static func endpointList(_ endpoint: String) -> [String] {
        endpoint.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Whether every node listens on this host: each endpoint is ipc, or tcp on a loopback address
    /// (127.0.0.0/8, ::1, localhost). Then every node reads the same run directory, which can hold a
    /// secret the nodes share (the effect token).
    package var isLoopbackOnly: Bool {
        var endpoints = [dispatcher.intake, dispatcher.actions, dispatcher.replay]
        endpoints += stores.flatMap { [$0.state, $0.snapshot] }
        endpoints += (ha?.dispatchers ?? []).flatMap { [$0.endpoints.intake, $0.endpoints.actions, $0.endpoints.replay, $0.replication] }
        return endpoints.flatMap(Topology.endpointList).allSatisfy { endpoint in
            if endpoint.hasPrefix("ipc://") { return true }
            guard endpoint.hasPrefix("tcp://") else { return false }
            let address = endpoint.dropFirst("tcp://".count)
            let host = address.lastIndex(of: ":").map { address[..<$0] } ?? address
            return isLoopbackHost(String(host))
        }
    }

    /// `endpoint` with its host replaced by `listen` (tcp only): where a node binds when the address
    /// others use to reach it is not one of its own (a NAT, a Kubernetes service).
    public static func bindEndpoint(_ endpoint: String, listen: String?) -> String {
        guard let listen, endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") else { return endpoint }
        return "tcp://\(listen)\(endpoint[colon...])"
    }

    /// Where the cluster keeps what must survive a crash.
    public struct Durability: Codable, Equatable, Sendable {
        /// The dispatcher's journal.
        public var journalDirectory: String
        public var fsync: FsyncPolicy
        public var segmentBytes: Int
        /// Store snapshots (one file per store).
        public var snapshotDirectory: String
        /// A store writes a snapshot after this many applied actions (and when it stops).
        public var snapshotEveryActions: Int

        /// Where store `store` keeps its snapshot.
        package func snapshotPath(store: String) -> String { snapshotDirectory + "/" + store + ".snapshot" }

        public init(journalDirectory: String, fsync: FsyncPolicy, segmentBytes: Int, snapshotDirectory: String, snapshotEveryActions: Int) {
            self.journalDirectory = journalDirectory
            self.fsync = fsync
            self.segmentBytes = segmentBytes
            self.snapshotDirectory = snapshotDirectory
            self.snapshotEveryActions = snapshotEveryActions
        }
    }

    public var dispatcher: DispatcherEndpoints
    public var stores: [StoreEndpoints]
    public var heartbeatMilliseconds: Int
    /// nil: nothing is kept on disk.
    public var durability: Durability? = nil
    /// Queue limit of every publisher and subscriber (nil: the nodes' default, 100,000 messages).
    public var highWaterMark: Int? = nil
    /// Bytes a node may queue for one peer (nil: ``SocketDefaults/queueBytes``). High-water marks are
    /// lowered to fit it, given the largest message each socket can carry.
    public var queueBytes: Int? = nil
    /// What the dispatcher's intake accepts.
    public var limits: Limits? = nil
    /// CURVE on every tcp socket (nil: none).
    public var security: SecurityFiles? = nil
    /// The config's values of its one-of tables' keys (``SettingValues``): how a key the fields here do
    /// not carry reaches a node's rules. nil: every such key's default (a topology built in code).
    package var settings: SettingValues? = nil
    /// Silence after which a store reconnects to the dispatcher and a view shows itself stale
    /// (nil: ``silenceTimeoutMilliseconds``'s default).
    public var timeoutMilliseconds: Int? = nil

    /// The silence timeout of nodes that have no topology to go by.
    public static let defaultTimeoutMilliseconds = Defaults.silenceTimeoutMilliseconds

    /// The silence timeout every node of this cluster uses: as configured, else ten heartbeats and at
    /// least ``defaultTimeoutMilliseconds``.
    public var silenceTimeoutMilliseconds: Int {
        timeoutMilliseconds ?? max(Topology.defaultTimeoutMilliseconds, heartbeatMilliseconds * 10)
    }
    /// `cluster up`'s restart policy: at most `maxRestarts` within `windowSeconds` (nil: `[restart]`'s defaults).
    public var restart: RestartPolicy? = nil

    public struct RestartPolicy: Codable, Equatable, Sendable {
        public var maxRestarts: Int
        public var windowSeconds: Int
        public init(maxRestarts: Int, windowSeconds: Int) {
            self.maxRestarts = maxRestarts
            self.windowSeconds = windowSeconds
        }
    }
    /// The codec nodes and commands write actions and states in (nil: binary). Readers take both.
    public var codec: WireCodec.Format? = nil

    /// `[devtools]`: where `zflux devtools` serves its page, as checked when the config was read (nil:
    /// the command's defaults). Kept here so that `zflux devtools` beside a cluster started with a
    /// config finds the section in the run directory's cluster.json.
    public var devtools: Devtools? = nil

    /// `zflux devtools`' settings from the config; its own options win over each of them.
    public struct Devtools: Codable, Equatable, Sendable {
        /// HOST:PORT to serve the page on.
        public var listen: String?
        /// The token's file, as an absolute path (the config names it relative to itself).
        public var tokenFile: String?
        /// The most connections open at once.
        public var maxConnections: Int?
        /// The devtools' own key pair's secret file (absolute), and its public half, read from the
        /// `.pub` beside it when the config was read: developers make their tokens against it.
        package var key: String?
        package var publicKey: String?
        public init(listen: String? = nil, tokenFile: String? = nil, maxConnections: Int? = nil) {
            self.listen = listen
            self.tokenFile = tokenFile
            self.maxConnections = maxConnections
        }
    }

    /// A standby dispatcher (`[ha]`): the pair, and the etcd that decides which of them leads. nil: one
    /// dispatcher. With it, ``dispatcher`` lists every dispatcher's endpoints, comma-separated, for
    /// those who connect (``endpointList(_:)``); each dispatcher binds its own from here.
    public var ha: HighAvailability? = nil

    public struct HighAvailability: Codable, Equatable, Sendable {
        /// etcd's client endpoints (`http://host:2379`).
        public var etcd: [String]
        /// The lease the leader holds, in milliseconds (etcd counts whole seconds, at least 2).
        public var leaseMilliseconds: Int
        /// "sync" (an ACK waits for the standby too) or "async".
        public var replication: String
        /// The key the leader holds: `/zflux/<cluster>/leader`.
        public var key: String
        public var dispatchers: [Member]

        public struct Member: Codable, Equatable, Sendable {
            public var name: String
            public var endpoints: DispatcherEndpoints
            /// The ROUTER it binds for its standby when it leads.
            public var replication: String
            /// Its journal's directory (each dispatcher keeps its own).
            public var journalDirectory: String
            /// Under CURVE: the file of its own key pair, which it follows its leader with (only its
            /// host needs the secret), and the public half, the one key its partner's replication
            /// endpoint admits.
            public var keyFile: String?
            public var publicKey: String?

            public init(
                name: String, endpoints: DispatcherEndpoints, replication: String, journalDirectory: String, keyFile: String? = nil,
                publicKey: String? = nil
            ) {
                self.name = name
                self.endpoints = endpoints
                self.replication = replication
                self.journalDirectory = journalDirectory
                self.keyFile = keyFile
                self.publicKey = publicKey
            }
        }

        public init(etcd: [String], leaseMilliseconds: Int, replication: String, key: String, dispatchers: [Member]) {
            self.etcd = etcd
            self.leaseMilliseconds = leaseMilliseconds
            self.replication = replication
            self.key = key
            self.dispatchers = dispatchers
        }

        /// What clients, stores and views connect to: every member's endpoints, comma-separated.
        public var joined: DispatcherEndpoints {
            func list(_ part: (DispatcherEndpoints) -> String) -> String { dispatchers.map { part($0.endpoints) }.joined(separator: ",") }
            return DispatcherEndpoints(intake: list(\.intake), actions: list(\.actions), replay: list(\.replay))
        }

        public func member(named name: String) -> Member? { dispatchers.first { $0.name == name } }
    }

    public struct SecurityFiles: Codable, Equatable, Sendable {
        /// The server key pair's secret file: nodes bind with it.
        public var serverKeyFile: String
        /// Its public half, for everyone who connects.
        public var serverPublicKey: String
        /// The key pair nodes and local commands connect with.
        public var clientKeyFile: String
        /// The public keys allowed in, one per line.
        public var authorizedKeysFile: String

        public init(serverKeyFile: String, serverPublicKey: String, clientKeyFile: String, authorizedKeysFile: String) {
            self.serverKeyFile = serverKeyFile
            self.serverPublicKey = serverPublicKey
            self.clientKeyFile = clientKeyFile
            self.authorizedKeysFile = authorizedKeysFile
        }
    }

    public struct Limits: Codable, Equatable, Sendable {
        public var clientRate: Int?
        public var maxPayloadBytes: Int?
        /// Per action, keyed "app.type".
        public var maxPayloadBytesByType: [String: Int]?
        public init(clientRate: Int? = nil, maxPayloadBytes: Int? = nil, maxPayloadBytesByType: [String: Int]? = nil) {
            self.clientRate = clientRate
            self.maxPayloadBytes = maxPayloadBytes
            self.maxPayloadBytesByType = maxPayloadBytesByType
        }
    }

    public init(dispatcher: DispatcherEndpoints, stores: [StoreEndpoints], heartbeatMilliseconds: Int) {
        self.dispatcher = dispatcher
        self.stores = stores
        self.heartbeatMilliseconds = heartbeatMilliseconds
    }

    public func store(named name: String) -> StoreEndpoints? { stores.first { $0.name == name } }

    /// The store called `name`, or an error that lists the stores there are.
    public func requireStore(named name: String) throws(UnknownStore) -> StoreEndpoints {
        guard let store = store(named: name) else { throw UnknownStore(name: name, known: stores.map(\.name)) }
        return store
    }

    /// The stores that run `app`, or an error that lists the stores there are, with their apps.
    public func requireStores(running app: String) throws(UnknownStore) -> [StoreEndpoints] {
        let running = stores.filter { $0.app == app }
        guard !running.isEmpty else { throw UnknownStore(app: app, known: stores.map { "\($0.name) (\($0.app))" }) }
        return running
    }

    /// A store a command names that the cluster does not have.
    public struct UnknownStore: Error, CustomStringConvertible {
        public let description: String

        public init(name: String, known: [String]) {
            description = "the cluster has no store '\(name)' (it has: \(known.joined(separator: ", ")))"
        }

        public init(app: String, known: [String]) {
            description = "the cluster has no store running app '\(app)' (its stores: \(known.joined(separator: ", ")))"
        }
    }

    public enum Transport: String, Codable, Sendable, CaseIterable {
        case ipc, tcp, inproc
    }

    /// Lays out endpoints for a list of (store name, app name).
    /// - ipc: socket files in `runDirectory`; tcp: consecutive ports from `basePort` on `host`;
    ///   inproc: names unique to `runDirectory`, for nodes inside one process.
    public static func make(
        transport: Transport, runDirectory: String, host: String = Defaults.host, basePort: Int = Defaults.basePort,
        stores: [(name: String, app: String)], heartbeatMilliseconds: Int = Defaults.heartbeatMilliseconds,
        placement: [String: (host: String?, port: Int?)] = [:]
    ) throws -> Topology {
        var port = basePort
        var nodeHost = host
        func place(_ node: String) {
            nodeHost = placement[node]?.host ?? host
            if let first = placement[node]?.port { port = first }
        }
        func endpoint(_ file: String) throws -> String {
            switch transport {
            case .ipc:
                let path = (runDirectory as NSString).appendingPathComponent("\(file).sock")
                // sockaddr_un holds 107 bytes of path; libzmq fails late and obscurely past that.
                guard path.utf8.count <= 107 else {
                    throw NodeError("the ipc socket path \(path) is longer than 107 bytes; choose a shorter --run-dir")
                }
                return "ipc://\(path)"
            case .tcp:
                // Checked before the increment is set up: a port at Int.max must throw, not trap.
                guard port < 65536 else { throw NodeError("tcp ports run past 65535; choose a lower base port") }
                guard port >= 1 else { throw NodeError("tcp port \(port) is not a port; choose a base port from 1") }
                defer { port += 1 }
                return "tcp://\(nodeHost.contains(":") ? "[\(nodeHost)]" : nodeHost):\(port)"
            case .inproc:
                return "inproc://\(runDirectory)/\(file)"
            }
        }
        place("dispatcher")
        let dispatcher = DispatcherEndpoints(
            intake: try endpoint("dispatcher-intake"), actions: try endpoint("dispatcher-actions"),
            replay: try endpoint("dispatcher-replay"))
        var seen = Set<String>()
        var storeEndpoints: [StoreEndpoints] = []
        for store in stores {
            guard seen.insert(store.name).inserted else { throw NodeError("store name '\(store.name)' is used twice") }
            place(store.name)
            storeEndpoints.append(
                StoreEndpoints(
                    name: store.name, app: store.app,
                    state: try endpoint("store-\(store.name)-state"), snapshot: try endpoint("store-\(store.name)-snapshot")))
        }
        let topology = Topology(dispatcher: dispatcher, stores: storeEndpoints, heartbeatMilliseconds: heartbeatMilliseconds)
        var endpoints = Set<String>()
        for endpoint in [dispatcher.intake, dispatcher.actions, dispatcher.replay] + storeEndpoints.flatMap({ [$0.state, $0.snapshot] }) {
            guard endpoints.insert(endpoint).inserted else { throw NodeError("two nodes would listen on \(endpoint): check the ports") }
        }
        return topology
    }

    public static let fileName = "cluster.json"
    package static let lastRunFileName = "cluster.last.json"

    public static func load(runDirectory: String) throws -> Topology {
        try load(runDirectory: runDirectory, orLastRun: false)
    }

    /// The running cluster's topology; with `orLastRun`, when none runs here, the one that ran last
    /// (for commands that read its files, not its sockets).
    package static func load(runDirectory: String, orLastRun: Bool) throws -> Topology {
        var url = URL(fileURLWithPath: runDirectory).appendingPathComponent(fileName)
        var data = FileManager.default.contents(atPath: url.path)
        if data == nil && orLastRun {
            let last = URL(fileURLWithPath: runDirectory).appendingPathComponent(lastRunFileName)
            if let kept = FileManager.default.contents(atPath: last.path) {
                (url, data) = (last, kept)
            }
        }
        guard let data else {
            throw NodeError(
                "no cluster in \(runDirectory): \(url.path) is missing (start one with `\(StandardOutput.programName) cluster up`, or pass --run-dir)"
            )
        }
        do {
            return try JSONDecoder().decode(Topology.self, from: data)
        } catch {
            throw NodeError("\(url.path) is not a valid cluster description: \(error)")
        }
    }

    public func write(runDirectory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let url = URL(fileURLWithPath: runDirectory).appendingPathComponent(Topology.fileName)
        try encoder.encode(self).write(to: url, options: .atomic)
    }

    /// Every ipc socket file this topology binds.
    public var ipcPaths: [String] {
        let named = [dispatcher.intake, dispatcher.actions, dispatcher.replay] + stores.flatMap { [$0.state, $0.snapshot] }
        return (named.flatMap(Topology.endpointList) + (ha?.dispatchers.map(\.replication) ?? []))
            .filter { $0.hasPrefix("ipc://") }
            .map { String($0.dropFirst("ipc://".count)) }
    }
}
