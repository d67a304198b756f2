import Foundation

/// Any wire payload as JSON, without the Swift type it was encoded from: what lets a binary that does not
/// host an app (``UnhostedApp``) show that app's states and actions.
///
/// The binary codec is self-describing (``BinaryPayloadCodec`` tags every value), so the tags are walked
/// directly and the JSON is written as they are read. The output is byte for byte what
/// ``JSONPayloadCodec/wire`` prints for the typed value, as Foundation's `JSONEncoder` on Linux prints it:
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
/// their `encode(to:)` writes (`JSONEncoder` writes a string and a number). `Date` is a `Double` in both:
/// printed here as the wire's JSON writes it (``JSONPayloadCodec/wire``), the number of seconds since
/// 2001, where the app itself, knowing its type, prints an ISO 8601 text.
///
/// Garbage never traps: every length is checked against the bytes there are, containers must hold exactly
/// what their length says, strings must be UTF-8, and nesting is limited to ``maximumDepth``; anything
/// else throws a ``GenericJSONError`` naming the byte where it went wrong.
public enum GenericJSON {
    /// Arrays and objects nested deeper than this are refused.
    public static let maximumDepth = 512

    /// The compact JSON text of a wire payload (binary or JSON), as ``JSONPayloadCodec/wire`` prints the value
    /// it was encoded from.
    public static func json(fromWire bytes: [UInt8]) throws(GenericJSONError) -> [UInt8] {
        if WireCodec.isBinary(bytes) {
            var transcoder = BinaryToJSON(input: bytes)
            try transcoder.run()
            return transcoder.out
        }
        var transcoder = JSONCanonicalizer(input: bytes)
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
