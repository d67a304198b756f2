import Foundation

/// Any wire payload as JSON, without the Swift type it was encoded from: what lets a binary that does not
/// host an app (``UnhostedApp``) show that app's states and actions.
///
/// The binary codec is self-describing (``BinaryPayloadCodec`` tags every value), so the tags are walked
/// directly and the JSON is written as they are read. The output is byte for byte what
/// ``JSONPayloadCodec`` prints for the typed value, as Foundation's `JSONEncoder` on Linux prints it:
/// - object keys sorted by their UTF-8 bytes (what `.sortedKeys` does outside Apple's platforms: `"B"`
///   before `"a"`, `"a10"` before `"a2"`); when a key repeats, the last value wins, as in `JSONEncoder`;
/// - integers exact over the whole `Int64` and `UInt64` ranges (no trip through `Double`);
/// - a `Double` or `Float` as its `description` without a trailing `".0"` (`1`, `0.1`, `1e-07`, `1e+20`,
///   `-0`); NaN and infinities are refused, as `JSONEncoder` refuses them;
/// - strings escaped as `JSONEncoder` escapes them: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
///   control characters as `\u00xx`; slashes, DEL and every non-ASCII character as they are.
///
/// A JSON payload is re-serialised the same way (keys sorted, whitespace dropped, escapes written as
/// `JSONEncoder` writes them), so both codecs give the same text for the same value, and what
/// `JSONEncoder` wrote comes back unchanged. JSON does not say whether a number was a `Double` or a
/// `Float`, whose texts differ (a `Float` of 16777218 prints `1.6777218e+07`, a `Double` `16777218`): a
/// number already in the form `JSONEncoder` gives either is kept as it is, and any other is written as the
/// `Double` it reads as (`1.50` becomes `1.5`).
///
/// What `JSONEncoder` encodes specially, and the binary codec does not, cannot be told apart on the wire:
/// `Data` is an array of numbers here (`JSONEncoder` writes base64), `URL` and `Decimal` are the objects
/// their `encode(to:)` writes (`JSONEncoder` writes a string and a number). `Date` is a `Double` in both.
///
/// Garbage never traps: every length is checked against the bytes there are, containers must hold exactly
/// what their length says, strings must be UTF-8, and nesting is limited to ``maximumDepth``; anything
/// else throws a ``GenericJSONError`` naming the byte where it went wrong.
public enum GenericJSON {
    /// Arrays and objects nested deeper than this are refused.
    public static let maximumDepth = 512

    /// The compact JSON text of a wire payload (binary or JSON), as ``JSONPayloadCodec`` prints the value
    /// it was encoded from.
    public static func json(fromWire bytes: [UInt8]) throws(GenericJSONError) -> [UInt8] {
        if WireCodec.isBinary(bytes) {
            var transcoder = BinaryToJSON(input: bytes)
            try transcoder.run()
            return transcoder.out
        }
        var transcoder = JSONToJSON(input: bytes)
        try transcoder.run()
        return transcoder.out
    }

