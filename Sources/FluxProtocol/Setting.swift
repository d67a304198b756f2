import FluxFormat
import Foundation

/// A value a cluster config key holds, as the reference page names its type and writes it.
package protocol SettingValue: Sendable, Equatable {
    /// The type's name on the page: "integer", "string".
    static var typeName: String { get }
    /// The value as the page writes it in a code span.
    var pageText: String { get }
    /// The value a config holds as `scalar` (nil: another type; an array or a table is never one).
    init?(scalar: SettingValues.Scalar)
}

extension SettingValue where Self: RawRepresentable, RawValue == String {
    package static var typeName: String { "string" }
    package var pageText: String { rawValue }
    package init?(scalar: SettingValues.Scalar) {
        guard case .text(let text) = scalar else { return nil }
        self.init(rawValue: text)
    }
}

extension Int: SettingValue {
    package static var typeName: String { "integer" }
    package var pageText: String { String(self) }
    package init?(scalar: SettingValues.Scalar) {
        guard case .integer(let value) = scalar else { return nil }
        self = value
    }
}

extension Bool: SettingValue {
    package static var typeName: String { "boolean" }
    package var pageText: String { String(self) }
    package init?(scalar: SettingValues.Scalar) {
        guard case .flag(let value) = scalar else { return nil }
        self = value
    }
}

extension String: SettingValue {
    package static var typeName: String { "string" }
    package var pageText: String { self }
    package init?(scalar: SettingValues.Scalar) {
        guard case .text(let value) = scalar else { return nil }
        self = value
    }
}

extension Array: SettingValue where Element == String {
    package static var typeName: String { "array of strings" }
    package var pageText: String { "[" + map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
    package init?(scalar: SettingValues.Scalar) { return nil }
}

extension Dictionary: SettingValue where Key == String, Value == Int {
    package static var typeName: String { "table of integers" }
    package var pageText: String { "{ " + sorted { $0.key < $1.key }.map { "\"\($0.key)\" = \($0.value)" }.joined(separator: ", ") + " }" }
    package init?(scalar: SettingValues.Scalar) { return nil }
}

extension FsyncPolicy: SettingValue {}
extension WireCodec.Format: SettingValue {}

/// One key of the cluster config, whatever its type: what the reader, the checks and the reference
/// page need to know of it.
package protocol AnySetting: Sendable {
    /// Its table: "cluster", "dispatcher" (`[dispatcher]`), "[dispatcher]" (an entry of
    /// `[[dispatcher]]`), "store" (an entry of `[[store]]`) … (``Settings/tables``).
    var table: String { get }
    var key: String { get }
    /// Its row of the reference page: `| key | type | default | allowed | used by |`.
    var pageRow: String { get }
}

/// One key of the cluster config: where it is, its type, its default, the whole numbers it takes and
/// who acts on it, written once (``Settings``).
package struct Setting<Value: SettingValue>: AnySetting {
    package let table: String
    package let key: String
    /// What follows the type's name on the page: " (ms)", " (path), required".
    package let unit: String
    /// What the code applies when the config leaves the key out (nil: nothing fixed; ``defaultNote`` says
    /// what happens then).
    package let defaultValue: Value?
    /// The page's words after the default, or in its place when there is none.
    package let defaultNote: String
    /// The least and the greatest whole number the key takes (each entry's, for a table of integers).
    package let minimum: Int?
    package let maximum: Int?
    /// What else the key must satisfy, in the page's words (after the range, when it has one).
    package let rule: String
    /// Who acts on the key, and how: the page's "used by".
    package let doc: String

    package init(
        _ table: String, _ key: String, unit: String = "", default defaultValue: Value? = nil, defaultNote: String = "", minimum: Int? = nil,
        maximum: Int? = nil, rule: String = "", doc: String
    ) {
        precondition(Settings.tables.contains(table), "setting \(key): no table \(table)")
        precondition(!doc.isEmpty, "setting \(table).\(key) has no doc line")
        precondition(defaultValue != nil || !defaultNote.isEmpty, "setting \(table).\(key) says nothing of its default")
        precondition(minimum.map { low in maximum.map { low <= $0 } ?? true } ?? (maximum == nil), "setting \(table).\(key): empty range")
        self.table = table
        self.key = key
        self.unit = unit
        self.defaultValue = defaultValue
        self.defaultNote = defaultNote
        self.minimum = minimum
        self.maximum = maximum
        self.rule = rule
        self.doc = doc
    }

    /// The default, for a key that has one.
    package var fallback: Value {
        guard let defaultValue else { preconditionFailure("setting \(table).\(key) has no default") }
        return defaultValue
    }

    /// The value in force: `configured`, else the default.
    package func value(_ configured: Value?) -> Value { configured ?? fallback }

    /// The key's range, for a key with both bounds.
    package var bounds: ClosedRange<Int> {
        guard let minimum, let maximum else { preconditionFailure("setting \(table).\(key) has no upper and lower bound") }
        return minimum...maximum
    }

    /// Whether `number` is in the key's range (always, for a key without one).
    package func allows(_ number: Int) -> Bool {
        (minimum.map { number >= $0 } ?? true) && (maximum.map { number <= $0 } ?? true)
    }

    /// What is wrong with `number` for this key, in the reader's words ("heartbeat_ms must be between 10
    /// and 60000"), or nil when it is in range.
    package func problem(_ number: Int) -> String? {
        guard !allows(number) else { return nil }
        switch (minimum, maximum) {
        case (let low?, let high?): return "\(key) must be between \(low) and \(high)"
        case (let low?, nil): return "\(key) must be at least \(low)"
        case (nil, let high?): return "\(key) must be at most \(high)"
        case (nil, nil): preconditionFailure("a key without a range refused \(number)")
        }
    }

    package var pageRow: String {
        var range = ""
        switch (minimum, maximum) {
        case (let low?, let high?): range = "\(low)–\(high)"
        case (let low?, nil): range = "at least \(low)"
        default: break
        }
        let allowed = range + rule
        let fixed = defaultValue.map { "`\($0.pageText)`" } ?? ""
        return "| `\(key)` | \(Value.typeName)\(unit) | \(fixed)\(defaultNote) | \(allowed.isEmpty ? "—" : allowed) | \(doc) |"
    }
}

extension Settings {
    /// The reference page's table of `table` (docs/reference/config.md): its header and a row per key.
    package static func pageTable(_ table: String) -> [String] {
        precondition(tables.contains(table), "no table \(table)")
        return ["| key | type | default | allowed | used by |", "| --- | --- | --- | --- | --- |"] + all.filter { $0.table == table }.map(\.pageRow)
    }

    /// `page` (docs/reference/config.md) with each table's rows written from the settings: the table
    /// under the heading `## [name]` (`## [[name]]` for an array of tables).
    package static func rewritingTables(of page: String) -> String {
        var lines: [String] = [], table: String?, skipping = false
        for line in page.components(separatedBy: "\n") {
            if line.hasPrefix("## ") {
                let heading = String(line.dropFirst(3))
                let name = heading.trimmingCharacters(in: .init(charactersIn: "[]"))
                table = heading.hasPrefix("[[") ? (name == "store" ? name : "[\(name)]") : heading.hasPrefix("[") ? name : nil
            }
            if skipping, line.hasPrefix("|") { continue }
            skipping = false
            if let current = table, line.hasPrefix("| key |") {
                lines += pageTable(current)
                skipping = true
                continue
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
