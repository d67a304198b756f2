import Dispatcher
import FluxCore
import Foundation
import NodeCores
import NodeSupport
import Testing

@testable import Cluster
@testable import NodeCores

/// The values a reader of docs/reference/ (and of the README, GUARANTEES.md and PROTOCOL.md) relies on,
/// checked against the code: the command page against the binary's help, the config page's keys,
/// defaults and ranges against the parser and the values the code applies, the lists of environment
/// variables, exit statuses and metrics against what `Sources/` uses, and PROTOCOL.md's timeouts and
/// bounds against the constants that hold them.
@Suite("Reference docs")
struct ReferenceDocsTests {
    /// The package's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every Swift file under Sources/, by its path in the package.
    static func sources() throws -> [(path: String, text: String)] {
        let directory = root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var files: [(String, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            files.append(("Sources/" + relative, try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// Every match of `pattern` in `text`: the capture groups of each (the whole match when there are none).
    static func matches(_ pattern: String, in text: String, options: NSRegularExpression.Options = []) -> [[String]] {
        guard let regex = try? NSRegularExpression(pattern: pattern, options: options) else {
            Issue.record("bad pattern \(pattern)")
            return []
        }
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).map { match in
            let groups = match.numberOfRanges > 1 ? Array(1..<match.numberOfRanges) : [0]
            return groups.map { index in Range(match.range(at: index), in: text).map { String(text[$0]) } ?? "" }
        }
    }

    /// The first difference between two texts, as "line N: expected / found", for a failure message.
    static func firstDifference(_ expected: String, _ found: String) -> String {
        let a = expected.components(separatedBy: "\n"), b = found.components(separatedBy: "\n")
        for index in 0..<max(a.count, b.count) where (index < a.count ? a[index] : nil) != (index < b.count ? b[index] : nil) {
            return
                "line \(index + 1): the binary gives \"\(index < a.count ? a[index] : "(end)")\", the page has \"\(index < b.count ? b[index] : "(end)")\""
        }
        return "none"
    }

    // MARK: commands.md

    @Test("commands.md is exactly what scripts/reference.py makes of the binary's help")
    func commandsPage() throws {
        let python = which("python3") ?? "/usr/bin/python3"
        let script = Self.root.appendingPathComponent("scripts/reference.py").path
        let generated = try runProgram(python, [script, "--zflux", zfluxBinary, "--output", "-"], timeout: .seconds(120))
        try #require(generated.status == 0, "scripts/reference.py failed: \(generated.stderr)")
        let committed = try Self.read("docs/reference/commands.md")
        #expect(
            generated.stdout == committed,
            """
            docs/reference/commands.md differs from the help the binary prints (first difference at \
            \(Self.firstDifference(generated.stdout, committed))): regenerate it with `python3 scripts/reference.py` \
            (after `swift build`) and commit it
            """)
        // Every command the root help lists has its section, so the page cannot silently lose one.
        for command in ["cluster up", "dispatch", "journal verify", "bench codec", "simulate", "new"] {
            #expect(committed.contains("\n## zflux \(command)\n"), "commands.md has no section for zflux \(command)")
        }
    }

    // MARK: config.md

    /// One table row of config.md: its section ("cluster", "[dispatcher]" for `[[dispatcher]]`, "store"
    /// for `[[store]]`) and cells.
    struct ConfigRow {
        var section: String
        var key: String
        var type: String
        var defaultValue: String
        var allowed: String
    }

    static func configRows() throws -> [ConfigRow] {
        var rows: [ConfigRow] = []
        var section: String?
        for line in try read("docs/reference/config.md").components(separatedBy: "\n") {
            if line.hasPrefix("## ") {
                let heading = String(line.dropFirst(3))
                if heading.hasPrefix("[[") {
                    let name = heading.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                    section = name == "store" ? "store" : "[\(name)]"
                } else if heading.hasPrefix("[") {
                    section = heading.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                } else {
                    section = nil
                }
                continue
            }
            guard let section, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 6 else { continue }
            rows.append(
                ConfigRow(
                    section: section, key: cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), type: cells[2],
                    defaultValue: cells[3], allowed: cells[4]))
        }
        return rows
    }

    /// The first `code span` of a cell: the value the page states.
    static func firstCode(_ cell: String) -> String? {
        matches("`([^`]*)`", in: cell).first?.first
    }

    @Test("config.md lists every key the config parser accepts, in its table, and no other")
    func configKeys() throws {
        let rows = try Self.configRows()
        var documented: [String: Set<String>] = [:]
        for row in rows { documented[row.section, default: []].insert(row.key) }
        for (table, keys) in ClusterConfig.knownKeys where !table.isEmpty {
            #expect(documented[table] == keys, "config.md's [\(table)] lists \(documented[table]?.sorted() ?? []); the parser takes \(keys.sorted())")
        }
        let sections = Set(documented.keys.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) })
        #expect(
            sections == ClusterConfig.knownKeys[""],
            "config.md's sections \(sections.sorted()); the parser's tables \(ClusterConfig.knownKeys[""]?.sorted() ?? [])")
    }

    static let runDirectory = "/tmp/zflux-reference-docs"

    static func topology(_ config: ClusterConfig) throws -> Topology {
        try config.topology(runDirectory: runDirectory, transportOverride: nil, basePortOverride: nil, apps: nil)
    }

    static func accepts(_ config: ClusterConfig) -> Bool { (try? topology(config)) != nil }

    static let store = ClusterConfig.StoreSection(name: "counter")

    /// A dispatcher pair over `transport`, with `ha` and its two members as given; over tcp without
    /// `[security]`, `unauthenticated_replication = true` unless `trusted` is false.
    static func pair(
        transport: String = "ipc", trusted: Bool = true, cluster: ClusterConfig.ClusterSection? = nil,
        ha: ClusterConfig.HighAvailabilitySection? = nil, first: ClusterConfig.DispatcherMemberSection = .init(name: "d1"),
        second: ClusterConfig.DispatcherMemberSection = .init(name: "d2")
    ) -> ClusterConfig {
        var section = cluster ?? ClusterConfig.ClusterSection()
        section.transport = transport
        var lease = ha ?? ClusterConfig.HighAvailabilitySection(etcd: ["http://127.0.0.1:2379"])
        if transport == "tcp" && trusted { lease.unauthenticatedReplication = true }
        return ClusterConfig(cluster: section, stores: [store], ha: lease, dispatchers: [first, second])
    }

    /// The defaults the code applies to a config that leaves each key out, as config.md writes them.
    static func codeDefaults() throws -> [String: String] {
        let plain = try topology(ClusterConfig(stores: [store]))
        let tcp = try topology(ClusterConfig(cluster: .init(transport: "tcp"), stores: [store]))
        let dispatcher = DispatcherNode.Configuration(topology: plain, apps: [])
        let durability = try #require(plain.durability)
        let withMetrics = try topology(
            ClusterConfig(
                cluster: .init(transport: "tcp"), dispatcher: .init(metricsPort: 9470),
                stores: [.init(name: "counter", metricsPort: 9471)]))
        let ha = try #require(try topology(pair()).ha)
        let pairWithMetrics = try #require(try topology(pair(first: .init(name: "d1", metricsPort: 9470))).ha)
        let restart = try #require(try topology(ClusterConfig(restart: .init(), stores: [store])).restart)
        let supervisorPolicy = Supervisor.RestartPolicy()
        #expect(restart.maxRestarts == supervisorPolicy.maxRestarts && .seconds(restart.windowSeconds) == supervisorPolicy.window)
        let address = try #require(matches("^tcp://([^:]+):([0-9]+)$", in: tcp.dispatcher.intake).first)
        let twoWithEffects = ClusterConfig(stores: [.init(name: "a", app: "counter"), .init(name: "b", app: "counter")])
        let remote = ClusterConfig(cluster: .init(transport: "tcp", host: "10.0.0.1"), stores: [store])
        return [
            "cluster.transport": String(plain.dispatcher.intake.prefix { $0 != ":" }),
            "cluster.host": address[0],
            "cluster.base_port": address[1],
            "cluster.allow_remote": String(accepts(remote)),
            "cluster.heartbeat_ms": String(plain.heartbeatMilliseconds),
            "cluster.timeout_ms": String(plain.silenceTimeoutMilliseconds),
            "cluster.high_water_mark": String(dispatcher.publishHighWaterMark),
            "cluster.queue_mb": String(dispatcher.queueBytes >> 20),
            "cluster.codec": WireCodec().format.rawValue,
            "dispatcher.metrics_listen": withMetrics.dispatcher.metricsListen ?? "none",
            "[dispatcher].metrics_listen": pairWithMetrics.dispatchers.first?.endpoints.metricsListen ?? "none",
            "ha.lease_ms": String(ha.leaseMilliseconds),
            "ha.replication": ha.replication,
            "ha.key": ha.key,
            "ha.unauthenticated_replication": String(accepts(pair(transport: "tcp", trusted: false))),
            "journal.directory": durability.journalDirectory.replacingOccurrences(of: runDirectory + "/", with: ""),
            "journal.fsync": durability.fsync.rawValue,
            "journal.segment_mb": String(durability.segmentBytes >> 20),
            "journal.snapshot_directory": durability.snapshotDirectory.replacingOccurrences(of: runDirectory + "/", with: ""),
            "journal.snapshot_every": String(durability.snapshotEveryActions),
            "limits.max_payload_bytes": String(dispatcher.maxPayloadBytes),
            "restart.max_restarts": String(restart.maxRestarts),
            "restart.window_s": String(restart.windowSeconds),
            "store.effects": String(!accepts(twoWithEffects)),
            "store.environment": plain.stores.first?.usesMockEnvironment == false ? "live" : "mock",
            "store.metrics_listen": withMetrics.stores.first?.metricsListen ?? "none",
        ]
    }

    @Test("every default config.md states is the value the code applies")
    func configDefaults() throws {
        let rows = try Self.configRows()
        let defaults = try Self.codeDefaults()
        for (name, value) in defaults.sorted(by: { $0.key < $1.key }) {
            guard let row = rows.first(where: { "\($0.section).\($0.key)" == name }) else {
                Issue.record("config.md has no row for \(name)")
                continue
            }
            #expect(Self.firstCode(row.defaultValue) == value, "config.md says \(name) defaults to \(row.defaultValue); the code applies \(value)")
        }
        // The documented figures the code names as constants.
        #expect(Topology.defaultTimeoutMilliseconds == 2000 && ClusterConfig.defaultLeaseMilliseconds == 3000)
        // A key without a default says so, and is not one the code fills in.
        let client = rows.first { $0.section == "limits" && $0.key == "client_rate" }
        #expect(client?.defaultValue.hasPrefix("none") == true)
        #expect(DispatcherNode.Configuration(topology: try Self.topology(ClusterConfig(stores: [Self.store])), apps: []).clientRate == nil)
    }

    /// For each key config.md gives a numeric range: a config with the key set to a value.
    static let rangeProbes: [String: @Sendable (Int) -> ClusterConfig] = [
        // Without [ha]: the name is checked in every config, not only in a pair whose key it names.
        "cluster.name": { ClusterConfig(cluster: .init(name: String(repeating: "a", count: $0)), stores: [store]) },
        "cluster.heartbeat_ms": { ClusterConfig(cluster: .init(heartbeatMs: $0), stores: [store]) },
        "cluster.timeout_ms": { ClusterConfig(cluster: .init(heartbeatMs: 10, timeoutMs: $0), stores: [store]) },
        "cluster.high_water_mark": { ClusterConfig(cluster: .init(highWaterMark: $0), stores: [store]) },
        "cluster.queue_mb": { ClusterConfig(cluster: .init(queueMb: $0), stores: [store]) },
        "dispatcher.port": { ClusterConfig(cluster: .init(transport: "tcp"), dispatcher: .init(port: $0), stores: [store]) },
        "dispatcher.metrics_port": { ClusterConfig(dispatcher: .init(metricsPort: $0), stores: [store]) },
        // Over tcp: a long name over ipc would make a socket path longer than 107 bytes.
        "[dispatcher].name": { pair(transport: "tcp", first: .init(name: String(repeating: "d", count: $0))) },
        "[dispatcher].port": { pair(transport: "tcp", first: .init(name: "d1", port: $0), second: .init(name: "d2", port: 6000)) },
        "[dispatcher].metrics_port": { pair(first: .init(name: "d1", metricsPort: $0)) },
        "ha.lease_ms": { pair(ha: .init(etcd: ["http://127.0.0.1:2379"], leaseMs: $0)) },
        "journal.segment_mb": { ClusterConfig(journal: .init(segmentMb: $0), stores: [store]) },
        "journal.snapshot_every": { ClusterConfig(journal: .init(snapshotEvery: $0), stores: [store]) },
        "limits.client_rate": { ClusterConfig(limits: .init(clientRate: $0), stores: [store]) },
        "limits.max_payload_bytes": { ClusterConfig(limits: .init(maxPayloadBytes: $0), stores: [store]) },
        "limits.payload": { ClusterConfig(limits: .init(payload: ["counter.incrementTapped": $0]), stores: [store]) },
        "devtools.max_connections": { ClusterConfig(stores: [store], devtools: .init(maxConnections: $0)) },
        "restart.max_restarts": { ClusterConfig(restart: .init(maxRestarts: $0), stores: [store]) },
        "restart.window_s": { ClusterConfig(restart: .init(windowS: $0), stores: [store]) },
        "store.name": { ClusterConfig(cluster: .init(transport: "tcp"), stores: [.init(name: String(repeating: "s", count: $0), app: "counter")]) },
        "store.port": { ClusterConfig(cluster: .init(transport: "tcp"), stores: [.init(name: "counter", port: $0)]) },
        "store.metrics_port": { ClusterConfig(stores: [.init(name: "counter", metricsPort: $0)]) },
    ]

    /// A config of one store and `key = number` in `[section]`, as a file would say it.
    static func alone(section: String, key: String, _ number: Int) -> ClusterConfig {
        (try? ClusterConfig.parse("[\(section)]\n\(key) = \(number)\n\n[[store]]\nname = \"counter\"\n", source: "probe.toml"))
            ?? ClusterConfig(cluster: .init(transport: "unparsed"), stores: [store])
    }

    @Test("every range config.md states is the one the code enforces: each bound accepted, one past it refused")
    func configRanges() throws {
        var ranged: Set<String> = []
        for row in try Self.configRows() {
            let name = "\(row.section).\(row.key)"
            let bounds: (Int, Int?)
            if let range = Self.matches("^([0-9]+)–([0-9]+)", in: row.allowed).first, let low = Int(range[0]), let high = Int(range[1]) {
                bounds = (low, high)
            } else if let least = Self.matches("^at least ([0-9]+)", in: row.allowed).first, let low = Int(least[0]) {
                bounds = (low, nil)
            } else {
                continue
            }
            ranged.insert(name)
            // A key of a one-of table needs no probe of its own: the key alone in its table.
            let oneOf = !["store", "[dispatcher]"].contains(row.section)
            guard let probe = Self.rangeProbes[name] ?? (oneOf ? { Self.alone(section: row.section, key: row.key, $0) } : nil) else {
                Issue.record("config.md gives \(name) a range, and the test has no way to try it: add it to rangeProbes")
                continue
            }
            #expect(Self.accepts(probe(bounds.0)), "\(name) = \(bounds.0), the lowest config.md allows, is refused")
            #expect(!Self.accepts(probe(bounds.0 - 1)), "\(name) = \(bounds.0 - 1), below what config.md allows, is accepted")
            if let high = bounds.1 {
                #expect(Self.accepts(probe(high)), "\(name) = \(high), the highest config.md allows, is refused")
                #expect(!Self.accepts(probe(high + 1)), "\(name) = \(high + 1), above what config.md allows, is accepted")
            }
        }
        #expect(
            Set(Self.rangeProbes.keys).isSubset(of: ranged), "probed: \(Self.rangeProbes.keys.sorted()); ranged keys in config.md: \(ranged.sorted())"
        )
        // The payload ceiling is the receive limit less 64 KiB, as config.md explains it.
        #expect(SocketDefaults.maxPayloadBytes == 16_711_680 && Int(SocketDefaults.maxMessageSize) - SocketDefaults.maxPayloadBytes == 64 << 10)
    }

    @Test("the ports config.md gives the pair `cluster up --ha` makes over tcp are the ones it binds")
    func localPairPorts() throws {
        let row = try #require(try Self.configRows().first { $0.section == "cluster" && $0.key == "base_port" })
        let line = try Self.read("docs/reference/config.md").components(separatedBy: "\n").first { $0.hasPrefix("| `base_port` |") } ?? ""
        let stated = try #require(
            Self.matches(
                "the second takes the same 3 plus ([0-9]+), and their replication ports are the dispatcher's intake port plus ([0-9]+) and plus ([0-9]+)",
                in: line
            ).first.map { $0.compactMap(Int.init) }, "config.md's base_port row no longer states the ports of `cluster up --ha`")
        #expect(Self.firstCode(row.defaultValue) == "5570" && stated.count == 3)
        let single = try Self.topology(ClusterConfig(cluster: .init(transport: "tcp"), stores: [Self.store]))
        let pair = try #require(try single.withLocalPair(etcd: ["http://127.0.0.1:2379"], clusterName: "local").ha)
        func port(_ endpoint: String) -> Int { Int(endpoint.split(separator: ":").last ?? "") ?? -1 }
        let base = port(single.dispatcher.intake)
        let (first, second) = (pair.dispatchers[0], pair.dispatchers[1])
        #expect([first.endpoints.intake, first.endpoints.actions, first.endpoints.replay].map(port) == [base, base + 1, base + 2])
        #expect([second.endpoints.intake, second.endpoints.actions, second.endpoints.replay].map(port) == [0, 1, 2].map { base + stated[0] + $0 })
        #expect([first.replication, second.replication].map(port) == [base + stated[1], base + stated[2]])
    }

    @Test("config.md says where each relative path is taken from: every key of type path is named in that sentence")
    func relativePaths() throws {
        let page = try Self.read("docs/reference/config.md").replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        let sentence = try #require(Self.matches("(A relative path in [^.]*\\.)", in: page).first?.first, "config.md says where relative paths go")
        for row in try Self.configRows() where row.type.hasPrefix("string (path)") {
            let table = row.section == "store" ? "[[store]]" : row.section.hasPrefix("[") ? "[\(row.section)]" : "[\(row.section)]"
            // The key itself ("`[[dispatcher]]` `key`", "`[devtools] key`"), or its whole table ("`[security]`" alone).
            let whole = NSRegularExpression.escapedPattern(for: "`\(table)`") + "(?! `)"
            let named =
                sentence.contains("`\(table)` `\(row.key)`") || sentence.contains("`\(table) \(row.key)`")
                || !Self.matches(whole, in: sentence).isEmpty
            #expect(named, "config.md's sentence on relative paths does not say where \(table) \(row.key) is taken from: \(sentence)")
        }
    }

    @Test("`zflux devtools --max-connections` takes the range config.md gives max_connections, and refuses a value past it")
    func devtoolsConnectionOption() throws {
        let row = try #require(try Self.configRows().first { $0.section == "devtools" && $0.key == "max_connections" })
        let range = ClusterConfig.DevtoolsSection.connectionRange
        #expect(row.allowed.hasPrefix("\(range.lowerBound)–\(range.upperBound)"), "config.md: \(row.allowed)")
        for value in [range.lowerBound - 1, range.upperBound + 1] {
            let refused = try zflux(["devtools", "--max-connections", String(value), "--run-dir", "/nonexistent-zflux-run"])
            #expect(refused.status == 64, "--max-connections \(value): exit \(refused.status), \(refused.stderr)")
            #expect(refused.stderr.contains("--max-connections must be between \(range.lowerBound) and \(range.upperBound)"), "\(refused.stderr)")
        }
    }

    // MARK: The protocol version and the canaries

    @Test("the protocol version the README and PROTOCOL.md name is the code's")
    func protocolVersion() throws {
        let current = String(Header.protocolVersion)
        let readme = Self.matches("wire protocol v([0-9]+)", in: try Self.read("README.md"))
        #expect(!readme.isEmpty, "the README names no protocol version")
        for found in readme { #expect(found[0] == current, "the README says wire protocol v\(found[0]); the code speaks \(current)") }
        let title = Self.matches("^# zflux wire protocol, version ([0-9]+)$", in: try Self.read("docs/PROTOCOL.md"), options: .anchorsMatchLines)
        #expect(title.map { $0[0] } == [current], "docs/PROTOCOL.md's title names version \(title.map { $0[0] }); the code speaks \(current)")
    }

    @Test("the README's counts of what ties zflux to Linux (/proc reads, Glibc, fsync) are the code's")
    func linuxTies() throws {
        var procReads = 0, procFiles = 0, glibcFiles = 0, journalFiles = 0, glibcCalls = 0, fdatasyncs = 0, fsyncs = 0
        func count(_ pattern: String, _ lines: [String]) -> Int { lines.reduce(0) { $0 + Self.matches(pattern, in: $1).count } }
        for (path, text) in try Self.sources() {
            // Code only: a comment that names a call is not one.
            let code = text.components(separatedBy: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            let reads = code.filter { $0.contains("\"/proc/") }.count
            (procReads, procFiles) = (procReads + reads, procFiles + (reads > 0 ? 1 : 0))
            if code.contains(where: { !Self.matches("^\\s*import Glibc\\b", in: $0).isEmpty }) {
                glibcFiles += 1
                if path.hasPrefix("Sources/Journaling/") { journalFiles += 1 }
            }
            glibcCalls += count("\\bGlibc\\.[A-Za-z_]", code)
            fdatasyncs += count("\\bfdatasync\\(", code)
            fsyncs += count("\\bfsync\\(", code)
        }
        let readme = try Self.read("README.md").replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        let stated: [(String, [Int])] = [
            ("\\*\\*`/proc`\\*\\*: ([0-9]+) reads in ([0-9]+) files", [procReads, procFiles]),
            (
                "\\*\\*Glibc\\*\\*: ([0-9]+) files import it, ([0-9]+) of them the dispatcher's journal, and ([0-9]+) calls name it",
                [glibcFiles, journalFiles, glibcCalls]
            ),
            ("The journal's ([0-9]+) `fdatasync` calls? and the ([0-9]+) `fsync` calls", [fdatasyncs, fsyncs]),
        ]
        for (pattern, code) in stated {
            let found = try #require(Self.matches(pattern, in: readme).first, "the README no longer states /\(pattern)/")
            #expect(found.compactMap(Int.init) == code, "the README says \(found) for /\(pattern)/; the code has \(code)")
        }
    }

    // MARK: PROTOCOL.md's figures

    /// The numbers each group of `pattern`'s first match in docs/PROTOCOL.md states ("4,096", "10" or
    /// "ten"), read with every run of whitespace as one space (sentences wrap across lines); nil, with a
    /// failure, when the page no longer says it that way.
    static func protocolFigures(_ pattern: String, _ what: String) throws -> [Int]? {
        let page = try read("docs/PROTOCOL.md").replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        guard let found = matches(pattern, in: page).first else {
            Issue.record("docs/PROTOCOL.md no longer states \(what) as this test reads it (/\(pattern)/): update the test with the page")
            return nil
        }
        let figures = found.compactMap { number($0.replacingOccurrences(of: ",", with: "")) }
        #expect(figures.count == found.count, "docs/PROTOCOL.md's \(what): \(found) are not all numbers")
        return figures.count == found.count ? figures : nil
    }

    @Test("the silence timeout docs/PROTOCOL.md states (ten heartbeats, at least 2 s) is the one stores and views use")
    func protocolSilenceTimeout() throws {
        // "Silence past the timeout (2 s by default: 10 of the store's 200 ms heartbeats) marks the view stale"
        let view = try Self.protocolFigures(
            "Silence past the timeout \\(([0-9]+) s by default: ([0-9]+|[a-z]+) of the store's ([0-9]+) ms heartbeats\\)", "a view's stale timeout")
        // "`timeoutMilliseconds` | … (absent: 10 heartbeats, at least 2,000 ms)"
        let absent = try Self.protocolFigures("\\(absent: ([0-9]+|[a-z]+) heartbeats, at least ([0-9,]+) ms\\)", "the default timeout")
        let plain = try Self.topology(ClusterConfig(stores: [Self.store]))
        if let view, view.count == 3 {
            #expect(
                plain.heartbeatMilliseconds == view[2],
                "PROTOCOL.md says the store's heartbeats are \(view[2]) ms; the code sends them every \(plain.heartbeatMilliseconds)")
            #expect(view[0] * 1000 == view[1] * view[2], "PROTOCOL.md's \(view[0]) s is not \(view[1]) heartbeats of \(view[2]) ms")
            #expect(
                plain.silenceTimeoutMilliseconds == view[0] * 1000,
                "PROTOCOL.md says a view goes stale after \(view[0]) s; the code waits \(plain.silenceTimeoutMilliseconds) ms")
            #expect(
                ViewRules(store: "counter", app: nil).silenceTimeoutMilliseconds == view[0] * 1000,
                "a view with no topology to go by waits as long as PROTOCOL.md says")
        }
        guard let absent, absent.count == 2 else { return }
        let (beats, floor) = (absent[0], absent[1])
        #expect(Topology.defaultTimeoutMilliseconds == floor, "PROTOCOL.md's floor is \(floor) ms; the code's \(Topology.defaultTimeoutMilliseconds)")
        // Below the floor, at it, and where the heartbeats give more.
        for heartbeat in [10, floor / beats, floor / beats + 1, 1000] {
            let topology = try Self.topology(ClusterConfig(cluster: .init(heartbeatMs: heartbeat), stores: [Self.store]))
            #expect(
                topology.silenceTimeoutMilliseconds == max(floor, beats * heartbeat),
                "heartbeat_ms = \(heartbeat): the code waits \(topology.silenceTimeoutMilliseconds) ms, PROTOCOL.md's rule \(max(floor, beats * heartbeat))"
            )
        }
    }

    @Test("the apps docs/PROTOCOL.md says send changes-only STATE are those whose state records its changes")
    func changesOnlyApps() throws {
        let page = try Self.read("docs/PROTOCOL.md").replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        let stated = try #require(
            Self.matches("Of the apps the stock `zflux` binary hosts, (.*?) (?:alone has|have) a state that records its changes", in: page).first?
                .first,
            "PROTOCOL.md says which apps send changes")
        var recording: [String] = []
        for (path, text) in try Self.sources() where path.hasPrefix("Sources/Examples/") {
            if !Self.matches("struct State: [^{]*\\bIncrementalState\\b", in: text).isEmpty {
                recording.append(URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent.lowercased())
            }
        }
        #expect(
            Self.codeSpans(stated).sorted() == recording.sorted(), "PROTOCOL.md names \(stated); the apps whose state records changes: \(recording)")
    }

    @Test("the deduplication limits docs/PROTOCOL.md states are the dispatcher's")
    func protocolDeduplication() throws {
        let rules = DispatcherNode.Configuration(topology: try Self.topology(ClusterConfig(stores: [Self.store])), apps: []).rules
        let table = DedupTable(window: rules.dedupWindow)
        #expect(DispatcherRules(apps: []).dedupWindow == rules.dedupWindow, "a core built without a node's configuration remembers as much")
        let stated: [(pattern: String, what: String, code: Int)] = [
            ("each client id keeps its newest ([0-9,]+) client seqs", "the seqs kept per client id", table.window),
            ("keeps at most ([0-9,]+) client ids; past that, that owner's oldest", "the client ids kept per owner", table.perOwner),
            (
                "at most ([0-9,]+) client ids, and [0-9,]+ \\(client seq, seq\\) entries, are kept in all", "the client ids kept in all",
                table.maxClients
            ),
            (
                "at most [0-9,]+ client ids, and ([0-9,]+) \\(client seq, seq\\) entries, are kept in all", "the entries kept in all",
                table.maxEntries
            ),
            ("and the newest ([0-9,]+) tombstones are kept", "the tombstones kept", table.maxTombstones),
            (
                "rebuilt from the newest ([0-9,]+) actions of the journal", "the actions the table is rebuilt from",
                Int(DispatcherCore.dedupRecoveryRecords)
            ),
        ]
        for (pattern, what, code) in stated {
            guard let figure = try Self.protocolFigures(pattern, what)?.first else { continue }
            #expect(figure == code, "docs/PROTOCOL.md states \(what) as \(figure); the code's is \(code)")
        }
    }

    @Test("the size of a replay answer and of a batch docs/PROTOCOL.md states are the dispatcher's")
    func protocolReplayBounds() throws {
        let rules = DispatcherNode.Configuration(topology: try Self.topology(ClusterConfig(stores: [Self.store])), apps: []).rules
        if let answer = try Self.protocolFigures(
            "An answer holds at most ([0-9]+) batches, and starts no new batch once its batches hold ([0-9]+) MiB of payload",
            "one replay answer's size"),
            answer.count == 2
        {
            #expect(
                rules.replayBatchesPerRequest == answer[0],
                "PROTOCOL.md: \(answer[0]) batches per answer; the code's \(rules.replayBatchesPerRequest)")
            #expect(
                ReplayPlan.maxReplyBytes == answer[1] << 20, "PROTOCOL.md: \(answer[1]) MiB per answer; the code's \(ReplayPlan.maxReplyBytes) bytes")
        }
        if let batch = try Self.protocolFigures(
            "A batch holds at most ([0-9]+) actions and closes before its actions pass about ([0-9]+) MiB", "one REPLAY-BATCH's size"),
            batch.count == 2
        {
            #expect(rules.replayBatchSize == batch[0], "PROTOCOL.md: \(batch[0]) actions per batch; the code's \(rules.replayBatchSize)")
            #expect(
                ReplayPlan.maxBatchBytes == batch[1] << 20, "PROTOCOL.md: \(batch[1]) MiB per batch; the code's \(ReplayPlan.maxBatchBytes) bytes")
        }
    }

    static let numberWords = [
        "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
        "thirteen": 13,
    ]

    static func number(_ word: String) -> Int? { Int(word) ?? numberWords[word.lowercased()] }

    /// Which canaries a count a document states is about.
    enum CanaryGroup: String {
        case all, single = "of a single dispatcher", pair = "of a pair"
    }

    /// Every count of canaries a document states: "N canaries", "There are N (`zflux simulate
    /// --list-canaries`)", "N of a single dispatcher (…)", "N of a pair … (…)", and the length of each
    /// list it gives in parentheses after these.
    static func statedCanaryCounts(_ text: String) -> [(what: String, group: CanaryGroup, count: Int)] {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        var counts: [(String, CanaryGroup, Int)] = []
        for found in matches("\\b([0-9]+|[A-Za-z]+) (?:simulator )?canaries\\b", in: flat) {
            if let count = number(found[0]) { counts.append(("\"\(found[0]) canaries\"", .all, count)) }
        }
        for found in matches("[Tt]here are ([0-9]+|[a-z]+) \\(`zflux simulate --list-canaries`\\)", in: flat) {
            if let count = number(found[0]) { counts.append(("\"There are \(found[0])\"", .all, count)) }
        }
        for found in matches("`--list-canaries`: ([^)]*)\\)", in: flat) {
            counts.append(("the list after --list-canaries", .all, found[0].components(separatedBy: ", ").count))
        }
        for group in [CanaryGroup.single, .pair] {
            for found in matches("\\b([0-9]+|[a-z]+) \(group.rawValue)[^(.]*\\(([^)]*)\\)", in: flat) {
                // Only after a count ("three of a pair (…)"): "a member of a pair (…)" lists no canaries.
                guard let count = number(found[0]) else { continue }
                counts.append(("\"\(found[0]) \(group.rawValue)\"", group, count))
                counts.append(("the list of those \(group.rawValue)", group, found[1].components(separatedBy: ", ").count))
            }
        }
        return counts
    }

    /// The canaries as the binary lists them: all of them, and those of a pair (they run with --ha, or
    /// with --from-single, which implies it).
    static func listedCanaries() throws -> (all: [String], pair: [String]) {
        let listed = try zflux(["simulate", "--list-canaries"])
        #expect(listed.status == 0)
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        let name = { (line: String) in line.split(separator: " ").first.map(String.init) ?? "" }
        return (lines.map(name), lines.filter { $0.hasSuffix("(runs with --ha)") || $0.hasSuffix("(runs with --from-single)") }.map(name))
    }

    /// Checks each count of canaries `document` states against the code's list.
    static func checkCanaries(in document: String, statesSome: Bool) throws {
        let listed = try listedCanaries()
        #expect(listed.all == Canary.allCases.map(\.rawValue), "zflux simulate --list-canaries: \(listed.all)")
        let expected: [CanaryGroup: Int] = [.all: listed.all.count, .pair: listed.pair.count, .single: listed.all.count - listed.pair.count]
        let stated = statedCanaryCounts(try read(document))
        if statesSome { #expect(!stated.isEmpty, "\(document) no longer says how many canaries there are") }
        for (what, group, count) in stated {
            #expect(
                count == expected[group],
                "\(document): \(what) says \(count) canaries \(group == .all ? "" : group.rawValue); the code has \(expected[group] ?? 0)")
        }
    }

    @Test("the README states as many canaries as the simulator has")
    func readmeCanaries() throws {
        try Self.checkCanaries(in: "README.md", statesSome: true)
    }

    @Test("docs/GUARANTEES.md states as many canaries as the simulator has, of a single dispatcher and of a pair")
    func guaranteesCanaries() throws {
        try Self.checkCanaries(in: "docs/GUARANTEES.md", statesSome: true)
        let stated = Self.statedCanaryCounts(try Self.read("docs/GUARANTEES.md"))
        #expect(
            Set(stated.map(\.group)) == [.all, .single, .pair], "docs/GUARANTEES.md counts all the canaries, those of one dispatcher and a pair's")
    }

    @Test("the canary counter reads the ways a document states a count, so a wrong one fails")
    func canaryCounter() {
        let counts = Self.statedCanaryCounts(
            "It has five canaries. There are 4 (`zflux simulate --list-canaries`): two of a single dispatcher (a, b) and\ntwo of a pair, which run with `--ha` (c, d, e)."
        )
        #expect(counts.map(\.count) == [5, 4, 2, 2, 2, 3])
        #expect(counts.map(\.group) == [.all, .all, .single, .single, .pair, .pair])
        // A word that is no number before "of a pair" is no count, and its parentheses no list.
        #expect(Self.statedCanaryCounts("a member of a pair under `sync` repairs it (PairFailoverTests \"a member…\")").isEmpty)
    }

    // MARK: environment.md, exit-codes.md, metrics.md

    @Test("environment.md names every environment variable the code reads, and only those of zflux's own that exist")
    func environment() throws {
        let page = try Self.read("docs/reference/environment.md")
        var read: Set<String> = []
        for (_, text) in try Self.sources() {
            for found in Self.matches("\\b(ZFLUX_[A-Z0-9_]*[A-Z0-9])\\b", in: text) { read.insert(found[0]) }
            for found in Self.matches("environment\\[\"([A-Za-z_][A-Za-z0-9_]*)\"\\]", in: text) { read.insert(found[0]) }
        }
        #expect(read.contains(CPUAffinity.environmentKey) && read.contains("ZFLUX_RUN_DIR"), "the scan finds the variables: \(read.sorted())")
        for name in read.sorted() { #expect(page.contains("`\(name)`"), "environment.md does not name \(name), which Sources/ reads") }
        let documented = Set(Self.matches("`(ZFLUX_[A-Z0-9_]+)`", in: page).map { $0[0] })
        #expect(documented.isSubset(of: read), "environment.md names \(documented.subtracting(read).sorted()), which no code reads")
    }

    @Test("exit-codes.md lists every exit status the binary uses, and no other")
    func exitCodes() throws {
        var used: Set<Int32> = []
        var symbolic: Set<String> = []
        for (_, text) in try Self.sources() {
            for found in Self.matches("(?:ExitCode|\\bexit)\\(([0-9]+)\\)", in: text) {
                if let code = Int32(found[0]) { used.insert(code) }
            }
            for found in Self.matches("ExitCode\\(([A-Za-z][A-Za-z.]*)\\)", in: text) { symbolic.insert(found[0]) }
        }
        // `status` is what the supervisor returns (0, or 1 when nodes kept dying); the pair's step-down has its own.
        #expect(symbolic == ["status", "Supervisor.steppedDownStatus"], "exits by a name this test does not know: \(symbolic.sorted())")
        used.insert(Supervisor.steppedDownStatus)
        let usage = try zflux(["dispatch"])
        #expect(usage.stderr.contains("Usage:") || usage.stderr.contains("USAGE:"), "a missing argument prints the usage: \(usage.stderr)")
        used.insert(usage.status)
        #expect(try zflux(["--help"]).status == 0)
        let page = try Self.read("docs/reference/exit-codes.md")
        let documented = Set(Self.matches("^\\| `([0-9]+)` \\|", in: page, options: .anchorsMatchLines).compactMap { Int32($0[0]) })
        #expect(documented == used, "exit-codes.md lists \(documented.sorted()); the binary exits with \(used.sorted())")
        #expect(usage.status == 64, "ArgumentParser's usage status, which the page names, is \(usage.status)")
    }

    /// A command of the binary, found in Sources/ZFluxCLI: its path below `zflux` ("quarantine list"),
    /// its parent's path (nil under the root), and whether its own code matches what was asked.
    struct CommandUse {
        var path: String
        var parent: String?
        var parentDoes: Bool
    }

    /// The commands whose code matches `pattern`, directly or through a top-level function of
    /// Sources/ZFluxCLI that does. A file is cut where a command's struct or a top-level declaration
    /// starts; each piece belongs to that command or function.
    static func commands(matching pattern: String) throws -> [CommandUse] {
        var pieces: [(owner: String?, isCommand: Bool, text: String)] = []
        for (path, text) in try sources() where path.hasPrefix("Sources/ZFluxCLI/") {
            var owner: String?, isCommand = false, lines: [String] = []
            for line in text.components(separatedBy: "\n") {
                let command = matches("^\\s*struct ([A-Za-z]+): (?:Async)?ParsableCommand", in: line).first?.first
                let function = matches("^(?:private |fileprivate )?func ([A-Za-z]+)", in: line).first?.first
                if command != nil || function != nil || matches("^(?:extension|struct|enum|class|final class) ", in: line).count > 0 {
                    pieces.append((owner, isCommand, lines.joined(separator: "\n")))
                    (owner, isCommand, lines) = (command ?? function, command != nil, [])
                }
                lines.append(line)
            }
            pieces.append((owner, isCommand, lines.joined(separator: "\n")))
        }
        var doing = Set(pieces.filter { !matches(pattern, in: $0.text).isEmpty }.compactMap(\.owner))
        let functions = Set(pieces.filter { !$0.isCommand }.compactMap(\.owner))
        while true {
            let callers = pieces.filter { piece in
                guard let owner = piece.owner, !doing.contains(owner) else { return false }
                return doing.intersection(functions).contains { !matches("\\b\($0)\\(", in: piece.text).isEmpty }
            }
            if callers.isEmpty { break }
            doing.formUnion(callers.compactMap(\.owner))
        }
        var names: [String: String] = [:], parents: [String: String] = [:]
        for piece in pieces where piece.isCommand {
            guard let type = piece.owner else { continue }
            names[type] = matches("commandName: \"([a-z-]+)\"", in: piece.text).first?.first ?? type.lowercased()
            for list in matches("subcommands: \\[([^\\]]*)\\]", in: piece.text) {
                for child in matches("([A-Za-z]+)\\.self", in: list[0]) { parents[child[0]] = type }
            }
        }
        func path(_ type: String) -> String? {
            guard type != "RootCommand", let name = names[type] else { return nil }
            return [parents[type].flatMap(path), name].compactMap { $0 }.joined(separator: " ")
        }
        return pieces.filter { $0.isCommand }.compactMap { piece in
            guard let type = piece.owner, doing.contains(type), let own = path(type) else { return nil }
            let parent = parents[type].flatMap(path)
            return CommandUse(path: own, parent: parent, parentDoes: parents[type].map { doing.contains($0) } ?? false)
        }
    }

    /// Whether a list of commands in a doc (its code spans, as `dispatch` or `bench --attach`) names
    /// `command`: by its path, or by its parent's when the parent does not itself do what the list is about.
    static func names(_ spans: [String], _ command: CommandUse) -> Bool {
        func named(_ path: String) -> Bool { spans.contains { $0 == path || $0.hasPrefix(path + " ") } }
        return named(command.path) || (command.parent.map { !command.parentDoes && named($0) } ?? false)
    }

    @Test("environment.md's ZFLUX_KEY row names every command that connects with it")
    func keyReaders() throws {
        let readers = try Self.commands(matching: "\\.cluster\\(\\)|\"ZFLUX_KEY\"")
        #expect(readers.contains { $0.path == "dispatch" } && readers.contains { $0.path == "devtools token" }, "\(readers.map(\.path))")
        let row = try #require(try Self.read("docs/reference/environment.md").components(separatedBy: "\n").first { $0.hasPrefix("| `ZFLUX_KEY` |") })
        let readBy = Self.codeSpans(row.components(separatedBy: "|")[2])
        for reader in readers { #expect(Self.names(readBy, reader), "environment.md's ZFLUX_KEY row does not name `\(reader.path)`, which reads it") }
    }

    @Test("exit-codes.md's rows for statuses 2 and 3 name every command that exits with them")
    func exitCodeCommands() throws {
        let page = try Self.read("docs/reference/exit-codes.md").components(separatedBy: "\n")
        for status in [2, 3] {
            let users = try Self.commands(matching: "ExitCode\\(\(status)\\)")
            #expect(!users.isEmpty, "some command exits with \(status)")
            let row = try #require(page.first { $0.hasPrefix("| `\(status)` |") })
            let spans = Self.codeSpans(row.components(separatedBy: "|").dropFirst(3).joined(separator: "|"))
            for user in users {
                #expect(Self.names(spans, user), "exit-codes.md's status \(status) does not name `\(user.path)`, which exits with it")
            }
        }
    }

    @Test("metrics.md names every metric the metrics port can serve, with the type the code gives it")
    func metrics() throws {
        let status = try Self.read("Sources/FluxProtocol/NodeStatus.swift")
        let block = try #require(
            status.components(separatedBy: "public var numericFields").dropFirst().first?.components(separatedBy: "return fields").first)
        let fields = Self.matches("\\(\"([a-z_]+)\", ", in: block).map { $0[0] }
        #expect(fields.count >= 20, "the scan finds NodeStatus's numeric fields: \(fields)")
        let server = try Self.read("Sources/Cluster/MetricsServer.swift")
        let fixed = Self.matches("label: \"(zflux_[a-z_]+)\"", in: server).map { $0[0] }
        #expect(Set(fixed) == ["zflux_up", "zflux_middleware_count_total"], "the metrics server's own names: \(fixed)")
        #expect(server.contains("\"zflux_\\(status.role.rawValue)_\\(field)\""), "metrics are still named zflux_<role>_<field>")
        let page = try Self.read("docs/reference/metrics.md")
        let documented = Set(Self.matches("^\\| `(zflux_[a-z_]+)` \\|", in: page, options: .anchorsMatchLines).map { $0[0] })
        var possible = Set(fixed)
        for field in fields {
            let suffix = MetricsServer.totals.contains(field) ? "_total" : ""
            let names = [NodeStatus.Role.dispatcher, .store].map { "zflux_\($0.rawValue)_\(field)\(suffix)" }
            possible.formUnion(names)
            #expect(
                names.contains { documented.contains($0) },
                "metrics.md has no metric for the status field \(field) (\(names.joined(separator: " or ")))")
        }
        for name in fixed { #expect(documented.contains(name), "metrics.md does not list \(name)") }
        #expect(documented.isSubset(of: possible), "metrics.md lists \(documented.subtracting(possible).sorted()), which the code never serves")
        // "Nine fields are running totals (`accepted`, …): they are counters": the count and the list are the code's.
        let flat = page.replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        let stated = try #require(
            Self.matches("\\b([A-Za-z]+|[0-9]+) fields are running totals \\(([^)]*)\\)", in: flat).first, "metrics.md counts the totals")
        let listed = Self.codeSpans(stated[1])
        #expect(Set(listed) == MetricsServer.totals, "metrics.md lists the running totals \(listed); the code's are \(MetricsServer.totals.sorted())")
        #expect(
            Self.number(stated[0]) == MetricsServer.totals.count,
            "metrics.md says \(stated[0]) running totals; the code has \(MetricsServer.totals.count)")
        #expect(
            MetricsServer.totals.isSubset(of: fields), "every running total is a status field: \(MetricsServer.totals.subtracting(fields).sorted())")
    }

    // MARK: troubleshooting.md and the index

    /// The literal parts of a message as the page writes it: words in capitals (DIR, NAME, N), the
    /// binary's name and "…" stand for what the code fills in.
    static func fragments(_ message: String) -> [String] {
        message.replacingOccurrences(of: "\\b(?:[A-Z][A-Z0-9_]*|zflux)\\b|…", with: "\u{0}", options: .regularExpression)
            .split(separator: "\u{0}").map(String.init).filter { $0.count >= 8 }
    }

    /// The code spans of a heading: one written between double backticks (it holds a backtick), or each
    /// one between single backticks.
    static func codeSpans(_ text: String) -> [String] {
        if let open = text.range(of: "`` "), let close = text.range(of: " ``", range: open.upperBound..<text.endIndex) {
            return [String(text[open.upperBound..<close.lowerBound])]
        }
        return text.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
    }

    @Test("every message troubleshooting.md quotes is one the code prints")
    func troubleshootingMessages() throws {
        // String literals joined with `+` across lines read as one.
        let code = try Self.sources().map(\.text).joined(separator: "\n")
            .replacingOccurrences(of: "\"\\s*\\+\\s*\"", with: "", options: .regularExpression)
        let page = try Self.read("docs/reference/troubleshooting.md")
        var quoted: [String] = []
        var reasons = false
        for line in page.components(separatedBy: "\n") {
            if line.hasPrefix("### ") { quoted += Self.codeSpans(String(line.dropFirst(4))) }
            if line.hasPrefix("| reason |") { reasons = true } else if !line.hasPrefix("|") { reasons = false }
            if reasons, line.hasPrefix("| `"), let first = Self.firstCode(line) { quoted.append(first) }
        }
        #expect(quoted.count >= 20, "the page's messages are found: \(quoted)")
        for message in quoted {
            for fragment in Self.fragments(message) where !code.contains(fragment) {
                Issue.record("troubleshooting.md quotes \"\(message)\", and no source prints \"\(fragment)\"")
            }
        }
    }

    // MARK: ARCHITECTURE.md

    @Test("every name ARCHITECTURE.md's \"Where to look for…\" table points at is declared in Sources/ (a file, a type, a member)")
    func whereToLook() throws {
        let page = try Self.read("docs/ARCHITECTURE.md")
        let table = try #require(page.components(separatedBy: "## Where to look for").dropFirst().first?.components(separatedBy: "\n## ").first)
        let sources = try Self.sources()
        let code = sources.map(\.text).joined(separator: "\n")
        let files = Set(sources.map { URL(fileURLWithPath: $0.path).lastPathComponent })
        func declared(_ name: String) -> Bool {
            !Self.matches("\\b(?:func|var|let|case|struct|class|enum|protocol|actor|typealias) \(name)\\b", in: code).isEmpty
        }
        var checked = 0
        for line in table.components(separatedBy: "\n") where line.hasPrefix("| ") && !line.hasPrefix("| rule") {
            let cells = line.components(separatedBy: " | ")
            guard let places = cells.last else { continue }
            for span in Self.codeSpans(places) {
                checked += 1
                if span.hasSuffix(".swift") {
                    #expect(files.contains(span), "ARCHITECTURE.md points at \(span), which is no file in Sources/")
                    continue
                }
                // `Type.member(label:)`, `.caseName`, `name`: each part is declared somewhere.
                let name = span.components(separatedBy: "(").first ?? span
                for part in name.split(separator: ".").map(String.init) where !part.isEmpty {
                    #expect(declared(part), "ARCHITECTURE.md points at `\(span)`, and nothing in Sources/ declares \(part)")
                }
            }
        }
        #expect(checked >= 40, "the table's names are found: \(checked)")
    }

    // MARK: TESTING.md

    @Test("TESTING.md names every test target and every suite of real processes, and runs the pair's tests with the Makefile's filter")
    func testingPage() throws {
        let page = try Self.read("docs/TESTING.md")
        let targets = Self.matches("testTarget\\(\\s*name: \"([A-Za-z]+)\"", in: try Self.read("Package.swift")).map { $0[0] }
        #expect(targets.count >= 15, "the scan finds the test targets: \(targets)")
        for target in targets { #expect(page.contains(target), "TESTING.md does not name the test target \(target)") }
        let directory = Self.root.appendingPathComponent("Tests/IntegrationTests")
        var suites: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for found in Self.matches("@Suite[^\\n]*\\n(?:[^\\n]*\\n)?struct ([A-Za-z]+)", in: text) { suites.insert(found[0]) }
        }
        #expect(suites.contains("ScheduleProcessTests") && suites.contains("ReferenceDocsTests"), "the scan finds the suites: \(suites.sorted())")
        for suite in suites.sorted() { #expect(page.contains("`\(suite)`"), "TESTING.md does not name the suite \(suite)") }
        // The pair's tests: the filter the page shows is the Makefile's, and each name in it is a suite or a test.
        let makefile = try #require(Self.matches("^HA_TESTS := (.+)$", in: try Self.read("Makefile"), options: .anchorsMatchLines).first?.first)
        let shown = Self.matches("--filter '([A-Za-z|]+Tests[A-Za-z|]*)'", in: page).map { $0[0] }.filter { $0.contains("Leadership") }
        #expect(
            shown.count >= 2 && shown.allSatisfy { $0 == makefile },
            "TESTING.md filters the pair's tests with \(shown); the Makefile with \(makefile)")
        let tests = try FileManager.default.subpathsOfDirectory(atPath: Self.root.appendingPathComponent("Tests").path).filter {
            $0.hasSuffix(".swift")
        }
        .map { try String(contentsOf: Self.root.appendingPathComponent("Tests/\($0)"), encoding: .utf8) }.joined()
        for name in makefile.split(separator: "|") {
            #expect(
                targets.contains(String(name)) || tests.contains("struct \(name)") || tests.contains("func \(name)("),
                "the Makefile's HA_TESTS names \(name), which is no test target, suite or test")
        }
    }

    @Test("the reference index links every page of docs/reference/")
    func index() throws {
        let directory = Self.root.appendingPathComponent("docs/reference")
        let pages = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".md") && $0 != "README.md" }
        let index = try Self.read("docs/reference/README.md")
        #expect(pages.count >= 6)
        for page in pages { #expect(index.contains("](\(page))"), "docs/reference/README.md does not link \(page)") }
    }
}
