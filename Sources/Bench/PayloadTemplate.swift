import FluxCore
import Foundation

/// A JSON object whose values may be drawn at random: a string that is exactly `${int A B}` becomes an
/// integer from A to B, `${pick x y z}` one of the words (a word written as a JSON number stays a number; `nan`, `inf`,
/// `0x10` and `007` are not JSON numbers, and become strings),
/// `${seq}` the payload's number, from 0 (`${seq FIRST}`: from FIRST); inside a longer string they are
/// replaced as text. `${from APP PATH}`, a value of its own, is one of the values PATH selects in a store
/// of APP's state once the workload's `[[prepare]]` steps are applied (the ids they made): `lots.*.id`,
/// each `*` every item of a list or every value of an object, a number an item of a list
/// (``resolvingReferences(_:)``).
public struct PayloadTemplate: Sendable, Equatable {
    indirect enum Node: Sendable, Equatable {
        /// JSON text as it is.
        case literal(String)
        case object([(String, Node)])
        case array([Node])
        case int(ClosedRange<Int>)
        /// One of these, each JSON text.
        case pick([String])
        /// The payload's number plus this.
        case seq(Int)
        /// A string built from pieces.
        case text([Piece])
        /// A value of APP's state at PATH, read after the prepare steps: replaced by ``choice`` before rendering.
        case reference(app: String, path: String)
        /// One of these JSON texts.
        case choice([String])

        static func == (a: Node, b: Node) -> Bool {
            switch (a, b) {
            case (.literal(let x), .literal(let y)): x == y
            case (.object(let x), .object(let y)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
            case (.array(let x), .array(let y)): x == y
            case (.int(let x), .int(let y)): x == y
            case (.pick(let x), .pick(let y)): x == y
            case (.seq(let x), .seq(let y)): x == y
            case (.text(let x), .text(let y)): x == y
            case (.reference(let x, let p), .reference(let y, let q)): x == y && p == q
            case (.choice(let x), .choice(let y)): x == y
            default: false
            }
        }
    }

    enum Piece: Sendable, Equatable {
        case text(String)
        case int(ClosedRange<Int>)
        case pick([String])
        case seq(Int)
        case reference(app: String, path: String)
    }

    let root: Node

    init(_ root: Node) { self.root = root }

    /// `{}`.
    public static let empty = PayloadTemplate(.object([]))

    /// Whether it has `${seq}` somewhere: then every action needs a payload of its own.
    public var numbersActions: Bool { PayloadTemplate.numbersActions(root) }

    static func numbersActions(_ node: Node) -> Bool {
        switch node {
        case .seq: true
        case .object(let fields): fields.contains { numbersActions($0.1) }
        case .array(let items): items.contains(where: numbersActions)
        case .text(let pieces): pieces.contains { if case .seq = $0 { true } else { false } }
        case .literal, .int, .pick, .reference, .choice: false
        }
    }

    /// The state it refers to (`${from APP PATH}`), each (app, path) once, in the payload's key order.
    public var references: [(app: String, path: String)] {
        var found: [(app: String, path: String)] = []
        func walk(_ node: Node) {
            switch node {
            case .reference(let app, let path): if !found.contains(where: { $0 == (app, path) }) { found.append((app, path)) }
            case .object(let fields): fields.forEach { walk($0.1) }
            case .array(let items): items.forEach(walk)
            default: break
            }
        }
        walk(root)
        return found
    }

    /// The template with each `${from APP PATH}` replaced by a choice among `values(APP, PATH)`, JSON
    /// texts (at least one).
    public func resolvingReferences(_ values: (String, String) throws -> [String]) rethrows -> PayloadTemplate {
        func resolve(_ node: Node) throws -> Node {
            switch node {
            case .reference(let app, let path):
                let found = try values(app, path)
                precondition(!found.isEmpty, "a reference resolves to at least one value")
                return .choice(found)
            case .object(let fields): return .object(try fields.map { ($0.0, try resolve($0.1)) })
            case .array(let items): return .array(try items.map(resolve))
            default: return node
            }
        }
        return PayloadTemplate(try resolve(root))
    }

    /// Parses a JSON object with templates in its strings; `source` and `line` say where it came from.
    public init(json: String, source: String, line: Int?) throws(WorkloadError) {
        guard let value = JSONValue.parse(Data(json.utf8)) else {
            throw WorkloadError(source: source, line: line, "the payload is not JSON: \(json)")
        }
        guard case .object = value else {
            throw WorkloadError(source: source, line: line, "the payload must be a JSON object, e.g. '{\"amount\": 1}'")
        }
        root = try PayloadTemplate.node(value, source: source, line: line)
    }

    static func node(_ value: JSONValue, source: String, line: Int?) throws(WorkloadError) -> Node {
        switch value {
        case .object(let fields):
            var out: [(String, Node)] = []
            for (key, field) in fields.sorted(by: { $0.key < $1.key }) { out.append((key, try node(field, source: source, line: line))) }
            return .object(out)
        case .array(let items):
            var out: [Node] = []
            for item in items { out.append(try node(item, source: source, line: line)) }
            return .array(out)
        case .string(let text):
            let pieces = try PayloadTemplate.pieces(text, source: source, line: line)
            guard pieces.count == 1, let only = pieces.first else { return pieces.isEmpty ? .literal("\"\"") : .text(pieces) }
            switch only {
            case .text(let whole): return .literal(quoted(whole))
            case .int(let range): return .int(range)
            case .pick(let words): return .pick(words)
            case .seq(let first): return .seq(first)
            case .reference(let app, let path): return .reference(app: app, path: path)
            }
        default:
            return .literal(String(decoding: value.jsonBytes, as: UTF8.self))
        }
    }

    /// Splits a string into text and `${…}` templates.
    static func pieces(_ text: String, source: String, line: Int?) throws(WorkloadError) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(text)
        while let open = rest.range(of: "${") {
            if open.lowerBound > rest.startIndex { pieces.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                throw WorkloadError(source: source, line: line, "a template '${' is not closed by '}' in \(quoted(text))")
            }
            let words = rest[open.upperBound..<close].split(separator: " ").map(String.init)
            switch words.first {
            case "int":
                guard words.count == 3, let low = Int(words[1]), let high = Int(words[2]), low <= high else {
                    throw WorkloadError(source: source, line: line, "'${\(words.joined(separator: " "))}': write ${int LOW HIGH} with LOW ≤ HIGH")
                }
                pieces.append(.int(low...high))
            case "pick":
                guard words.count >= 2 else {
                    throw WorkloadError(source: source, line: line, "'${pick}' needs at least one word to pick from")
                }
                pieces.append(.pick(Array(words.dropFirst())))
            case "from":
                guard words.count == 3 else {
                    throw WorkloadError(
                        source: source, line: line, "'${\(words.joined(separator: " "))}': write ${from APP PATH}, such as ${from auction lots.*.id}")
                }
                guard open.lowerBound == text.startIndex, rest.index(after: close) == rest.endIndex, pieces.isEmpty else {
                    throw WorkloadError(source: source, line: line, "'${from …}' stands for a whole value: write it alone in its string")
                }
                pieces.append(.reference(app: words[1], path: words[2]))
            case "seq":
                // The largest first number leaves room for any count of actions a run can send.
                guard words.count == 1 || (words.count == 2 && Int(words[1]).map { abs($0) <= 1 << 52 } == true) else {
                    throw WorkloadError(
                        source: source, line: line, "'${\(words.joined(separator: " "))}': write ${seq} or ${seq FIRST}, FIRST a whole number")
                }
                pieces.append(.seq(words.count == 2 ? Int(words[1]) ?? 0 : 0))
            default:
                throw WorkloadError(
                    source: source, line: line,
                    "unknown template '${\(words.joined(separator: " "))}' (there are ${int A B}, ${pick x y}, ${seq}, ${seq FIRST}, ${from APP PATH})"
                )
            }
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { pieces.append(.text(String(rest))) }
        return pieces
    }

    /// Whether `word` is a number as JSON writes one (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`).
    /// Swift's `Double(_:)` also reads `nan`, `inf` and `0x10`, which written as they are made a payload
    /// that is not JSON.
    static func isJSONNumber(_ word: String) -> Bool {
        word.wholeMatch(of: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/) != nil
    }

    /// The arguments for payload number `seq`, as JSON text.
    public func render(seq: Int, using rng: inout SplitMix64) -> String {
        var out = ""
        PayloadTemplate.render(root, seq: seq, rng: &rng, into: &out)
        return out
    }

    static func render(_ node: Node, seq: Int, rng: inout SplitMix64, into out: inout String) {
        switch node {
        case .literal(let text): out += text
        case .object(let fields):
            out += "{"
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { out += "," }
                out += quoted(key) + ":"
                render(value, seq: seq, rng: &rng, into: &out)
            }
            out += "}"
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                render(item, seq: seq, rng: &rng, into: &out)
            }
            out += "]"
        case .int(let range): out += String(Int.random(in: range, using: &rng))
        case .pick(let words):
            let word = words[Int.random(in: 0...(words.count - 1), using: &rng)]
            out += isJSONNumber(word) ? word : quoted(word)
        case .seq(let first): out += String(first + seq)
        case .choice(let texts): out += texts[Int.random(in: 0...(texts.count - 1), using: &rng)]
        case .reference(let app, let path): preconditionFailure("${from \(app) \(path)} is rendered only once resolved")
        case .text(let pieces):
            var text = ""
            for piece in pieces {
                switch piece {
                case .text(let part): text += part
                case .int(let range): text += String(Int.random(in: range, using: &rng))
                case .pick(let words): text += words[Int.random(in: 0...(words.count - 1), using: &rng)]
                case .seq(let first): text += String(first + seq)
                case .reference: preconditionFailure("${from …} is a whole value, never part of a text")
                }
            }
            out += quoted(text)
        }
    }
}
