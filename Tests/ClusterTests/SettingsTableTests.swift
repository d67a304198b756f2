import FluxCore
import Foundation
import NodeSupport
import Testing

@testable import Cluster

/// Where a setting is declared: once, in `Settings` (FluxProtocol/Settings.swift), with its key, type,
/// default, range and doc line. The config reader's known keys and range checks, the defaults the
/// nodes start from and docs/reference/config.md's tables all come from there, and no other source
/// file spells a default.
@Suite("One home per setting")
struct SettingsTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let pagePath = root.appendingPathComponent("docs/reference/config.md")

    @Test("each setting has a doc line, a default or a word on it, and its row in config.md's table of its section")
    func declaredOnce() throws {
        var seen = Set<String>()
        for setting in Settings.all {
            #expect(seen.insert("\(setting.table).\(setting.key)").inserted, "\(setting.table).\(setting.key) is declared twice")
            #expect(Settings.tables.contains(setting.table))
            #expect(setting.pageRow.hasPrefix("| `\(setting.key)` |") && !setting.pageRow.hasSuffix("|  |"), "\(setting.key) has no doc line")
        }
        let page = try String(contentsOf: Self.pagePath, encoding: .utf8)
        let written = Settings.rewritingTables(of: page)
        if ProcessInfo.processInfo.environment["ZFLUX_WRITE_REFERENCE"] == "1", written != page {
            try written.write(to: Self.pagePath, atomically: true, encoding: .utf8)
        }
        #expect(written == page, "config.md's tables are not the settings' rows: run this test with ZFLUX_WRITE_REFERENCE=1 to write them")
        for table in Settings.tables {
            let rows = Settings.pageTable(table).joined(separator: "\n")
            #expect(page.contains(rows), "config.md has no table of \(table) as the settings write it")
        }
    }

    @Test("the keys the config format reads are the settings: each section's fields are its table's settings' keys in camel case")
    func everyKeyIsASetting() {
        func keys(_ table: String) -> Set<String> { Set(Settings.all.filter { $0.table == table }.map { Settings.fieldName(ofKey: $0.key) }) }
        func fields(_ section: Any) -> Set<String> { Set(Mirror(reflecting: section).children.compactMap(\.label)) }
        #expect(fields(ClusterConfig.ClusterSection()) == keys("cluster"))
        #expect(fields(ClusterConfig.DispatcherSection()) == keys("dispatcher"))
        #expect(fields(ClusterConfig.DispatcherMemberSection(name: "d1")) == keys("[dispatcher]"))
        #expect(fields(ClusterConfig.HighAvailabilitySection(etcd: [])) == keys("ha"))
        #expect(fields(ClusterConfig.JournalSection()) == keys("journal"))
        #expect(fields(ClusterConfig.LimitsSection()) == keys("limits"))
        #expect(fields(ClusterConfig.SecuritySection(serverKey: "", clientKey: "", authorizedKeys: "")) == keys("security"))
        #expect(fields(ClusterConfig.RestartSection()) == keys("restart"))
        #expect(fields(ClusterConfig.DevtoolsSection()) == keys("devtools"))
        #expect(fields(ClusterConfig.StoreSection(name: "todo")) == keys("store"))
        #expect(ClusterConfig.knownKeys["cluster"] == Set(Settings.all.filter { $0.table == "cluster" }.map(\.key)))
        #expect(
            Settings.fieldName(ofKey: "unauthenticated_replication") == "unauthenticatedReplication"
                && Settings.fieldName(ofKey: "window_s") == "windowS")
    }

    @Test(
        "a config travels through its file by the settings' keys: every key written as the file spells it, read back the same, and named so in errors"
    )
    func fileKeysAreTheSettings() throws {
        var journal = ClusterConfig.JournalSection(directory: "j", fsync: "none", segmentMb: 8, snapshotDirectory: "s", snapshotEvery: 9)
        journal.retainMb = 100
        let config = ClusterConfig(
            cluster: .init(
                transport: "tcp", host: "127.0.0.1", basePort: 5000, heartbeatMs: 100, highWaterMark: 10, queueMb: 2, allowRemote: false,
                codec: "json", timeoutMs: 3000, name: "shop"),
            journal: journal, limits: .init(clientRate: 5, maxPayloadBytes: 100, payload: ["todo.add_todo": 50, "todo.addTodo": 60]),
            security: .init(serverKey: "a", clientKey: "b", authorizedKeys: "c"), restart: .init(maxRestarts: 3, windowS: 10),
            stores: [
                .init(
                    name: "todo", app: "todo", effects: false, host: "h", listen: "l", port: 6000, metricsPort: 7000, metricsListen: "m",
                    environment: "mock")
            ],
            ha: .init(etcd: ["http://127.0.0.1:2379"], leaseMs: 4000, replication: "async", key: "/k", unauthenticatedReplication: true),
            dispatchers: [.init(name: "d1", host: "h", listen: "l", port: 5000, metricsPort: 7001, metricsListen: "m", journal: "j1", key: "k1")],
            devtools: .init(listen: "127.0.0.1:1", tokenFile: "t", maxConnections: 2, key: "k"))
        let text = try config.tomlText()
        for setting in Settings.all where setting.table != "dispatcher" {
            // A table of integers is a table of its own: `[limits.payload]`.
            #expect(
                text.contains("\n\(setting.key) = ") || text.contains("[\(setting.table).\(setting.key)]"),
                "\(setting.table).\(setting.key) is not in\n\(text)")
        }
        // An action type in [limits] payload is a name of the app's, kept as it is both ways.
        #expect(text.contains("\"todo.add_todo\" = 50") && text.contains("\"todo.addTodo\" = 60"))
        let read = try ClusterConfig.parse(text, source: "written")
        #expect(read.cluster == config.cluster && read.journal == config.journal && read.limits == config.limits)
        #expect(read.security == config.security && read.restart == config.restart && read.stores == config.stores)
        #expect(read.ha == config.ha && read.dispatchers == config.dispatchers && read.devtools == config.devtools)
        let dispatcher = ClusterConfig(dispatcher: .init(host: "h", listen: "l", port: 5000, metricsPort: 7000, metricsListen: "m"))
        #expect(try ClusterConfig.parse(try dispatcher.tomlText(), source: "written").dispatcher == dispatcher.dispatcher)
        // A field's name is no key of the file's, and a wrong type is named by the key and its line.
        #expect(throws: ClusterError.self) { try ClusterConfig.parse("[cluster]\nheartbeatMs = 100\n", source: "c") }
        do {
            _ = try ClusterConfig.parse("[[store]]\nname = \"todo\"\nmetrics_port = \"x\"\n", source: "c")
            Issue.record("a string metrics_port was read")
        } catch let error as ClusterError {
            #expect(error.description.hasPrefix("c:3: 'store[1].metrics_port' takes a whole number"), "\(error)")
        }
    }

    @Test("the dispatcher's and a store's placement keys reach their endpoints one way: listen, metrics_port, and metrics_listen or its default")
    func placementReachesTheTopology() throws {
        let config = ClusterConfig(
            cluster: .init(transport: "tcp", basePort: 5000),
            dispatcher: .init(listen: "127.0.0.2", metricsPort: 7000),
            stores: [
                .init(name: "todo", listen: "127.0.0.3", metricsPort: 7001, metricsListen: "127.0.0.4"),
                .init(name: "stats", app: "todo", effects: false),
            ])
        let topology = try config.topology(runDirectory: "/tmp", transportOverride: nil, basePortOverride: nil, apps: nil)
        #expect(topology.dispatcher.listen == "127.0.0.2" && topology.dispatcher.metricsPort == 7000)
        #expect(topology.dispatcher.metricsListen == Settings.Dispatcher.metricsListen.fallback)
        #expect(topology.stores[0].listen == "127.0.0.3" && topology.stores[0].metricsPort == 7001 && topology.stores[0].metricsListen == "127.0.0.4")
        #expect(topology.stores[1].listen == nil && topology.stores[1].metricsPort == nil && topology.stores[1].metricsListen == nil)
        // One placement check for every table: a store's metrics port may not be the dispatcher's.
        var clash = config
        clash.stores?[1].metricsPort = 7000
        #expect(throws: ClusterError.self) { try clash.topology(runDirectory: "/tmp", transportOverride: nil, basePortOverride: nil, apps: nil) }
    }

    @Test("the constants named after a setting hold its default, and its range where the code has one of its own")
    func constantsFollowTheSettings() {
        #expect(SocketDefaults.queueBytes == Settings.Cluster.queueMb.fallback << 20)
        #expect(Int(SocketDefaults.highWaterMarkMessages) == Settings.Cluster.highWaterMark.fallback)
        #expect(SocketDefaults.maxPayloadBytes == Settings.Limits.maxPayloadBytes.bounds.upperBound)
        #expect(ClusterConfig.DevtoolsSection.connectionRange == Settings.Devtools.maxConnections.bounds)
        #expect(RunDirectory.journalName == Settings.Journal.directory.fallback)
        #expect(Topology.defaultTimeoutMilliseconds == Settings.Cluster.timeoutMs.fallback)
        let restart = Supervisor.RestartPolicy()
        #expect(restart.maxRestarts == Settings.Restart.maxRestarts.fallback && restart.window == .seconds(Settings.Restart.windowS.fallback))
        let configured = Supervisor.RestartPolicy(Topology.RestartPolicy(maxRestarts: 2, windowSeconds: 9))
        #expect(configured.maxRestarts == 2 && configured.window == .seconds(9) && Supervisor.RestartPolicy(nil).maxRestarts == restart.maxRestarts)
    }

    /// Every Swift file under Sources/ but the settings' own, by its path in the package.
    static func sources() throws -> [(path: String, text: String)] {
        let directory = root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var files: [(String, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") && relative != "FluxProtocol/Settings.swift" {
            files.append(("Sources/" + relative, try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8)))
        }
        return files
    }

    @Test("no source file but the settings' spells a setting's default: no literal after a config value's ??, nor as a parameter's default")
    func noOtherDefault() throws {
        // A config section's value with a literal fallback: `cluster?.heartbeatMs ?? 200`.
        let fallback = try NSRegularExpression(
            pattern:
                #"\b(topology|store|durability|cluster|journal|limits|ha|restart|devtools|dispatcher|entry|member|security|configured)\??\.[a-zA-Z]+ \?\? (-?[0-9]|"|true\b|false\b|\.[a-z])"#
        )
        // A parameter named after a setting with a literal default: `segmentBytes: Int = 64 << 20`.
        let parameter = try NSRegularExpression(
            pattern:
                #"\b(segmentBytes|leaseMilliseconds|snapshotEveryActions|maxPayloadBytes|queueBytes|replication|policy|fsync|basePort|maxRestarts|maxConnections): [A-Za-z.]+ = (-?[0-9]|"|\.[a-z])"#
        )
        var found: [String] = []
        for (path, text) in try Self.sources() {
            for (number, line) in text.components(separatedBy: "\n").enumerated() {
                let range = NSRange(line.startIndex..., in: line)
                if fallback.firstMatch(in: line, range: range) != nil || parameter.firstMatch(in: line, range: range) != nil {
                    found.append("\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(found.isEmpty, "defaults spelled outside Settings.swift:\n\(found.joined(separator: "\n"))")
    }
}
