import Foundation

/// Decodes a `Decodable` value from TOML text. The document is parsed by ``TOMLParser``, written as
/// JSON and read by Foundation's `JSONDecoder`, so a wrong type is reported as Foundation reports it,
/// with its key path (a date-time reaches the value as its text).
package struct TOMLDecoder {
    /// How the document's keys are read into the value's (Foundation's strategies).
    package var keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy

    package init(keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys) {
        self.keyDecodingStrategy = keyDecodingStrategy
    }

    package func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try decode(type, from: try TOMLParser.parse(text))
    }

    /// Decodes a table already parsed.
    package func decode<T: Decodable>(_ type: T.Type, from table: TOMLTable) throws -> T {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = keyDecodingStrategy
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: TOMLValue.infinity, negativeInfinity: TOMLValue.negativeInfinity, nan: TOMLValue.nan)
        return try decoder.decode(type, from: Data(TOMLValue.table(table).json.utf8))
    }
}

/// Encodes an `Encodable` value as a TOML document: its scalars and arrays as `key = value`, its
/// tables as `[a.b]` sections and its arrays of tables as `[[a]]` entries. Keys are sorted, so equal
/// values give equal text, and every string is escaped: no value can add a line of its own.
package struct TOMLEncoder {
    /// How the value's keys are written in the document (Foundation's strategies).
    package var keyEncodingStrategy: JSONEncoder.KeyEncodingStrategy

    package init(keyEncodingStrategy: JSONEncoder.KeyEncodingStrategy = .useDefaultKeys) {
        self.keyEncodingStrategy = keyEncodingStrategy
    }

    package func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = keyEncodingStrategy
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: TOMLValue.infinity, negativeInfinity: TOMLValue.negativeInfinity, nan: TOMLValue.nan)
        var reader = JSONReader(bytes: Array(try encoder.encode(value)))
        guard case .table(let table)? = try reader.value() else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "a TOML document must be a table at its top"))
        }
        var out = ""
        TOMLValue.write(table, path: [], to: &out)
        return out
    }
}

extension TOMLValue {
    /// How a float that JSON cannot hold travels through Foundation's JSON coders: as a string no config
    /// holds by accident, so a string "inf" stays a string. (Foundation's decoder matches these against
    /// the JSON text as written, so they are plain printable ASCII, with nothing to escape.)
    static let infinity = "zflux.toml:+inf", negativeInfinity = "zflux.toml:-inf", nan = "zflux.toml:nan"

    /// The value as JSON text (a date-time as a string; inf and nan as the strings `TOMLDecoder` reads).
    package var json: String {
        var out = ""
        appendJSON(to: &out)
        return out
    }

    private func appendJSON(to out: inout String) {
        switch self {
        case .string(let value), .dateTime(let value): TOMLValue.appendQuoted(value, to: &out)
        case .integer(let value): out += String(value)
        case .float(let value):
            if value.isNaN || value.isInfinite {
                TOMLValue.appendQuoted(value.isNaN ? TOMLValue.nan : value < 0 ? TOMLValue.negativeInfinity : TOMLValue.infinity, to: &out)
            } else {
                out += "\(value)"
            }
        case .bool(let value): out += value ? "true" : "false"
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.appendJSON(to: &out)
            }
            out += "]"
        case .table(let table):
            out += "{"
            for (index, entry) in table.entries.enumerated() {
                if index > 0 { out += "," }
                TOMLValue.appendQuoted(entry.key, to: &out)
                out += ":"
                entry.value.appendJSON(to: &out)
            }
            out += "}"
        }
    }

    /// `text` in double quotes, escaped as JSON and TOML basic strings both allow.
    static func appendQuoted(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    // MARK: Writing TOML

    /// `table`'s plain keys first, then each sub-table as a section and each array of tables as entries.
    package static func write(_ table: TOMLTable, path: [String], to out: inout String) {
        var tables: [(key: String, value: TOMLTable)] = []
        var arrays: [(key: String, value: [TOMLTable])] = []
        for (key, value) in table.entries {
            if case .table(let sub) = value {
                tables.append((key, sub))
            } else if case .array(let items) = value, !items.isEmpty, case let subs = items.compactMap(\.table), subs.count == items.count {
                arrays.append((key, subs))
            } else {
                out += writtenKey(key) + " = " + value.inline + "\n"
            }
        }
        func header(_ key: String, _ open: String, _ close: String) -> String {
            (out.isEmpty ? "" : "\n") + open + (path + [key]).map(writtenKey).joined(separator: ".") + close + "\n"
        }
        for (key, sub) in tables {
            out += header(key, "[", "]")
            write(sub, path: path + [key], to: &out)
        }
        for (key, subs) in arrays {
            for sub in subs {
                out += header(key, "[[", "]]")
                write(sub, path: path + [key], to: &out)
            }
        }
    }

    /// The value on one line: an array in brackets, a table in braces.
    package var inline: String {
        switch self {
        case .string(let value):
            var out = ""
            TOMLValue.appendQuoted(value, to: &out)
            return out
        case .dateTime(let value): return value
        case .integer(let value): return String(value)
        case .float(let value):
            if value.isNaN { return "nan" }
            if value.isInfinite { return value < 0 ? "-inf" : "inf" }
            let text = "\(value)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .bool(let value): return value ? "true" : "false"
        case .array(let values): return "[" + values.map(\.inline).joined(separator: ", ") + "]"
        case .table(let table):
            if table.isEmpty { return "{}" }
            return "{ " + table.entries.map { TOMLValue.writtenKey($0.key) + " = " + $0.value.inline }.joined(separator: ", ") + " }"
        }
    }

    /// A key bare when TOML allows it, quoted otherwise.
    static func writtenKey(_ key: String) -> String {
        let bare =
            !key.isEmpty
            && key.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" || $0 == "-" }
        if bare { return key }
        var out = ""
        appendQuoted(key, to: &out)
        return out
    }
}

