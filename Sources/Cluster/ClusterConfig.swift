import FluxCore

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
/// [ha]                     # a standby dispatcher: etcd decides which of the [[dispatcher]] entries leads
/// etcd = ["http://10.0.0.5:2379"]
/// lease_ms = 3000          # at least 2000 (etcd's shortest lease is 2 s)
/// replication = "sync"     # sync (an ACK waits for the standby) or async
/// key = "/zflux/shop/leader"   # default: /zflux/<[cluster] name, or zflux>/leader
///
/// [devtools]              # `zflux devtools`; its options win over these
/// listen = "127.0.0.1:8745"   # off loopback it needs token_file or key
/// token_file = "devtools.token"   # its first line is the token a dispatch must carry
/// max_connections = 16
/// key = "keys/devtools.key"   # its own key pair: authorized keys' tokens dispatch too (needs [security])
///
/// [[dispatcher]]           # with [ha] only, exactly two; without [ha], one [dispatcher] table
/// name = "d1"
/// host = "10.0.0.1"
/// port = 5570              # intake; actions, replay and replication on the next three ports
/// journal = "journal/d1"   # relative to the run directory; default <journal directory>/<name>
///
/// [[store]]
/// name = "todo"            # the store's name (views and `zflux state` use it)
/// app = "todo"             # which app it hosts; defaults to the name
/// effects = true           # false for a replica of an app another store already runs effects for
/// environment = "live"     # or "mock": the app's mock environment (instant answers, no network)
/// ```
///
/// The types here are the file's schema, key for key: each field is a setting's key in camel case
/// (``Settings``, which names the file's keys: the sections restate none); a value of them can be built in code and written
/// out with ``tomlText()``. Reading one (``parse(_:source:)``, ``load(path:defaultText:)``) refuses
/// unknown keys with their line, and ``topology(runDirectory:transportOverride:basePortOverride:apps:)``
/// checks the values and lays out the endpoints.
public struct ClusterConfig: Codable, Equatable, Sendable {
    /// `[cluster]`: how the nodes talk.
    public struct ClusterSection: Codable, Equatable, Sendable {
        /// The cluster's name (``NodeName`` rules): `[ha]`'s default key is `/zflux/<name>/leader`.
        public var name: String?
        /// "ipc" (default) or "tcp".
        public var transport: String?
        public var host: String?
        public var basePort: Int?
        public var heartbeatMs: Int?
        public var highWaterMark: Int?
        public var queueMb: Int?
        public var allowRemote: Bool?
        /// "binary" (default) or "json".
        public var codec: String?
        public var timeoutMs: Int?

        public init(
            transport: String? = nil, host: String? = nil, basePort: Int? = nil, heartbeatMs: Int? = nil, highWaterMark: Int? = nil,
            queueMb: Int? = nil, allowRemote: Bool? = nil, codec: String? = nil, timeoutMs: Int? = nil, name: String? = nil
        ) {
            self.name = name
            self.transport = transport
            self.host = host
            self.basePort = basePort
            self.heartbeatMs = heartbeatMs
            self.highWaterMark = highWaterMark
            self.queueMb = queueMb
            self.allowRemote = allowRemote
            self.codec = codec
            self.timeoutMs = timeoutMs
        }
    }

    /// `[journal]`: what the cluster keeps on disk.
    public struct JournalSection: Codable, Equatable, Sendable {
        public var directory: String?
        /// "always", "batch" (default) or "none".
        public var fsync: String?
        public var segmentMb: Int?
        public var snapshotDirectory: String?
        public var snapshotEvery: Int?
        /// The journal's size on disk past which its oldest segments go by themselves (nil: never).
        package var retainMb: Int?

        public init(
            directory: String? = nil, fsync: String? = nil, segmentMb: Int? = nil, snapshotDirectory: String? = nil, snapshotEvery: Int? = nil
        ) {
            self.directory = directory
            self.fsync = fsync
            self.segmentMb = segmentMb
            self.snapshotDirectory = snapshotDirectory
            self.snapshotEvery = snapshotEvery
        }
    }

    /// One `[[store]]`.
    public struct StoreSection: Codable, Equatable, Sendable {
        public var name: String
        /// The app it hosts (nil: the one named like the store).
        public var app: String?
        /// false for a replica: only one store per app should run the app's effects.
        public var effects: Bool?
        public var host: String?
        public var listen: String?
        public var port: Int?
        public var metricsPort: Int?
        public var metricsListen: String?
        /// "live" (default) or "mock": the app's mock environment.
        public var environment: String?