    /// A wire payload (binary or JSON) as a ``JSONValue`` tree. Numbers become `Double`s there: use
    /// ``json(fromWire:)`` where integers must stay exact.
    public static func value(fromWire bytes: [UInt8]) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(try json(fromWire: bytes)))
    }

    /// The same text as ``json(fromWire:)``, indented for people: two spaces a level, `"key": value`,
    /// empty containers as `[]` and `{}`.
    public static func prettyText(fromWire bytes: [UInt8]) throws(GenericJSONError) -> String {
        indented(try json(fromWire: bytes))
    }

    /// Indents compact JSON (no whitespace outside strings, as ``json(fromWire:)`` writes it).
    static func indented(_ json: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(json.count * 2)
        var level = 0
        var i = 0
        func newline() {
            out.append(ASCII.newline)
            for _ in 0..<level { out.append(contentsOf: [ASCII.space, ASCII.space]) }
        }
        while i < json.count {
            let byte = json[i]
            switch byte {
            case ASCII.quote:
                // Copy the string whole: brackets and commas inside it are text.
                var j = i + 1
                while j < json.count && json[j] != ASCII.quote { j += json[j] == ASCII.backslash ? 2 : 1 }
                let end = min(j + 1, json.count)
                out.append(contentsOf: json[i..<end])
                i = end
                continue
            case ASCII.openBrace, ASCII.openBracket:
                let close = byte == ASCII.openBrace ? ASCII.closeBrace : ASCII.closeBracket
                if i + 1 < json.count && json[i + 1] == close {
                    out.append(contentsOf: [byte, close])
                    i += 2
                    continue
                }
                out.append(byte)
                level += 1
                newline()
            case ASCII.closeBrace, ASCII.closeBracket:
                level = max(0, level - 1)
                newline()
                out.append(byte)
            case ASCII.comma:
                out.append(byte)
                newline()
            case ASCII.colon:
                out.append(contentsOf: [ASCII.colon, ASCII.space])
            default:
                out.append(byte)
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A payload ``GenericJSON`` cannot turn into JSON: truncated, malformed, or a value JSON cannot hold.
public struct GenericJSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case truncated, malformed, invalidUTF8, tooDeep, notRepresentable
        }
        private let value: Value
        /// A length, count or value runs past the end of the bytes (or of its container).
        public static let truncated = Code(value: .truncated)
        /// A byte that cannot be there: an unknown tag, a container whose length does not match what it
        /// holds, trailing bytes, or JSON that does not parse.
        public static let malformed = Code(value: .malformed)
        /// A string or key that is not UTF-8.
        public static let invalidUTF8 = Code(value: .invalidUTF8)
        /// Arrays and objects nested deeper than ``GenericJSON/maximumDepth``.
        public static let tooDeep = Code(value: .tooDeep)
        /// A number JSON cannot write: NaN, an infinity, or one too large for a `Double`.
        public static let notRepresentable = Code(value: .notRepresentable)
        public var description: String { "\(value)" }
    }

    public let code: Code
    /// Where in the payload it went wrong.
    public let offset: Int
    public let message: String

    public init(_ code: Code, at offset: Int, _ message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) (at byte \(offset) of the payload)" }
}

// MARK: - Binary to JSON

/// Walks a binary payload's tags and writes JSON as it goes. Objects are written in key order: their
/// entries are collected (keys and value offsets only), sorted, then written by jumping to each value,
/// which the containers' lengths make cheap.
private struct BinaryToJSON {
    /// One entry of an object being written: its key's bytes and its value's offset in `input`.
    struct Entry {
        var keyStart: Int
        var keyEnd: Int
        var value: Int
    }

    let input: [UInt8]
    var out: [UInt8] = []
    /// The entries of every object being written, innermost last (one buffer for all levels).
    var entries: [Entry] = []

    init(input: [UInt8]) {
        self.input = input
        out.reserveCapacity(input.count + input.count / 2)
    }

    mutating func run() throws(GenericJSONError) {
        let end = try value(at: 1, limit: input.count, depth: 0)
        guard end == input.count else { throw GenericJSONError(.malformed, at: end, "\(input.count - end) trailing bytes after the value") }
    }

