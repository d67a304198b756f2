/// Reads a TOML 1.0 document into a ``TOMLTable``. Any input is a table or a ``TOMLError`` with its
/// line: the parser has no assertion a document can reach (libFuzzer's `config` and `workload` targets
/// run it, scripts/fuzz.sh).
///
/// It is a recursive descent over the UTF-8 bytes. Tables are built as reference nodes while the
/// document is read, so that a header, a dotted key or an array of tables can reach a table defined
/// earlier, and each node remembers how it was made: the rules that refuse a table defined twice
/// need to know.
package enum TOMLParser {
    /// Tables and arrays nested deeper than this in all (what headers, dotted keys, arrays and inline
    /// tables nest adds up), and keys of more parts, are refused with their line, so no document can
    /// exhaust the stack, and Foundation's JSON reader, which ``TOMLDecoder`` hands the table to and
    /// which refuses some 500 levels with no line, reads every table the parser returns.
    package static let maxDepth = 64

    package static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        var parser = Parser(bytes: Array(text.utf8))
        return try parser.document()
    }
}

/// A table while the document is read.
final class Node {
    enum Entry {
        case value(TOMLValue)
        case table(Node)
        case tables([Node])
    }

    enum Origin {
        /// The parent of a header's table, `a` in `[a.b]`: a later `[a]` may still define it.
        case implicit
        /// Named by its own `[header]` (or an entry of `[[header]]`).
        case header
        /// Made by a dotted key, `a.b = 1`: closed to headers.
        case dotted
    }

    var keys: [String] = []
    var entries: [String: Entry] = [:]
    var origin: Origin
    /// How deep it sits: the document is 0, a table in a table one more, an entry of an array of
    /// tables two more (the array, then the table).
    let level: Int

    init(_ origin: Origin, level: Int) {
        precondition(level <= TOMLParser.maxDepth, "a table deeper than the limit is refused before it is made")
        self.origin = origin
        self.level = level
    }

    func set(_ key: String, _ entry: Entry) {
        if entries.updateValue(entry, forKey: key) == nil { keys.append(key) }
    }

    var table: TOMLTable {
        var out = TOMLTable()
        for key in keys {
            guard let entry = entries[key] else { continue }
            switch entry {
            case .value(let value): out[key] = value
            case .table(let node): out[key] = .table(node.table)
            case .tables(let nodes): out[key] = .array(nodes.map { .table($0.table) })
            }
        }
        return out
    }
}

/// The reader of one document: a cursor over its bytes. Its value readers are spread over this file
/// and `TOMLParser+Numbers.swift`.
struct Parser {
    let bytes: [UInt8]
    var at = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    // MARK: The document

