import FluxFormat
import Foundation

/// The values a cluster config gives the keys of its one-of tables (`[cluster]`, `[journal]`, `[ha]` …),
/// by setting: how a key travels from the config to the nodes' rules in the topology
/// (`cluster.json`) without a field of its own on the way. A node's rules read a key with
/// ``value(_:)``: the config's value, else the key's default.
package struct SettingValues: Codable, Equatable, Sendable {
    /// One value, as a config holds it.
    package enum Scalar: Codable, Equatable, Sendable {
        case integer(Int)
        case text(String)
        case flag(Bool)

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let integer = try? container.decode(Int.self) {
                self = .integer(integer)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .integer(let value): try container.encode(value)
            case .text(let value): try container.encode(value)
            case .flag(let value): try container.encode(value)
            }
        }
    }

    /// By "table.key".
    private var values: [String: Scalar]

    package init() { values = [:] }

    /// The values of `config` (any Encodable whose top-level keys are the tables and theirs the keys,
    /// as the config file writes them) for every setting of a one-of table; a key it leaves out has none.
    package init(config: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = Settings.keyEncoding
        let tables = try JSONDecoder().decode([String: Table].self, from: encoder.encode(config))
        values = [:]
        for setting in Settings.all {
            if let value = tables[setting.table]?.entries[setting.key] { values["\(setting.table).\(setting.key)"] = value }
        }
    }

    /// A table of the encoded config: its scalar entries (an array of tables, or a key holding an array
    /// or a table, has none here).
    private struct Table: Decodable {
        var entries: [String: Scalar] = [:]

        init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: Key.self) else { return }
            for key in container.allKeys {
                if let value = try? container.decode(Scalar.self, forKey: key) { entries[key.stringValue] = value }
            }
        }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// What the config gives `setting` (nil: it leaves the key out).
    package subscript<Value: SettingValue>(setting: Setting<Value>) -> Value? {
        values["\(setting.table).\(setting.key)"].flatMap(Value.init(scalar:))
    }

    /// The value in force of `setting`: the config's, else the key's default.
    package func value<Value: SettingValue>(_ setting: Setting<Value>) -> Value { setting.value(self[setting]) }
}