    /// Writes the value at `offset`, which must end by `limit`; returns the offset just past it.
    mutating func value(at offset: Int, limit: Int, depth: Int) throws(GenericJSONError) -> Int {
        guard offset < limit else { throw GenericJSONError(.truncated, at: offset, "a value is missing") }
        guard let tag = BinaryTag(rawValue: input[offset]) else {
            throw GenericJSONError(.malformed, at: offset, "unknown tag 0x\(String(input[offset], radix: 16))")
        }
        switch tag {
        case .null:
            out.append(contentsOf: JSONText.null)
            return offset + 1
        case .false:
            out.append(contentsOf: JSONText.false)
            return offset + 1
        case .true:
            out.append(contentsOf: JSONText.true)
            return offset + 1
        case .int:
            let (raw, end) = try varint(at: offset + 1, limit: limit)
            // Zigzag: the low bit is the sign; a negative value's magnitude is (raw >> 1) + 1.
            if raw & 1 == 0 {
                JSONText.appendInteger(raw >> 1, negative: false, to: &out)
            } else {
                JSONText.appendInteger((raw >> 1) + 1, negative: true, to: &out)
            }
            return end
        case .uint:
            let (raw, end) = try varint(at: offset + 1, limit: limit)
            JSONText.appendInteger(raw, negative: false, to: &out)
            return end
        case .double:
            guard limit - offset >= 9 else { throw GenericJSONError(.truncated, at: offset, "a double needs 8 bytes") }
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(input[offset + 1 + i]) << (8 * UInt64(i)) }
            try JSONText.appendDouble(Double(bitPattern: bits), at: offset, to: &out)
            return offset + 9
        case .float:
            guard limit - offset >= 5 else { throw GenericJSONError(.truncated, at: offset, "a float needs 4 bytes") }
            var bits: UInt32 = 0
            for i in 0..<4 { bits |= UInt32(input[offset + 1 + i]) << (8 * UInt32(i)) }
            try JSONText.appendFloat(Float(bitPattern: bits), at: offset, to: &out)
            return offset + 5
        case .string:
            let (start, end) = try run(at: offset + 1, limit: limit)
            try JSONText.appendString(input, start, end, validating: true, to: &out)
            return end
        case .array:
            let (first, count, end) = try container(at: offset, limit: limit, depth: depth)
            out.append(ASCII.openBracket)
            var cursor = first
            for index in 0..<count {
                if index > 0 { out.append(ASCII.comma) }
                cursor = try value(at: cursor, limit: end, depth: depth + 1)
            }
            guard cursor == end else { throw lengthMismatch(offset, cursor, end) }
            out.append(ASCII.closeBracket)
            return end
        case .map:
            let (first, count, end) = try container(at: offset, limit: limit, depth: depth)
            try object(first: first, count: count, end: end, at: offset, depth: depth)
            return end
        }
    }

    /// Writes an object: its entries sorted by key, the last of equal keys winning.
    mutating func object(first: Int, count: Int, end: Int, at offset: Int, depth: Int) throws(GenericJSONError) {
        let base = entries.count
        defer { entries.removeSubrange(base...) }
        var cursor = first
        for _ in 0..<count {
            let (keyStart, keyEnd) = try run(at: cursor, limit: end)
            try JSONText.validateUTF8(input, keyStart, keyEnd)
            entries.append(Entry(keyStart: keyStart, keyEnd: keyEnd, value: keyEnd))
            cursor = try skip(at: keyEnd, limit: end)
        }
        guard cursor == end else { throw lengthMismatch(offset, cursor, end) }
        let input = input
        if count > 1 {
            entries[base...].sort { a, b in
                let order = JSONText.compare(input, a.keyStart, a.keyEnd, b.keyStart, b.keyEnd)
                return order != 0 ? order < 0 : a.value < b.value
            }
        }
        out.append(ASCII.openBrace)
        var first = true
        for index in base..<entries.count {
            let entry = entries[index]
            if index + 1 < entries.count {
                let next = entries[index + 1]
                if JSONText.compare(input, entry.keyStart, entry.keyEnd, next.keyStart, next.keyEnd) == 0 { continue }
            }
            if !first { out.append(ASCII.comma) }
            first = false
            // Keys were checked for UTF-8 above.
            try JSONText.appendString(input, entry.keyStart, entry.keyEnd, validating: false, to: &out)
            out.append(ASCII.colon)
            _ = try value(at: entry.value, limit: end, depth: depth + 1)
        }
        out.append(ASCII.closeBrace)
    }

    /// The offset just past the value at `offset` (within `limit`), without writing it.
    func skip(at offset: Int, limit: Int) throws(GenericJSONError) -> Int {
        guard offset < limit else { throw GenericJSONError(.truncated, at: offset, "a value is missing") }
        guard let tag = BinaryTag(rawValue: input[offset]) else {
            throw GenericJSONError(.malformed, at: offset, "unknown tag 0x\(String(input[offset], radix: 16))")
        }
        switch tag {
        case .null, .false, .true: return offset + 1
        case .int, .uint: return try varint(at: offset + 1, limit: limit).1
        case .double, .float:
            let end = offset + (tag == .double ? 9 : 5)
            guard end <= limit else { throw GenericJSONError(.truncated, at: offset, "a number runs past its end") }
            return end
        case .string: return try run(at: offset + 1, limit: limit).1
        case .array, .map: return try container(at: offset, limit: limit, depth: 0).2
        }
    }

    /// A container's header: (first entry, count, end).
    func container(at offset: Int, limit: Int, depth: Int) throws(GenericJSONError) -> (Int, Int, Int) {
        guard depth < GenericJSON.maximumDepth else {
            throw GenericJSONError(.tooDeep, at: offset, "arrays and objects nested deeper than \(GenericJSON.maximumDepth)")
        }
        guard limit - offset >= 9 else { throw GenericJSONError(.truncated, at: offset, "a container header needs 8 bytes") }
        let length = u32(at: offset + 1), count = u32(at: offset + 5)
        guard length <= limit - offset - 9 else {
            throw GenericJSONError(.truncated, at: offset, "a container of \(length) bytes runs past its end")
        }
        // Every entry takes at least one byte: a count larger than the content is a lie.
        guard count <= length else { throw GenericJSONError(.malformed, at: offset, "a container of \(length) bytes cannot hold \(count) values") }
        return (offset + 9, count, offset + 9 + length)
    }

    func lengthMismatch(_ offset: Int, _ cursor: Int, _ end: Int) -> GenericJSONError {
        GenericJSONError(.malformed, at: offset, "a container's values end at byte \(cursor), its length says \(end)")
    }

    func u32(at offset: Int) -> Int {
        Int(input[offset]) | Int(input[offset + 1]) << 8 | Int(input[offset + 2]) << 16 | Int(input[offset + 3]) << 24
    }

    /// A LEB128 varint: (value, offset past it). More than 64 bits is malformed.
    func varint(at offset: Int, limit: Int) throws(GenericJSONError) -> (UInt64, Int) {
        var value: UInt64 = 0, shift: UInt64 = 0, i = offset
        while true {
            guard i < limit else { throw GenericJSONError(.truncated, at: offset, "a number runs past its end") }
            let byte = input[i]
            guard shift < 63 || (shift == 63 && byte <= 1) else { throw GenericJSONError(.malformed, at: offset, "a number wider than 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            i += 1
            if byte < 0x80 { return (value, i) }
            shift += 7
        }
    }

    /// A length-prefixed run of bytes (a string or a key): (start, end).
    func run(at offset: Int, limit: Int) throws(GenericJSONError) -> (Int, Int) {
        let (length, start) = try varint(at: offset, limit: limit)
        guard length <= UInt64(limit - start) else { throw GenericJSONError(.truncated, at: offset, "a string of \(length) bytes runs past its end") }
        return (start, start + Int(length))
    }
}

// MARK: - JSON to JSON

/// Parses JSON (RFC 8259, strictly) and writes it again as ``GenericJSON`` writes a binary payload.
/// An object's entries are written as they are parsed; when their keys were not in order (or one
/// repeats) the entries are moved into order once the object closes.
private struct JSONToJSON {
    /// One entry of an object being written: its key (unescaped, in `keys`) and its `"key":value` text
    /// in `out`.
    struct Entry {
        var keyStart: Int
        var keyEnd: Int
        var textStart: Int
        var textEnd: Int
    }

    let input: [UInt8]
    var out: [UInt8] = []
    /// Unescaped keys of the objects being written, and strings being unescaped.
    var keys: [UInt8] = []
    var entries: [Entry] = []

    init(input: [UInt8]) {
        self.input = input
        out.reserveCapacity(input.count)
    }

    mutating func run() throws(GenericJSONError) {
        var i = skipWhitespace(0)
        guard i < input.count else { throw GenericJSONError(.malformed, at: i, "neither a binary payload nor JSON: it is empty") }
        i = try value(at: i, depth: 0)
        i = skipWhitespace(i)
        guard i == input.count else { throw GenericJSONError(.malformed, at: i, "unexpected bytes after the JSON value") }
    }

    func skipWhitespace(_ start: Int) -> Int {
        var i = start
        while i < input.count {
            switch input[i] {
            case ASCII.space, ASCII.tab, ASCII.newline, ASCII.carriageReturn: i += 1
            default: return i
            }
        }
        return i
    }

    func unexpected(_ i: Int, _ expected: String) -> GenericJSONError {
        guard i < input.count else { return GenericJSONError(.truncated, at: i, "the JSON ends where \(expected) should be") }
        let byte = input[i]
        let shown = (0x20..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        return GenericJSONError(.malformed, at: i, "\(expected) expected, found \(shown): not a binary payload (first byte 0xB1) nor JSON")
    }

    /// Writes the value starting at `i` (not whitespace); returns the offset just past it.
    mutating func value(at i: Int, depth: Int) throws(GenericJSONError) -> Int {
        guard i < input.count else { throw unexpected(i, "a value") }
        switch input[i] {
        case ASCII.openBrace: return try object(at: i, depth: depth)
        case ASCII.openBracket: return try array(at: i, depth: depth)
        case ASCII.quote: return try string(at: i)
        case UInt8(ascii: "t"): return try literal(JSONText.true, at: i)
        case UInt8(ascii: "f"): return try literal(JSONText.false, at: i)
        case UInt8(ascii: "n"): return try literal(JSONText.null, at: i)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number(at: i)
        default: throw unexpected(i, "a value")
        }
    }

    mutating func literal(_ word: [UInt8], at i: Int) throws(GenericJSONError) -> Int {
        guard input.count - i >= word.count, input[i..<(i + word.count)].elementsEqual(word) else { throw unexpected(i, "a value") }
        out.append(contentsOf: word)
        return i + word.count
    }

    mutating func array(at start: Int, depth: Int) throws(GenericJSONError) -> Int {
        guard depth < GenericJSON.maximumDepth else {
            throw GenericJSONError(.tooDeep, at: start, "arrays and objects nested deeper than \(GenericJSON.maximumDepth)")
        }
        out.append(ASCII.openBracket)
        var i = skipWhitespace(start + 1)
        if i < input.count && input[i] == ASCII.closeBracket {
            out.append(ASCII.closeBracket)
            return i + 1
        }
        while true {
            i = try value(at: i, depth: depth + 1)
            i = skipWhitespace(i)
            guard i < input.count else { throw unexpected(i, "',' or ']'") }
            if input[i] == ASCII.closeBracket { break }
            guard input[i] == ASCII.comma else { throw unexpected(i, "',' or ']'") }
            out.append(ASCII.comma)
            i = skipWhitespace(i + 1)
        }
        out.append(ASCII.closeBracket)
        return i + 1
    }

    mutating func object(at start: Int, depth: Int) throws(GenericJSONError) -> Int {
        guard depth < GenericJSON.maximumDepth else {
            throw GenericJSONError(.tooDeep, at: start, "arrays and objects nested deeper than \(GenericJSON.maximumDepth)")
        }
        out.append(ASCII.openBrace)
        let contentStart = out.count
        let base = entries.count, keysBase = keys.count
        defer {
            entries.removeSubrange(base...)
            keys.removeSubrange(keysBase...)
        }
        var i = skipWhitespace(start + 1)
        if i < input.count && input[i] == ASCII.closeBrace {
            out.append(ASCII.closeBrace)
            return i + 1
        }
        var ordered = true
        while true {
            guard i < input.count, input[i] == ASCII.quote else { throw unexpected(i, "a key in quotes") }
            let keyStart = keys.count
            i = try unescape(at: i)
            let keyEnd = keys.count
            if entries.count > base {
                let previous = entries[entries.count - 1]
                if JSONText.compare(keys, previous.keyStart, previous.keyEnd, keyStart, keyEnd) >= 0 { ordered = false }
            }
            let textStart = out.count
            try JSONText.appendString(keys, keyStart, keyEnd, validating: false, to: &out)
            out.append(ASCII.colon)
            i = skipWhitespace(i)
            guard i < input.count, input[i] == ASCII.colon else { throw unexpected(i, "':'") }
            i = try value(at: skipWhitespace(i + 1), depth: depth + 1)
            entries.append(Entry(keyStart: keyStart, keyEnd: keyEnd, textStart: textStart, textEnd: out.count))
            i = skipWhitespace(i)
            guard i < input.count else { throw unexpected(i, "',' or '}'") }
            if input[i] == ASCII.closeBrace { break }
            guard input[i] == ASCII.comma else { throw unexpected(i, "',' or '}'") }
            out.append(ASCII.comma)
            i = skipWhitespace(i + 1)
        }
        if !ordered { reorder(base: base, contentStart: contentStart) }
        out.append(ASCII.closeBrace)
        return i + 1
    }

    /// Rewrites the object's entries (from `contentStart` in `out`) in key order, the last of equal keys
    /// winning.
    mutating func reorder(base: Int, contentStart: Int) {
        let written = Array(out[contentStart...])
        out.removeSubrange(contentStart...)
        let keys = keys
        entries[base...].sort { a, b in
            let order = JSONText.compare(keys, a.keyStart, a.keyEnd, b.keyStart, b.keyEnd)
            return order != 0 ? order < 0 : a.textStart < b.textStart
        }
        var first = true
        for index in base..<entries.count {
            let entry = entries[index]
            if index + 1 < entries.count {
                let next = entries[index + 1]
                if JSONText.compare(keys, entry.keyStart, entry.keyEnd, next.keyStart, next.keyEnd) == 0 { continue }
            }
            if !first { out.append(ASCII.comma) }
            first = false
            out.append(contentsOf: written[(entry.textStart - contentStart)..<(entry.textEnd - contentStart)])
        }
    }

    mutating func string(at start: Int) throws(GenericJSONError) -> Int {
        // Most strings need no unescaping: then they are already written as JSONEncoder writes them.
        var i = start + 1
        while i < input.count {
            let byte = input[i]
            if byte == ASCII.quote {
                out.append(contentsOf: input[start...i])
                return i + 1
            }
            if byte == ASCII.backslash || byte < 0x20 { break }
            if byte < 0x80 {
                i += 1
            } else {
                i += try JSONText.utf8SequenceLength(input, i, input.count)
            }
        }
        let scratch = keys.count
        defer { keys.removeSubrange(scratch...) }
        let end = try unescape(at: start)
        try JSONText.appendString(keys, scratch, keys.count, validating: false, to: &out)
        return end
    }

    /// Appends the text of the JSON string at `start` (its opening quote) to `keys`, unescaped and
    /// checked; returns the offset past its closing quote.
    mutating func unescape(at start: Int) throws(GenericJSONError) -> Int {
        var i = start + 1
        while true {
            guard i < input.count else { throw GenericJSONError(.truncated, at: start, "a string without its closing quote") }
            let byte = input[i]
            switch byte {
            case ASCII.quote:
                return i + 1
            case ASCII.backslash:
                guard i + 1 < input.count else { throw GenericJSONError(.truncated, at: i, "an escape at the end of the JSON") }
                let escaped = input[i + 1]
                i += 2
                switch escaped {
                case ASCII.quote, ASCII.backslash, ASCII.slash: keys.append(escaped)
                case UInt8(ascii: "b"): keys.append(0x08)
                case UInt8(ascii: "f"): keys.append(0x0C)
                case UInt8(ascii: "n"): keys.append(ASCII.newline)
                case UInt8(ascii: "r"): keys.append(ASCII.carriageReturn)
                case UInt8(ascii: "t"): keys.append(ASCII.tab)
                case UInt8(ascii: "u"):
                    var unit = try hex4(at: i)
                    i += 4
                    if (0xDC00...0xDFFF).contains(unit) {
                        throw GenericJSONError(.malformed, at: i - 6, "a low surrogate \\u\(String(unit, radix: 16)) without a high one")
                    }
                    if (0xD800...0xDBFF).contains(unit) {
                        guard input.count - i >= 6, input[i] == ASCII.backslash, input[i + 1] == UInt8(ascii: "u") else {
                            throw GenericJSONError(.malformed, at: i - 6, "a high surrogate \\u\(String(unit, radix: 16)) without a low one")
                        }
                        let low = try hex4(at: i + 2)
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw GenericJSONError(.malformed, at: i, "a high surrogate followed by \\u\(String(low, radix: 16)), not a low one")
                        }
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                    appendUTF8(unit)
                default:
                    throw GenericJSONError(.malformed, at: i - 2, "an unknown escape '\\\(Character(Unicode.Scalar(escaped)))'")
                }
            case 0..<0x20:
                throw GenericJSONError(.malformed, at: i, "a control character (0x\(String(byte, radix: 16))) inside a string must be escaped")
            case 0x20..<0x80:
                keys.append(byte)
                i += 1
            default:
                let length = try JSONText.utf8SequenceLength(input, i, input.count)
                keys.append(contentsOf: input[i..<(i + length)])
                i += length
            }
        }
    }

    /// Appends a scalar (not a surrogate, at most U+10FFFF) as UTF-8.
    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            keys.append(UInt8(scalar))
        case 0x80..<0x800:
            keys.append(contentsOf: [UInt8(0xC0 | scalar >> 6), UInt8(0x80 | scalar & 0x3F)])
        case 0x800..<0x10000:
            keys.append(contentsOf: [UInt8(0xE0 | scalar >> 12), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F)])
        default:
            keys.append(contentsOf: [
                UInt8(0xF0 | scalar >> 18), UInt8(0x80 | scalar >> 12 & 0x3F), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F),
            ])
        }
    }

    func hex4(at i: Int) throws(GenericJSONError) -> UInt32 {
        guard input.count - i >= 4 else { throw GenericJSONError(.truncated, at: i, "\\u needs four hex digits") }
        var value: UInt32 = 0
        for byte in input[i..<(i + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw GenericJSONError(.malformed, at: i, "\\u needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A number. An integer that fits `Int64` or `UInt64` is written as it is (JSON allows no leading
    /// zeros, so it is already in `JSONEncoder`'s form); so is a number written as `JSONEncoder` writes
    /// the `Double` or the `Float` it reads as. Any other is written as the `Double` it reads as.
    mutating func number(at start: Int) throws(GenericJSONError) -> Int {
        var i = start
        let negative = input[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        func digits(from j: Int) -> Int {
            var k = j
            while k < input.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[k]) { k += 1 }
            return k
        }
        guard i < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[i]) else { throw unexpected(i, "a digit") }
        let integerStart = i
        i = input[i] == UInt8(ascii: "0") ? i + 1 : digits(from: i)
        let integerEnd = i
        var isInteger = true
        if i < input.count && input[i] == UInt8(ascii: ".") {
            isInteger = false
            let end = digits(from: i + 1)
            guard end > i + 1 else { throw unexpected(i + 1, "a digit") }
            i = end
        }
        if i < input.count && (input[i] == UInt8(ascii: "e") || input[i] == UInt8(ascii: "E")) {
            isInteger = false
            i += 1
            if i < input.count && (input[i] == UInt8(ascii: "+") || input[i] == UInt8(ascii: "-")) { i += 1 }
            let end = digits(from: i)
            guard end > i else { throw unexpected(i, "a digit") }
            i = end
        }
        if isInteger {
            var magnitude: UInt64 = 0
            var fits = true
            for byte in input[integerStart..<integerEnd] {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                if o1 || o2 {
                    fits = false
                    break
                }
                magnitude = sum
            }
            if fits && (!negative || magnitude <= UInt64(Int64.max) + 1) {
                out.append(contentsOf: input[start..<i])
                return i
            }
        }
        let text = String(decoding: input[start..<i], as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            throw GenericJSONError(.notRepresentable, at: start, "the number \(text) is too large for a Double")
        }
        let mark = out.count
        try JSONText.appendDouble(double, at: start, to: &out)
        if !out[mark...].elementsEqual(input[start..<i]), let float = Float(text), float.isFinite {
            var asFloat: [UInt8] = []
            try JSONText.appendFloat(float, at: start, to: &asFloat)
            if asFloat.elementsEqual(input[start..<i]) {
                out.removeSubrange(mark...)
                out.append(contentsOf: asFloat)
            }
        }
        return i
    }
}

// MARK: - Writing JSON text

private enum ASCII {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let comma: UInt8 = 0x2C
    static let slash: UInt8 = 0x2F
    static let colon: UInt8 = 0x3A
    static let openBracket: UInt8 = 0x5B
    static let backslash: UInt8 = 0x5C
    static let closeBracket: UInt8 = 0x5D
    static let openBrace: UInt8 = 0x7B
    static let closeBrace: UInt8 = 0x7D
}

/// JSON text as Foundation's `JSONEncoder` writes it (with `.withoutEscapingSlashes`).
private enum JSONText {
    static let null = Array("null".utf8)
    static let `true` = Array("true".utf8)
    static let `false` = Array("false".utf8)
    static let hexDigits = Array("0123456789abcdef".utf8)

    /// A decimal integer, written without going through `String`.
    static func appendInteger(_ magnitude: UInt64, negative: Bool, to out: inout [UInt8]) {
        if negative { out.append(UInt8(ascii: "-")) }
        let start = out.count
        var rest = magnitude
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        out[start...].reverse()
    }

    /// A `Double` as `JSONEncoder` writes it: its `description` without a trailing ".0".
    static func appendDouble(_ value: Double, at offset: Int, to out: inout [UInt8]) throws(GenericJSONError) {
        guard value.isFinite else { throw GenericJSONError(.notRepresentable, at: offset, "\(value) cannot be written in JSON") }
        // Whole numbers below 2^53 print as integers ("3.0" less its ".0"): skip formatting a String.
        if value == value.rounded(.towardZero) && value.magnitude < 0x1p53 {
            appendInteger(UInt64(value.magnitude), negative: value.sign == .minus, to: &out)
        } else {
            appendDescription(value.description, to: &out)
        }
    }

    /// A `Float` as `JSONEncoder` writes it: its own `description` (0.1 stays "0.1"), less a ".0".
    static func appendFloat(_ value: Float, at offset: Int, to out: inout [UInt8]) throws(GenericJSONError) {
        guard value.isFinite else { throw GenericJSONError(.notRepresentable, at: offset, "\(value) cannot be written in JSON") }
        if value == value.rounded(.towardZero) && value.magnitude < 0x1p24 {
            appendInteger(UInt64(value.magnitude), negative: value.sign == .minus, to: &out)
        } else {
            appendDescription(value.description, to: &out)
        }
    }

    static func appendDescription(_ description: String, to out: inout [UInt8]) {
        var utf8 = Array(description.utf8)
        if utf8.count > 2 && utf8[utf8.count - 2] == UInt8(ascii: ".") && utf8[utf8.count - 1] == UInt8(ascii: "0") { utf8.removeLast(2) }
        out.append(contentsOf: utf8)
    }

    /// A quoted string from `bytes[start..<end]`, escaped as `JSONEncoder` escapes: quote, backslash and
    /// control characters only. With `validating`, bytes that are not UTF-8 throw.
    static func appendString(_ bytes: [UInt8], _ start: Int, _ end: Int, validating: Bool, to out: inout [UInt8]) throws(GenericJSONError) {
        out.append(ASCII.quote)
        var copied = start, i = start
        while i < end {
            let byte = bytes[i]
            if byte >= 0x80 {
                i += validating ? try utf8SequenceLength(bytes, i, end) : 1
                continue
            }
            if byte >= 0x20 && byte != ASCII.quote && byte != ASCII.backslash {
                i += 1
                continue
            }
            out.append(contentsOf: bytes[copied..<i])
            out.append(ASCII.backslash)
            switch byte {
            case ASCII.quote, ASCII.backslash: out.append(byte)
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            case ASCII.newline: out.append(UInt8(ascii: "n"))
            case ASCII.carriageReturn: out.append(UInt8(ascii: "r"))
            case ASCII.tab: out.append(UInt8(ascii: "t"))
            default:
                out.append(contentsOf: [
                    UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)],
                ])
            }
            i += 1
            copied = i
        }
        out.append(contentsOf: bytes[copied..<end])
        out.append(ASCII.quote)
    }

    /// Throws unless `bytes[start..<end]` is UTF-8.
    static func validateUTF8(_ bytes: [UInt8], _ start: Int, _ end: Int) throws(GenericJSONError) {
        var i = start
        while i < end { i += bytes[i] < 0x80 ? 1 : try utf8SequenceLength(bytes, i, end) }
    }

    /// The length of the well-formed UTF-8 sequence of two to four bytes at `i` (which holds a byte of
    /// 0x80 or more), ending by `end`; throws when it is not one (Unicode's table 3-7: no overlong forms,
    /// no surrogates, nothing past U+10FFFF).
    static func utf8SequenceLength(_ bytes: [UInt8], _ i: Int, _ end: Int) throws(GenericJSONError) -> Int {
        let lead = bytes[i]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            secondRange = 0x80...0x9F
        case 0xF0:
            length = 4
            secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            secondRange = 0x80...0x8F
        default: throw GenericJSONError(.invalidUTF8, at: i, "a string is not UTF-8 (byte 0x\(String(lead, radix: 16)))")
        }
        guard end - i >= length else { throw GenericJSONError(.invalidUTF8, at: i, "a string ends inside a UTF-8 character") }
        guard secondRange.contains(bytes[i + 1]) else { throw GenericJSONError(.invalidUTF8, at: i, "a string is not UTF-8") }
        for k in 2..<length where bytes[i + k] & 0xC0 != 0x80 {
            throw GenericJSONError(.invalidUTF8, at: i, "a string is not UTF-8")
        }
        return length
    }

    /// Compares `bytes[a..<aEnd]` with `bytes[b..<bEnd]` as unsigned bytes (UTF-8 order, which is code
    /// point order): negative, zero or positive.
    static func compare(_ bytes: [UInt8], _ a: Int, _ aEnd: Int, _ b: Int, _ bEnd: Int) -> Int {
        let common = min(aEnd - a, bEnd - b)
        var k = 0
        while k < common {
            let x = bytes[a + k], y = bytes[b + k]
            if x != y { return x < y ? -1 : 1 }
            k += 1
        }
        return (aEnd - a) - (bEnd - b)
    }
}