        public init(
            name: String, app: String? = nil, effects: Bool? = nil, host: String? = nil, listen: String? = nil, port: Int? = nil,
            metricsPort: Int? = nil, metricsListen: String? = nil, environment: String? = nil
        ) {
            self.name = name
            self.app = app
            self.effects = effects
            self.host = host
            self.listen = listen
            self.port = port
            self.metricsPort = metricsPort
            self.metricsListen = metricsListen
            self.environment = environment
        }
    }

    /// `[dispatcher]`: where the dispatcher runs, when the nodes are on several hosts.
    public struct DispatcherSection: Codable, Equatable, Sendable {
        public var host: String?
        public var listen: String?
        public var port: Int?
        public var metricsPort: Int?
        public var metricsListen: String?

        public init(host: String? = nil, listen: String? = nil, port: Int? = nil, metricsPort: Int? = nil, metricsListen: String? = nil) {
            self.host = host
            self.listen = listen
            self.port = port
            self.metricsPort = metricsPort
            self.metricsListen = metricsListen
        }
    }

    /// One `[[dispatcher]]` of a pair (with `[ha]`): where it runs and where it keeps its journal.
    public struct DispatcherMemberSection: Codable, Equatable, Sendable {
        /// Its node name (``NodeName`` rules): `zflux dispatcher --node NAME` runs it.
        public var name: String
        public var host: String?
        public var listen: String?
        /// Its intake; actions, replay and replication take the next three ports.
        public var port: Int?
        public var metricsPort: Int?
        public var metricsListen: String?
        /// Its journal's directory, relative to the run directory (nil: `<[journal] directory>/<name>`).
        public var journal: String?
        /// Under `[security]`: its own key pair file (`zflux keygen NAME`), relative to the config file.
        /// It follows its leader with it, and its partner's replication endpoint admits no other key.
        public var key: String?

        public init(
            name: String, host: String? = nil, listen: String? = nil, port: Int? = nil, metricsPort: Int? = nil, metricsListen: String? = nil,
            journal: String? = nil, key: String? = nil
        ) {
            self.key = key
            self.name = name
            self.host = host
            self.listen = listen
            self.port = port
            self.metricsPort = metricsPort
            self.metricsListen = metricsListen
            self.journal = journal
        }
    }

    /// `[ha]`: a standby dispatcher. The `[[dispatcher]]` entries are the pair; the one holding the
    /// lease on ``key`` in etcd leads, the others follow its journal.
    public struct HighAvailabilitySection: Codable, Equatable, Sendable {
        /// etcd's client URLs (`http://host:2379`: plain HTTP to its gateway); at least one.
        public var etcd: [String]
        /// The leader's lease (default 3000; at least 2000, etcd's shortest lease being 2 s).
        public var leaseMs: Int?
        /// "sync" (default: an ACK waits for the standby's journal too) or "async".
        public var replication: String?
        /// The key the leader holds (default `/zflux/<[cluster] name, or zflux>/leader`).
        public var key: String?
        /// Over tcp without `[security]`, the pair runs only when this says `true`: then any process that
        /// reaches a member's replication port can follow it as its standby (issue 35).
        public var unauthenticatedReplication: Bool?

        public init(
            etcd: [String], leaseMs: Int? = nil, replication: String? = nil, key: String? = nil, unauthenticatedReplication: Bool? = nil
        ) {
            self.etcd = etcd
            self.leaseMs = leaseMs
            self.replication = replication
            self.key = key
            self.unauthenticatedReplication = unauthenticatedReplication
        }
    }

    /// `[restart]`: `zflux cluster up`'s restart policy for its nodes.
    public struct RestartSection: Codable, Equatable, Sendable {
        public var maxRestarts: Int?
        public var windowS: Int?

        public init(maxRestarts: Int? = nil, windowS: Int? = nil) {
            self.maxRestarts = maxRestarts
            self.windowS = windowS
        }
    }

    /// `[security]`: the CURVE key files, relative to the config file's directory.
    public struct SecuritySection: Codable, Equatable, Sendable {
        public var serverKey: String
        public var clientKey: String
        public var authorizedKeys: String

        public init(serverKey: String, clientKey: String, authorizedKeys: String) {
            self.serverKey = serverKey
            self.clientKey = clientKey
            self.authorizedKeys = authorizedKeys
        }
    }

    /// `[limits]`: what the dispatcher's intake accepts.
    public struct LimitsSection: Codable, Equatable, Sendable {
        public var clientRate: Int?
        public var maxPayloadBytes: Int?
        /// Per action type, keyed "app.type".
        public var payload: [String: Int]?

        public init(clientRate: Int? = nil, maxPayloadBytes: Int? = nil, payload: [String: Int]? = nil) {
            self.clientRate = clientRate
            self.maxPayloadBytes = maxPayloadBytes
            self.payload = payload
        }
    }

