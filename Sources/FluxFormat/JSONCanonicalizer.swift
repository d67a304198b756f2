/// Parses JSON (RFC 8259, strictly) and writes it again as ``GenericJSON`` writes a binary payload.
/// An object's entries are written as they are parsed; when their keys were not in order (or one
/// repeats) the entries are moved into order once the object closes.
struct JSONCanonicalizer {
    /// One entry of an object being written: its key (unescaped, in `keys`) and its `"key":value` text
    /// in `out`.
    struct Entry: KeyedEntry {
        var keyStart: Int
        var keyEnd: Int
        var textStart: Int
        var textEnd: Int
        var position: Int { textStart }
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
        for (index, entry) in JSONText.keyOrder(&entries, from: base, keys: keys).map({ entries[$0] }).enumerated() {
            if index > 0 { out.append(ASCII.comma) }
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
