import FluxCore
import Foundation
import TOML

/// The keys a config may hold, and the line each one is on: what the parse itself checks, before any
/// rule of the topology (``ClusterConfig/parse(_:source:)``). Kept apart from the rules so the fuzzer
/// can build the parse without the node modules (scripts/fuzz.sh).
extension ClusterConfig {
    /// Every key a config may hold, by table (``Settings/all``); anything else is refused (a typo must
    /// not pass silently). Under "" the tables themselves.
    static let knownKeys: [String: Set<String>] = Dictionary(grouping: Settings.all, by: \.table).mapValues { Set($0.map(\.key)) }
        .merging(["": Set(Settings.tables.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) })]) { known, _ in known }

    /// "FILE:LINE: message", the line being where `key` is set in `table` (in its `storeIndex`-th entry
    /// for an array of tables: `[[store]]`, `[[dispatcher]]`).
    func error(_ message: String, key: String? = nil, table: String? = nil, storeIndex: Int? = nil) -> ClusterError {
        ClusterError(
            "\(source ?? "config"):\(ClusterConfig.line(in: text ?? "", key: key, table: table, storeIndex: storeIndex).map { "\($0): " } ?? " ")\(message)"
        )
    }

    static func line(in text: String, key: String?, table: String?, storeIndex: Int?) -> Int? {
        var current = "", entryCount = -1
        var tableLine: Int?
        // A key that names a table is on its header's line: `[clustr]` at the top, `[cluster.x]`.
        let header = key.map { (table ?? "").isEmpty ? $0 : "\(table ?? "").\($0)" }
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.hasPrefix("[") {
                current = line.split(separator: "#").first.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[] \t")) } ?? ""
                if line.hasPrefix("[["), current == table { entryCount += 1 }
                if let header, current == header, storeIndex == nil { return index + 1 }
            } else {
                guard current == (table ?? ""), storeIndex == nil || storeIndex == entryCount else { continue }
                if tableLine == nil { tableLine = index }
                if let key, line.hasPrefix(key), line.dropFirst(key.count).trimmingCharacters(in: .whitespaces).hasPrefix("=") {
                    return index + 1
                }
                continue
            }
            if current == (table ?? ""), storeIndex == nil || storeIndex == entryCount, key == nil { return index + 1 }
        }
        return tableLine.map { $0 + 1 }
    }

    /// Refuses keys the config format does not have, naming the line.
    func checkKeys() throws {
        guard let text, let table = try? TOMLParser.parse(text) else { return }
        func check(_ table: TOMLTable, name: String, storeIndex: Int?) throws {
            // An array of tables' keys are listed under "[name]" when it may also be a table.
            let isEntry = storeIndex != nil
            let known = ClusterConfig.knownKeys[isEntry && name != "store" ? "[\(name)]" : name] ?? []
            for key in table.keys where !known.contains(key) {
                let place = name.isEmpty ? "at the top level" : (isEntry ? "in [[\(name)]]" : "in [\(name)]")
                throw error(
                    "unknown key '\(key)' \(place) (known: \(known.sorted().joined(separator: ", ")))",
                    key: key, table: name, storeIndex: storeIndex)
            }
        }
        try check(table, name: "", storeIndex: nil)
        for name in ["cluster", "dispatcher", "journal", "limits", "security", "restart", "ha", "devtools"] {
            if let sub = table[name]?.table { try check(sub, name: name, storeIndex: nil) }
        }
        for name in ["store", "dispatcher"] {
            guard let entries = table[name]?.array else { continue }
            for (index, entry) in entries.enumerated() {
                if let sub = entry.table { try check(sub, name: name, storeIndex: index) }
            }
        }
    }
}