    /// `[devtools]`: where `zflux devtools` serves its page and who may dispatch from it.
    public struct DevtoolsSection: Codable, Equatable, Sendable {
        /// HOST:PORT (default 127.0.0.1:8745); off loopback it needs ``tokenFile``.
        public var listen: String?
        /// A file whose first line is the token a dispatch must carry, relative to the config file.
        public var tokenFile: String?
        /// The most connections open at once (default 16), within ``connectionRange``.
        public var maxConnections: Int?
        /// The devtools' own CURVE key pair (made by `keygen`), relative to the config file: with it,
        /// under `[security]`, every authorized key's token dispatches too (`zflux devtools token`).
        public var key: String?

        /// The connection caps `max_connections` and `zflux devtools --max-connections` take.
        public static let connectionRange = Settings.Devtools.maxConnections.bounds

        public init(listen: String? = nil, tokenFile: String? = nil, maxConnections: Int? = nil, key: String? = nil) {
            self.listen = listen
            self.tokenFile = tokenFile
            self.maxConnections = maxConnections
            self.key = key
        }
    }

    public var cluster: ClusterSection?
    /// `[dispatcher]`: the one dispatcher (a config has this or ``dispatchers``, never both).
    public var dispatcher: DispatcherSection?
    /// The `[[dispatcher]]` entries of a pair, in the file's order (with ``ha`` only).
    public var dispatchers: [DispatcherMemberSection]?
    public var ha: HighAvailabilitySection?
    public var journal: JournalSection?
    public var limits: LimitsSection?
    public var security: SecuritySection?
    public var restart: RestartSection?
    public var devtools: DevtoolsSection?
    /// The `[[store]]` entries, in the file's order.
    public var stores: [StoreSection]?
    /// The config file's directory: relative key paths are resolved against it.
    var baseDirectory: String?
    /// The file's text and name, to point errors at their line.
    var text: String?
    var source: String?

    public init(
        cluster: ClusterSection? = nil, dispatcher: DispatcherSection? = nil, journal: JournalSection? = nil, limits: LimitsSection? = nil,
        security: SecuritySection? = nil, restart: RestartSection? = nil, stores: [StoreSection]? = nil, ha: HighAvailabilitySection? = nil,
        dispatchers: [DispatcherMemberSection]? = nil, devtools: DevtoolsSection? = nil
    ) {
        self.devtools = devtools
        self.cluster = cluster
        self.dispatcher = dispatcher
        self.dispatchers = dispatchers
        self.ha = ha
        self.journal = journal
        self.limits = limits
        self.security = security
        self.restart = restart
        self.stores = stores
    }

    enum CodingKeys: String, CodingKey {
        case cluster, dispatcher, journal, limits, security, restart, ha, devtools
        case stores = "store"
    }

    // `dispatcher` is a table (`[dispatcher]`) or an array of tables (`[[dispatcher]]`): TOML allows
    // one or the other, and each is read into its own property.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        cluster = try container.decodeIfPresent(ClusterSection.self, forKey: .cluster)
        if (try? container.nestedUnkeyedContainer(forKey: .dispatcher)) != nil {
            dispatchers = try container.decode([DispatcherMemberSection].self, forKey: .dispatcher)
        } else {
            dispatcher = try container.decodeIfPresent(DispatcherSection.self, forKey: .dispatcher)
        }
        journal = try container.decodeIfPresent(JournalSection.self, forKey: .journal)
        limits = try container.decodeIfPresent(LimitsSection.self, forKey: .limits)
        security = try container.decodeIfPresent(SecuritySection.self, forKey: .security)
        restart = try container.decodeIfPresent(RestartSection.self, forKey: .restart)
        ha = try container.decodeIfPresent(HighAvailabilitySection.self, forKey: .ha)
        devtools = try container.decodeIfPresent(DevtoolsSection.self, forKey: .devtools)
        stores = try container.decodeIfPresent([StoreSection].self, forKey: .stores)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(cluster, forKey: .cluster)
        if let dispatchers {
            try container.encode(dispatchers, forKey: .dispatcher)
        } else {
            try container.encodeIfPresent(dispatcher, forKey: .dispatcher)
        }
        try container.encodeIfPresent(journal, forKey: .journal)
        try container.encodeIfPresent(limits, forKey: .limits)
        try container.encodeIfPresent(security, forKey: .security)
        try container.encodeIfPresent(restart, forKey: .restart)
        try container.encodeIfPresent(ha, forKey: .ha)
        try container.encodeIfPresent(devtools, forKey: .devtools)
        try container.encodeIfPresent(stores, forKey: .stores)
    }
}