/// Reads the JSON that `JSONEncoder` writes into TOML values, keeping its keys' order. A number with
/// a fraction or an exponent is a float, any other an integer; a null is left out, as TOML has none.
private struct JSONReader {
    let bytes: [UInt8]
    var at = 0

    struct Malformed: Error {}

    mutating func value() throws -> TOMLValue? {
        skip()
        guard at < bytes.count else { throw Malformed() }
        switch bytes[at] {
        case UInt8(ascii: "{"):
            at += 1
            var table = TOMLTable()
            skip()
            if take("}") { return .table(table) }
            repeat {
                skip()
                let key = try string()
                skip()
                guard take(":") else { throw Malformed() }
                if let value = try value() { table[key] = value }
                skip()
            } while take(",")
            guard take("}") else { throw Malformed() }
            return .table(table)
        case UInt8(ascii: "["):
            at += 1
            var items: [TOMLValue] = []
            skip()
            if take("]") { return .array(items) }
            repeat {
                if let value = try value() { items.append(value) }
                skip()
            } while take(",")
            guard take("]") else { throw Malformed() }
            return .array(items)
        case UInt8(ascii: "\""):
            let text = try string()
            switch text {
            case TOMLValue.infinity: return .float(.infinity)
            case TOMLValue.negativeInfinity: return .float(-.infinity)
            case TOMLValue.nan: return .float(.nan)
            default: return .string(text)
            }
        case UInt8(ascii: "t"):
            at += 4
            return .bool(true)
        case UInt8(ascii: "f"):
            at += 5
            return .bool(false)
        case UInt8(ascii: "n"):
            at += 4
            return nil
        default:
            let start = at
            while at < bytes.count, "+-.eE0123456789".utf8.contains(bytes[at]) { at += 1 }
            let text = String(decoding: bytes[start..<at], as: UTF8.self)
            if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                guard let value = Double(text) else { throw Malformed() }
                return .float(value)
            }
            guard let value = Int64(text) else { throw Malformed() }
            return .integer(value)
        }
    }

    /// A JSON string, its escapes resolved (through Foundation, which knows them all).
    mutating func string() throws -> String {
        guard take("\"") else { throw Malformed() }
        let start = at - 1
        while at < bytes.count, bytes[at] != UInt8(ascii: "\"") { at += bytes[at] == UInt8(ascii: "\\") ? 2 : 1 }
        guard at < bytes.count else { throw Malformed() }
        at += 1
        let quoted = Data(bytes[start..<at])
        guard let text = try JSONSerialization.jsonObject(with: quoted, options: [.fragmentsAllowed]) as? String else { throw Malformed() }
        return text
    }

    mutating func skip() {
        while at < bytes.count, bytes[at] == UInt8(ascii: " ") || bytes[at] == UInt8(ascii: "\n") { at += 1 }
    }

    mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard at < bytes.count, bytes[at] == UInt8(ascii: character) else { return false }
        at += 1
        return true
    }
}