    mutating func document() throws(TOMLError) -> TOMLTable {
        let root = Node(.header, level: 0)
        var current = root
        // A byte-order mark may open the document.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { at = 3 }
        while true {
            skipSpaces()
            guard let byte = peek() else { break }
            switch byte {
            case UInt8(ascii: "#"): try comment()
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): try newline()
            case UInt8(ascii: "["):
                current = try header(root)
                try endOfLine()
            default:
                try keyValue(into: current)
                try endOfLine()
            }
        }
        return root.table
    }

    /// `[a.b]` or `[[a.b]]`: the table that the following key/values go into.
    mutating func header(_ root: Node) throws(TOMLError) -> Node {
        let start = at
        at += 1
        let isArray = peek() == UInt8(ascii: "[")
        if isArray { at += 1 }
        skipSpaces()
        let path = try key()
        skipSpaces()
        guard take("]") else { throw error("a table header must end with ]", at: start) }
        if isArray, !take("]") { throw error("an array-of-tables header must end with ]]", at: start) }
        let name = path.joined(separator: ".")
        var node = root
        func deeper(_ level: Int) throws(TOMLError) -> Int {
            guard level <= TOMLParser.maxDepth else { throw error("tables are nested deeper than \(TOMLParser.maxDepth)", at: start) }
            return level
        }
        for part in path.dropLast() {
            switch node.entries[part] {
            case nil:
                let child = Node(.implicit, level: try deeper(node.level + 1))
                node.set(part, .table(child))
                node = child
            case .table(let child): node = child
            case .tables(let children): node = children[children.count - 1]
            case .value(let value): throw error("'\(name)' goes through '\(part)', which is \(value.kindName) already", at: start)
            }
        }
        let last = path[path.count - 1]
        if isArray {
            let entry = Node(.header, level: try deeper(node.level + 2))
            switch node.entries[last] {
            case nil: node.set(last, .tables([entry]))
            case .tables(var entries):
                // Out of the table first, so the array is appended to in place.
                node.entries[last] = nil
                entries.append(entry)
                node.entries[last] = .tables(entries)
            case .table: throw error("[[\(name)]] names a table defined already as [\(name)]", at: start)
            case .value(let value): throw error("[[\(name)]] names \(value.kindName) defined already", at: start)
            }
            return entry
        }
        switch node.entries[last] {
        case nil:
            let child = Node(.header, level: try deeper(node.level + 1))
            node.set(last, .table(child))
            return child
        case .table(let child):
            switch child.origin {
            case .implicit:
                child.origin = .header
                return child
            case .header: throw error("the table [\(name)] is defined twice", at: start)
            case .dotted: throw error("the table [\(name)] was defined already by dotted keys", at: start)
            }
        case .tables: throw error("[\(name)] names an array of tables defined already as [[\(name)]]", at: start)
        case .value(let value): throw error("[\(name)] names \(value.kindName) defined already", at: start)
        }
    }

    /// `a.b.c = value`, into `table`: a line of the document, or an entry of an inline table. The value
    /// sits as many levels below the table as the key has parts.
    mutating func keyValue(into table: Node) throws(TOMLError) {
        let start = at
        let path = try key()
        skipSpaces()
        guard take("=") else { throw error("expected = after the key '\(path.joined(separator: "."))'", at: at) }
        skipSpaces()
        let value = try value(level: table.level + path.count)
        var node = table
        for part in path.dropLast() {
            switch node.entries[part] {
            case nil:
                let child = Node(.dotted, level: node.level + 1)
                node.set(part, .table(child))
                node = child
            case .table(let child) where child.origin == .dotted: node = child
            case .table, .tables:
                throw error("the dotted key '\(path.joined(separator: "."))' reaches into '\(part)', which is defined already", at: start)
            case .value(let existing):
                throw error("the dotted key '\(path.joined(separator: "."))' goes through '\(part)', which is \(existing.kindName)", at: start)
            }
        }
        let last = path[path.count - 1]
        guard node.entries[last] == nil else { throw error("the key '\(path.joined(separator: "."))' is defined twice", at: start) }
        node.set(last, .value(value))
    }

    /// A key: bare, quoted or literal parts joined by dots.
    mutating func key() throws(TOMLError) -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            guard let byte = peek() else { throw error("expected a key", at: at) }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): parts.append(try string(multiline: false))
            default:
                let start = at
                while let next = peek(), isBareKey(next) { at += 1 }
                guard at > start else { throw error("expected a key, found \(describe(byte))", at: at) }
                parts.append(String(decoding: bytes[start..<at], as: UTF8.self))
            }
            skipSpaces()
            guard take(".") else { return parts }
            // A key of more parts would nest tables deeper than values may be.
            guard parts.count < TOMLParser.maxDepth else { throw error("a key has more than \(TOMLParser.maxDepth) parts", at: at) }
        }
    }

    // MARK: Values

    /// A value `level` deep in the document (the level an array or inline table there would have).
    mutating func value(level: Int) throws(TOMLError) -> TOMLValue {
        guard level <= TOMLParser.maxDepth else { throw error("values are nested deeper than \(TOMLParser.maxDepth)", at: at) }
        guard let byte = peek() else { throw error("expected a value", at: at) }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return .string(try string(multiline: peek(1) == byte && peek(2) == byte))
        case UInt8(ascii: "["): return try array(level: level)
        case UInt8(ascii: "{"): return try inlineTable(level: level)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            if takeWord("true") { return .bool(true) }
            if takeWord("false") { return .bool(false) }
            return try numberOrDate()
        default:
            return try numberOrDate()
        }
    }

    mutating func array(level: Int) throws(TOMLError) -> TOMLValue {
        let start = at
        at += 1
        var items: [TOMLValue] = []
        while true {
            try skipBlank()
            if take("]") { return .array(items) }
            guard peek() != nil else { throw error("this array is not closed with ]", at: start) }
            items.append(try value(level: level + 1))
            try skipBlank()
            if take(",") { continue }
            if take("]") { return .array(items) }
            guard let byte = peek() else { throw error("this array is not closed with ]", at: start) }
            throw error("expected , or ] in an array, found \(describe(byte))", at: at)
        }
    }

    /// `{ a = 1, b.c = 2 }` on one line; closed to later headers and dotted keys.
    mutating func inlineTable(level: Int) throws(TOMLError) -> TOMLValue {
        let start = at
        at += 1
        let node = Node(.dotted, level: level)
        skipSpaces()
        if take("}") { return .table(node.table) }
        while true {
            skipSpaces()
            guard let byte = peek(), byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") else {
                throw error("an inline table must close with } on its own line", at: start)
            }
            try keyValue(into: node)
            skipSpaces()
            if take("}") { return .table(node.table) }
            guard take(",") else {
                throw error("expected , or } in an inline table, found \(peek().map { describe($0) } ?? "the end")", at: at)
            }
        }
    }

    // MARK: Strings

    /// `"…"` or `"""…"""` with escapes, or `'…'` or `'''…'''` taken as written.
    mutating func string(multiline: Bool) throws(TOMLError) -> String {
        let start = at
        let quote = bytes[at]
        let escapes = quote == UInt8(ascii: "\"")
        at += multiline ? 3 : 1
        if multiline { skipFirstNewline() }
        var out: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("this string is not closed", at: start) }
            if byte == quote {
                if !multiline {
                    at += 1
                    break
                }
                if peek(1) == quote, peek(2) == quote {
                    // Up to two quotes just before the closing three belong to the string.
                    var quotes = 3
                    while quotes < 5, peek(quotes) == quote { quotes += 1 }
                    out.append(contentsOf: repeatElement(quote, count: quotes - 3))
                    at += quotes
                    break
                }
                out.append(byte)
                at += 1
            } else if byte == UInt8(ascii: "\\"), escapes {
                at += 1
                if multiline, trimLineEndingBackslash() { continue }
                try escape(into: &out)
            } else {
                try stringByte(byte, multiline: multiline, into: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// One byte of a string's body: control characters are refused, except a tab, and a newline in a
    /// multi-line string.
    mutating func stringByte(_ byte: UInt8, multiline: Bool, into out: inout [UInt8]) throws(TOMLError) {
        if byte == UInt8(ascii: "\n"), multiline {
            out.append(byte)
            at += 1
        } else if byte == UInt8(ascii: "\r"), multiline, peek(1) == UInt8(ascii: "\n") {
            out.append(UInt8(ascii: "\n"))
            at += 2
        } else if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
            throw error("a string on one line may not hold a line break (use \"\"\" for several lines)", at: at)
        } else if (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F {
            throw error("a string may not hold the control character \(describe(byte)); write it as an escape", at: at)
        } else {
            out.append(byte)
            at += 1
        }
    }

    mutating func escape(into out: inout [UInt8]) throws(TOMLError) {
        guard let byte = peek() else { throw error("a string ends inside an escape", at: at) }
        at += 1
        let simple: UInt8? =
            switch byte {
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "t"): 0x09
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            default: nil
            }
        if let simple {
            out.append(simple)
            return
        }
        let digits = byte == UInt8(ascii: "u") ? 4 : byte == UInt8(ascii: "U") ? 8 : 0
        guard digits > 0 else { throw error("\\\(describe(byte)) is not an escape TOML has", at: at - 2) }
        var scalar: UInt32 = 0
        for _ in 0..<digits {
            guard let hex = peek(), let digit = hexValue(hex) else {
                throw error("\\\(byte == UInt8(ascii: "u") ? "u" : "U") needs \(digits) hex digits", at: at)
            }
            scalar = scalar << 4 | UInt32(digit)
            at += 1
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error("\\u\(String(scalar, radix: 16)) is not a Unicode scalar", at: at) }
        out.append(contentsOf: Array(String(Character(unicode)).utf8))
    }

    /// After a backslash in a multi-line basic string: when only spaces follow to the line's end, the
    /// line break and all blank space after it are dropped. False when it is an escape instead.
    mutating func trimLineEndingBackslash() -> Bool {
        var probe = at
        while probe < bytes.count, bytes[probe] == UInt8(ascii: " ") || bytes[probe] == UInt8(ascii: "\t") { probe += 1 }
        let isBreak =
            probe < bytes.count
            && (bytes[probe] == UInt8(ascii: "\n")
                || (bytes[probe] == UInt8(ascii: "\r") && probe + 1 < bytes.count && bytes[probe + 1] == UInt8(ascii: "\n")))
        guard isBreak else { return false }
        at = probe
        while let byte = peek() {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") {
                at += 1
            } else if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
                at += 2
            } else {
                break
            }
        }
        return true
    }

    mutating func skipFirstNewline() {
        if peek() == UInt8(ascii: "\n") {
            at += 1
        } else if peek() == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
            at += 2
        }
    }

    // MARK: Bytes

    func peek(_ offset: Int = 0) -> UInt8? { at + offset < bytes.count ? bytes[at + offset] : nil }

    mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard peek() == UInt8(ascii: character) else { return false }
        at += 1
        return true
    }

    func starts(with text: String) -> Bool {
        let utf8 = Array(text.utf8)
        return at + utf8.count <= bytes.count && bytes[at..<at + utf8.count].elementsEqual(utf8)
    }

    /// `word` when it is followed by no further letter of a bare token.
    mutating func takeWord(_ word: String) -> Bool {
        guard starts(with: word) else { return false }
        let end = at + word.utf8.count
        if end < bytes.count, isBareKey(bytes[end]) { return false }
        at = end
        return true
    }

    mutating func skipSpaces() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { at += 1 }
    }

    /// Spaces, line breaks and comments, as an array may hold between its values.
    mutating func skipBlank() throws(TOMLError) {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"): at += 1
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): try newline()
            case UInt8(ascii: "#"): try comment()
            default: return
            }
        }
    }

    mutating func newline() throws(TOMLError) {
        if take("\n") { return }
        guard peek() == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") else {
            throw error("a carriage return must be followed by a line feed", at: at)
        }
        at += 2
    }

    /// `# …` up to the line's end; a comment may not hold control characters other than a tab.
    mutating func comment() throws(TOMLError) {
        while let byte = peek(), byte != UInt8(ascii: "\n") {
            if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") { return }
            if (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F {
                throw error("a comment may not hold the control character \(describe(byte))", at: at)
            }
            at += 1
        }
    }

    /// After a header or a key/value: spaces, an optional comment, then the line's end.
    mutating func endOfLine() throws(TOMLError) {
        skipSpaces()
        if peek() == UInt8(ascii: "#") { try comment() }
        guard let byte = peek() else { return }
        guard byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") else {
            throw error("expected the end of the line, found \(describe(byte))", at: at)
        }
        try newline()
    }

    func isBareKey(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    func isNumberByte(_ byte: UInt8) -> Bool {
        isBareKey(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
    }

    func isDate(_ start: Int, _ end: Int) -> Bool {
        end - start == 10 && bytes[start + 4] == UInt8(ascii: "-") && bytes[start + 7] == UInt8(ascii: "-")
    }

    func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A byte as a message shows it: `'x'` when printable, its code otherwise.
    func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    func error(_ message: String, at position: Int) -> TOMLError {
        let end = min(position, bytes.count)
        return TOMLError(line: 1 + bytes[..<end].count(where: { $0 == UInt8(ascii: "\n") }), message)
    }
}
