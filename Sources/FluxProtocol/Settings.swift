import FluxFormat

/// Every key of the cluster config, each written once: its table, key, type, default, range and doc
/// line. The config reader takes its known keys and range checks from here, the nodes' rules and
/// configurations their defaults, and docs/reference/config.md its tables (`SettingsTableTests`
/// checks the page against these, and writes its tables when asked).
///
/// Adding a key of a one-of table (`[cluster]`, `[journal]` …): its `Setting` here (and in ``all``),
/// its field in the `ClusterConfig` section, and a line in the rules of the node that acts on it,
/// which read it from the topology's ``SettingValues``; then the page's row is written from here.
package enum Settings {
    package enum Cluster {
        package static let name = Setting<String>(
            "cluster", "name", defaultNote: "none",
            rule: "1–64 ASCII letters, digits, `-` or `_`, starting with a letter or digit (checked in every config, though only a pair without "
                + "`[ha] key` uses the name)",
            doc: "the dispatchers of a pair and `failover`: it names `[ha]`'s default `key`, `/zflux/<name>/leader`")
        package static let transport = Setting<String>(
            "cluster", "transport", default: "ipc",
            rule: "`ipc` (socket files in the run directory) or `tcp`; `inproc` is refused",
            doc: "every node and command. `cluster up --transport` overrides it")
        package static let host = Setting<String>(
            "cluster", "host", default: "127.0.0.1",
            rule: "an address or host name; one that is not loopback (`127.x.x.x`, `::1`, `localhost`) needs `allow_remote = true`. Only with "
                + "`tcp`",
            doc: "every node and command: where the nodes that name no `host` of their own listen and are reached")
        package static let allowRemote = Setting<Bool>(
            "cluster", "allow_remote", default: false,
            rule: "`true` needs a `[security]` section",
            doc: "checked only: without it, every host, `listen` and `metrics_listen` must be loopback")
        package static let basePort = Setting<Int>(
            "cluster", "base_port", default: 5570,
            rule: "the ports it gives must stay below 65536. Only with `tcp`",
            doc: "every node and command: the first of the consecutive ports of the nodes that name no `port`: 3 for the dispatcher (4 for each "
                + "member of a pair of `[[dispatcher]]` entries), then 2 for each store. `cluster up --ha` makes its pair from the one "
                + "dispatcher: the first member keeps its 3 ports, the second takes the same 3 plus 100, and their replication ports are the "
                + "dispatcher's intake port plus 200 and plus 300. `cluster up --base-port` overrides it")
        package static let heartbeatMs = Setting<Int>(
            "cluster", "heartbeat_ms", unit: " (ms)", default: 200, minimum: 10, maximum: 60_000,
            doc: "dispatcher and stores (how often they send a heartbeat), views")
        package static let timeoutMs = Setting<Int>(
            "cluster", "timeout_ms", unit: " (ms)", default: 2000,
            defaultNote: ", or ten heartbeats (10 × `heartbeat_ms`) when that is longer", minimum: 100, maximum: 600_000,
            rule: ", and above `heartbeat_ms`",
            doc: "stores (silence from the dispatcher after which a store reconnects) and views (silence from a store after which a view shows "
                + "itself stale)")
        package static let highWaterMark = Setting<Int>(
            "cluster", "high_water_mark", unit: " (messages)", default: 100_000, minimum: 1, maximum: 10_000_000,
            doc: "dispatcher and stores: messages a publisher queues for a slow subscriber, which then loses messages and repairs them by replay")
        package static let queueMb = Setting<Int>(
            "cluster", "queue_mb", unit: " (MiB)", default: 1024, minimum: 1, maximum: 65_536,
            doc: "dispatcher and stores: the most a node queues for one peer; high-water marks are lowered so that as many of the largest "
                + "messages fit")
        package static let codec = Setting<WireCodec.Format>(
            "cluster", "codec", default: .binary, rule: "`binary` or `json`",
            doc: "stores, views and the commands that encode payloads (`dispatch`): what they write on the wire. Every node reads both")
    }

    package enum Dispatcher {
        package static let host = Setting<String>(
            "dispatcher", "host", defaultNote: "`[cluster] host`",
            rule: "not loopback only with `allow_remote = true`",
            doc: "every node and command: where the dispatcher is reached")
        package static let listen = Setting<String>(
            "dispatcher", "listen", defaultNote: "none: it binds `host`",
            rule: "not loopback only with `allow_remote = true`",
            doc: "dispatcher: the address it binds instead of `host` (`0.0.0.0` behind NAT or a Kubernetes service)")
        package static let port = Setting<Int>(
            "dispatcher", "port", defaultNote: "`base_port`", minimum: 1, maximum: 65_000,
            doc: "every node and command: its intake; actions on the next port, replay on the one after")
        package static let metricsPort = Setting<Int>(
            "dispatcher", "metrics_port", defaultNote: "none: no HTTP port", minimum: 1, maximum: 65_535,
            rule: "; not shared with another node on the same host",
            doc: "dispatcher: serves `/metrics`, `/ready` and `/live` ([metrics.md](metrics.md))")
        package static let metricsListen = Setting<String>(
            "dispatcher", "metrics_listen", default: "127.0.0.1",
            rule: "needs `metrics_port`; not loopback only with `allow_remote = true`",
            doc: "dispatcher: the address its metrics port binds")
    }

    package enum PairMember {
        package static let name = Setting<String>(
            "[dispatcher]", "name", unit: ", required", defaultNote: "—",
            rule: "1–64 ASCII letters, digits, `-` or `_`, starting with a letter or digit; the two differ",
            doc: "`zflux dispatcher --node NAME` runs it; its socket files (ipc) and journal directory are named after it")
        package static let host = Setting<String>(
            "[dispatcher]", "host", defaultNote: "`[cluster] host`",
            rule: "`tcp` only; not loopback only with `allow_remote = true`",
            doc: "every node and command: where the member is reached")
        package static let listen = Setting<String>(
            "[dispatcher]", "listen", defaultNote: "none: it binds `host`",
            rule: "not loopback only with `allow_remote = true`",
            doc: "that member: the address it binds instead of `host`")
        package static let port = Setting<Int>(
            "[dispatcher]", "port",
            defaultNote: "the next free port from `base_port` (each member takes four)", minimum: 1, maximum: 65_000,
            rule: "; no port shared with the other member or a store",
            doc: "every node and command: its intake; actions, replay and replication on the next three ports")
        package static let metricsPort = Setting<Int>(
            "[dispatcher]", "metrics_port", defaultNote: "none", minimum: 1, maximum: 65_535,
            rule: "; not the other member's on the same host", doc: "that member, while it leads")
        package static let metricsListen = Setting<String>(
            "[dispatcher]", "metrics_listen", default: "127.0.0.1",
            rule: "needs `metrics_port`; not loopback only with `allow_remote = true`", doc: "that member")
        package static let journal = Setting<String>(
            "[dispatcher]", "journal", unit: " (path)", default: "<[journal] directory>/<name>",
            rule: "not the other member's on the same host",
            doc: "that member: where it keeps its own journal")
        package static let key = Setting<String>(
            "[dispatcher]", "key", unit: " (path)", defaultNote: "none",
            rule: "only with `[security]`; required for both members over `tcp` with `[security]`",
            doc: "that member follows its leader with this key pair (`zflux keygen NAME`); its partner's replication port admits this key "
                + "alone. A host that runs only the other member needs just the `.pub` file beside it")
    }

    package enum HighAvailability {
        package static let etcd = Setting<[String]>(
            "ha", "etcd", unit: ", required", defaultNote: "—",
            rule: "at least one `http://host:port` URL; `https://` is refused (zflux talks plain HTTP to etcd's gateway)",
            doc: "the dispatchers and `failover`")
        package static let leaseMs = Setting<Int>(
            "ha", "lease_ms", unit: " (ms)", default: 3000, minimum: 2000, maximum: 600_000,
            rule: " (etcd grants whole seconds, at least 2)",
            doc: "the dispatchers (a leader steps down when its lease runs out); `dispatch` waits three leases and 2 s by default before giving "
                + "up")
        package static let replication = Setting<String>(
            "ha", "replication", default: "sync",
            rule: "`sync` (an ACK waits until the standby holds the action durable too) or `async` (an ACK waits for the leader's journal alone)",
            doc: "the dispatchers")
        package static let key = Setting<String>(
            "ha", "key",
            defaultNote: "`/zflux/zflux/leader`, or `/zflux/<[cluster] name>/leader` when the cluster has a name",
            rule: "starts with `/`, holds no spaces",
            doc: "the dispatchers and `failover`: the etcd key the leader holds. Clusters that share an etcd need different keys")
        package static let unauthenticatedReplication = Setting<Bool>(
            "ha", "unauthenticated_replication", default: false, rule: "—",
            doc: "checked only: `true` lets a pair run over `tcp` without `[security]`, where any process that reaches a member's replication "
                + "port can follow it as its standby")
    }

    package enum Journal {
        package static let directory = Setting<String>(
            "journal", "directory", unit: " (path)", default: "journal", defaultNote: " (in the run directory)", rule: "—",
            doc: "dispatcher; `state --at`, `view --history`, `journal export`. `journal verify`, `dump`, `tail`, `replay` and `compact` do not "
                + "read it from `--config`: they take `--journal DIR`, else the directory `RUN_DIR/cluster.json` names, else `RUN_DIR/journal`")
        package static let fsync = Setting<FsyncPolicy>(
            "journal", "fsync", default: .batch,
            rule: "`always` (an fsync per write), `batch` (one fsync for each burst of writes: group commit) or `none` (no fsync; a power cut "
                + "can lose acknowledged actions)",
            doc: "dispatcher: an ACK is sent only once the action is durable under this policy")
        package static let segmentMb = Setting<Int>(
            "journal", "segment_mb", unit: " (MiB)", default: 64, minimum: 1, maximum: 4096,
            doc: "dispatcher: the size at which it starts a new segment file")
        package static let snapshotDirectory = Setting<String>(
            "journal", "snapshot_directory", unit: " (path)", default: "snapshots", defaultNote: " (in the run directory)", rule: "—",
            doc: "stores; `state --at`, `view --history`, `journal export`, `journal compact`")
        package static let snapshotEvery = Setting<Int>(
            "journal", "snapshot_every", unit: " (actions)", default: 10_000, minimum: 1,
            doc: "stores: a store writes a snapshot after this many applied actions, and when it stops")
        package static let retainMb = Setting<Int>(
            "journal", "retain_mb", unit: " (MiB)", defaultNote: "none: the journal keeps everything", minimum: 1,
            doc:
                "dispatcher: past this size on disk, its oldest segments go by themselves at each segment roll (and every second while a reader holds some back), never one a store's snapshot (in `snapshot_directory`), the standby or the older checkpoint still needs; `journal_retention` in the status says what held some back"
        )
    }

    package enum Limits {
        package static let clientRate = Setting<Int>(
            "limits", "client_rate", unit: " (actions/s)", defaultNote: "none: no limit", minimum: 1,
            doc: "dispatcher: actions per second one client may dispatch (a burst of as many is allowed); more are refused `rate limited`")
        package static let maxPayloadBytes = Setting<Int>(
            "limits", "max_payload_bytes", unit: " (bytes)", default: 1 << 20, defaultNote: " (1 MiB)",
            minimum: 1, maximum: (16 << 20) - (64 << 10),
            rule: " (16 MiB, the largest message a node receives, less 64 KiB for the headers)",
            doc: "dispatcher: the largest payload it accepts")
        package static let payload = Setting<[String: Int]>(
            "limits", "payload", unit: " (bytes), keyed `\"app.type\"`", defaultNote: "none",
            minimum: 1, maximum: (16 << 20) - (64 << 10), rule: " each",
            doc: "dispatcher: a limit per action type, used instead of `max_payload_bytes` for that type: "
                + "`payload = { \"todo.addTodo\" = 1024 }`")
    }

    package enum Security {
        package static let serverKey = Setting<String>(
            "security", "server_key", unit: " (path), required", defaultNote: "—", rule: "a key pair file that loads",
            doc: "every node binds with it; its public half goes to everyone who connects")
        package static let clientKey = Setting<String>(
            "security", "client_key", unit: " (path), required", defaultNote: "—", rule: "a key pair file that loads",
            doc: "every node and command connects with it (`ZFLUX_KEY` picks another for a command)")
        package static let authorizedKeys = Setting<String>(
            "security", "authorized_keys", unit: " (path), required", defaultNote: "—", rule: "an existing file",
            doc: "every node: the public keys it admits, one a line, read again when the file changes")
    }

    package enum Restart {
        package static let maxRestarts = Setting<Int>(
            "restart", "max_restarts", default: 5, minimum: 0, maximum: 1000,
            doc: "`cluster up`: a node that dies is restarted (after 100 ms, doubling up to 5 s), unless this many restarts already happened "
                + "within `window_s`; then the whole cluster stops (exit status 1). `demo` ignores `[restart]` and keeps the defaults")
        package static let windowS = Setting<Int>(
            "restart", "window_s", unit: " (s)", default: 30, minimum: 1, maximum: 86_400,
            doc: "`cluster up`: the window `max_restarts` counts in")
    }

    package enum Devtools {
        package static let listen = Setting<String>(
            "devtools", "listen", default: "127.0.0.1:8745",
            rule: "`HOST:PORT`, the port 0–65535 (0: any free port, printed); a host that is not loopback (an address in 127.0.0.0/8, `::1`, "
                + "`localhost`; a name such as `127.example.com` is not) needs `token_file` or `key`",
            doc: "`devtools`: where it serves the page and its WebSocket")
        package static let tokenFile = Setting<String>(
            "devtools", "token_file", unit: " (path)",
            defaultNote: "none: a fresh token each start, printed in the page's address",
            rule: "not empty. The file is read when `devtools` starts, not by `cluster check`",
            doc: "`devtools`: the first line of the file is the token a dispatch from the page must carry")
        package static let maxConnections = Setting<Int>(
            "devtools", "max_connections", default: 16, minimum: 1, maximum: 10_000,
            rule: "; `--max-connections` takes the same",
            doc: "`devtools`: the most connections (pages and their files) open at once; more are closed as they come")
        package static let key = Setting<String>(
            "devtools", "key", unit: " (path)", defaultNote: "none",
            rule: "a key pair's secret file made by `zflux keygen`, with its `.pub` beside it (or readable); needs `[security]`",
            doc: "`devtools`: its own CURVE key pair. Every key in `[security] authorized_keys` then has a dispatch token, which `zflux "
                + "devtools token --key-file` prints from that key and this one's `.pub`")
    }

    package enum Store {
        package static let name = Setting<String>(
            "store", "name", unit: ", required", defaultNote: "—",
            rule: "1–64 ASCII letters, digits, `-` or `_`, starting with a letter or digit; unique",
            doc: "every node and command: `zflux state NAME`, `zflux view NAME`, `zflux store --node NAME`")
        package static let app = Setting<String>(
            "store", "app", defaultNote: "the store's `name`",
            rule: "an app the binary hosts, whose dependencies (the apps it reads) have stores too (`cluster up` and `cluster check` check both)",
            doc: "the store: the app it runs")
        package static let effects = Setting<Bool>(
            "store", "effects", default: true,
            rule: "at most one store per app with `true`",
            doc: "the store: whether it runs its app's effects. Set `false` on a replica, or every effect would run twice")
        package static let host = Setting<String>(
            "store", "host", defaultNote: "`[cluster] host`",
            rule: "not loopback only with `allow_remote = true`",
            doc: "every node and command: where the store is reached")
        package static let listen = Setting<String>(
            "store", "listen", defaultNote: "none: it binds `host`",
            rule: "not loopback only with `allow_remote = true`",
            doc: "the store: the address it binds instead of `host`")
        package static let port = Setting<Int>(
            "store", "port",
            defaultNote: "the next free port after the node before it", minimum: 1, maximum: 65_000,
            doc: "every node and command: its state publisher; its snapshot (and status) endpoint on the next port")
        package static let metricsPort = Setting<Int>(
            "store", "metrics_port", defaultNote: "none", minimum: 1, maximum: 65_535,
            rule: "; not shared with another node on the same host",
            doc: "the store ([metrics.md](metrics.md))")
        package static let metricsListen = Setting<String>(
            "store", "metrics_listen", default: "127.0.0.1",
            rule: "needs `metrics_port`; not loopback only with `allow_remote = true`", doc: "the store")
        package static let environment = Setting<String>(
            "store", "environment", default: "live",
            rule: "`live` or `mock` (the app's mock environment: instant answers, no network, files in memory)",
            doc: "the store. `cluster up --mock` sets `mock` for every store")
    }

    /// Every setting, in the order of the reference page: by table, then as the table lists them.
    package static let all: [any AnySetting] = [
        Cluster.name, Cluster.transport, Cluster.host, Cluster.allowRemote, Cluster.basePort, Cluster.heartbeatMs, Cluster.timeoutMs,
        Cluster.highWaterMark, Cluster.queueMb, Cluster.codec, Dispatcher.host, Dispatcher.listen, Dispatcher.port,
        Dispatcher.metricsPort, Dispatcher.metricsListen, PairMember.name, PairMember.host, PairMember.listen, PairMember.port,
        PairMember.metricsPort, PairMember.metricsListen, PairMember.journal, PairMember.key, HighAvailability.etcd,
        HighAvailability.leaseMs, HighAvailability.replication, HighAvailability.key, HighAvailability.unauthenticatedReplication,
        Journal.directory, Journal.fsync, Journal.segmentMb, Journal.snapshotDirectory, Journal.snapshotEvery, Journal.retainMb, Limits.clientRate,
        Limits.maxPayloadBytes, Limits.payload, Security.serverKey, Security.clientKey, Security.authorizedKeys, Restart.maxRestarts,
        Restart.windowS, Devtools.listen, Devtools.tokenFile, Devtools.maxConnections, Devtools.key, Store.name, Store.app, Store.effects,
        Store.host, Store.listen, Store.port, Store.metricsPort, Store.metricsListen, Store.environment,
    ]

    /// The tables, in the page's order: `[dispatcher]` is an entry of `[[dispatcher]]`, `store` of `[[store]]`.
    package static let tables = ["cluster", "dispatcher", "[dispatcher]", "ha", "journal", "limits", "security", "restart", "devtools", "store"]
}
