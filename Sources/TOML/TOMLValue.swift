/// A TOML value as the parser reads it: the kind a document wrote is kept (an integer stays an
/// integer, a date-time stays apart from a string).
package indirect enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case bool(Bool)
    /// An offset or local date-time, a local date or a local time, as written (with `T` for a space).
    case dateTime(String)
    case array([TOMLValue])
    case table(TOMLTable)

    package var string: String? { if case .string(let value) = self { value } else { nil } }
    package var int: Int? { if case .integer(let value) = self { Int(exactly: value) } else { nil } }
    package var double: Double? { if case .float(let value) = self { value } else { nil } }
    package var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    package var array: [TOMLValue]? { if case .array(let value) = self { value } else { nil } }
    package var table: TOMLTable? { if case .table(let value) = self { value } else { nil } }

    /// What a message names this kind as: "an integer", "a table".
    package var kindName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .bool: "a boolean"
        case .dateTime: "a date-time"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

/// A TOML table: its keys in the order the document wrote them, each with its value.
package struct TOMLTable: Sendable, Equatable {
    package private(set) var keys: [String] = []
    private var values: [String: TOMLValue] = [:]

    package init() {}

    package subscript(key: String) -> TOMLValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    package var isEmpty: Bool { keys.isEmpty }

    /// Each key with its value, in the document's order.
    package var entries: [(key: String, value: TOMLValue)] { keys.compactMap { key in values[key].map { (key, $0) } } }

    /// Equal when they hold the same keys with equal values, in any order: TOML gives a table's keys
    /// no meaning by their order.
    package static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool { lhs.values == rhs.values }
}

/// Why a document is not TOML, and the 1-based line where the parser found out.
package struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    package let line: Int
    package let message: String

    package init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }

    package var description: String { message }
}
