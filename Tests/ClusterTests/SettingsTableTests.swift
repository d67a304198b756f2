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

    @Test("the keys the config format reads are the settings: each section's fields and its table's settings are the same keys")
    func everyKeyIsASetting() {
        func keys(_ table: String) -> Set<String> { Set(Settings.all.filter { $0.table == table }.map(\.key)) }
        #expect(Set(ClusterConfig.ClusterSection.CodingKeys.allCases.map(\.rawValue)) == keys("cluster"))
        #expect(Set(ClusterConfig.DispatcherSection.CodingKeys.allCases.map(\.rawValue)) == keys("dispatcher"))
        #expect(Set(ClusterConfig.DispatcherMemberSection.CodingKeys.allCases.map(\.rawValue)) == keys("[dispatcher]"))
        #expect(Set(ClusterConfig.HighAvailabilitySection.CodingKeys.allCases.map(\.rawValue)) == keys("ha"))
        #expect(Set(ClusterConfig.JournalSection.CodingKeys.allCases.map(\.rawValue)) == keys("journal"))
        #expect(Set(ClusterConfig.LimitsSection.CodingKeys.allCases.map(\.rawValue)) == keys("limits"))
        #expect(Set(ClusterConfig.SecuritySection.CodingKeys.allCases.map(\.rawValue)) == keys("security"))
        #expect(Set(ClusterConfig.RestartSection.CodingKeys.allCases.map(\.rawValue)) == keys("restart"))
        #expect(Set(ClusterConfig.DevtoolsSection.CodingKeys.allCases.map(\.rawValue)) == keys("devtools"))
        #expect(Set(ClusterConfig.StoreSection.CodingKeys.allCases.map(\.rawValue)) == keys("store"))
        #expect(ClusterConfig.knownKeys["cluster"] == keys("cluster") && ClusterConfig.knownKeys["[dispatcher]"] == keys("[dispatcher]"))
    }

    @Test("the constants named after a setting hold its default, and its range where the code has one of its own")
    func constantsFollowTheSettings() {
        #expect(SocketDefaults.queueBytes == Settings.Cluster.queueMb.fallback << 20)
        #expect(Int(SocketDefaults.highWaterMarkMessages) == Settings.Cluster.highWaterMark.fallback)
        #expect(SocketDefaults.maxPayloadBytes == Settings.Limits.maxPayloadBytes.bounds.upperBound)
        #expect(ClusterConfig.DevtoolsSection.connectionRange == Settings.Devtools.maxConnections.bounds)
        #expect(RunDirectory.journalName == Settings.Journal.directory.fallback)
        #expect(Topology.defaultTimeoutMilliseconds == Settings.Cluster.timeoutMs.fallback)
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
