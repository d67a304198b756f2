import Foundation

/// How a config section's fields are named in the file: each field is a setting's key in camel case
/// (`heartbeat_ms` is `heartbeatMs`), so the sections declare no coding keys of their own, and a key
/// is spelled once, in its ``Setting``. The config's readers and writers (TOML, and the topology's
/// ``SettingValues``) code a config with these strategies.
extension Settings {
    /// The field that stands for `key` in its section's type: the key in camel case.
    package static func fieldName(ofKey key: String) -> String {
        let words = key.split(separator: "_")
        return words.prefix(1).joined() + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// By table: each setting's key by its field's name, and its field's name by its key.
    private static let keysByField: [String: [String: String]] = Dictionary(grouping: all, by: \.table).mapValues {
        Dictionary(uniqueKeysWithValues: $0.map { (fieldName(ofKey: $0.key), $0.key) })
    }
    private static let fieldsByKey: [String: [String: String]] = keysByField.mapValues {
        Dictionary(uniqueKeysWithValues: $0.map { ($0.value, $0.key) })
    }

    /// The table whose key `path` ends with: `[cluster]`'s for `cluster.heartbeat_ms`, an entry of
    /// `[[store]]`'s (or `[[dispatcher]]`'s) for `store[0].port`; nil for a table's name and for what is
    /// inside a key's value (`[limits] payload`'s action types).
    private static func table(endingWith path: [any CodingKey]) -> String? {
        switch path.count {
        case 2 where path[0].intValue == nil: path[0].stringValue
        case 3 where path[0].intValue == nil && path[1].intValue != nil: path[0].stringValue == "store" ? "store" : "[\(path[0].stringValue)]"
        default: nil
        }
    }

    /// The key the last step of `path` names in the file: a field's setting's key, or the step as it is.
    package static func fileKey(at path: [any CodingKey]) -> String {
        guard let last = path.last else { return "" }
        return table(endingWith: path).flatMap { keysByField[$0]?[last.stringValue] } ?? last.stringValue
    }

    /// Writes a section's fields under their settings' keys.
    package static let keyEncoding = JSONEncoder.KeyEncodingStrategy.custom { path in AnyKey(fileKey(at: path)) }

    /// Reads a setting's key into its field. A key that is no setting of its table reaches no field (the
    /// reader refuses it by name, ``knownKeys``), even one spelled as a field is.
    package static let keyDecoding = JSONDecoder.KeyDecodingStrategy.custom { path in
        guard let last = path.last, let table = table(endingWith: path) else { return path.last ?? AnyKey("") }
        return AnyKey(fieldsByKey[table]?[last.stringValue] ?? "\u{0}" + last.stringValue)
    }

    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
