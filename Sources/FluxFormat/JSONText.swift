enum ASCII {
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
enum JSONText {
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

/// An object's entry as both JSON writers hold one while they put an object's entries in key order
/// (``BinaryToJSON`` from a binary payload, ``JSONCanonicalizer`` from JSON): its key's bytes in some
/// buffer, and where it came in the object.
protocol KeyedEntry {
    var keyStart: Int { get }
    var keyEnd: Int { get }
    /// Orders entries of equal keys as they came: the last one is written.
    var position: Int { get }
}

extension JSONText {
    /// The order an object's entries are written in, the one rule of both writers: `entries[base...]`
    /// (keys in `keys`) sorted by their keys' bytes, and of equal keys only the last that came. Returns
    /// the indices to write, in that order.
    static func keyOrder<Entry: KeyedEntry>(_ entries: inout [Entry], from base: Int, keys: [UInt8]) -> [Int] {
        precondition(base >= 0 && base <= entries.count, "the object's entries are in the buffer")
        if entries.count - base > 1 {
            entries[base...].sort { a, b in
                let order = compare(keys, a.keyStart, a.keyEnd, b.keyStart, b.keyEnd)
                return order != 0 ? order < 0 : a.position < b.position
            }
        }
        return (base..<entries.count).filter { index in
            index + 1 == entries.count
                || compare(keys, entries[index].keyStart, entries[index].keyEnd, entries[index + 1].keyStart, entries[index + 1].keyEnd) != 0
        }
    }
}
