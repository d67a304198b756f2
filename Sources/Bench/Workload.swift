import FluxCore
import Foundation
import TOMLKit

/// What a load test dispatches: actions prepared once before the load, then a weighted mix of any apps'
/// actions whose arguments come from templates, at a rate per client with an optional ramp.
///
/// `zflux bench --app A --action T --payload JSON` is a mix of one; `--workload FILE` reads a TOML file
/// (``parse(toml:source:)``); without either, the stock bench drives the ledger (``ledger(stateItems:payloadBytes:probeBytes:)``).
public struct Workload: Sendable {
    /// An action dispatched once before the load; the run waits until the views of its app show it.
    public struct Step: Sendable, Equatable {
        public var app: String
        public var action: String
        /// The arguments, a JSON object (empty: `{}`).
        public var arguments: String

        public init(app: String, action: String, arguments: String = "") {
            self.app = app
            self.action = action
            self.arguments = arguments
        }
    }

    /// One kind of action in the mix.
    public struct Entry: Sendable {
        public var app: String
        public var type: String
        /// Relative weight (≥ 1).
        public var weight: Int
        public var payload: PayloadTemplate
        /// Where it was written (`mix.toml:12`), for errors about its payloads.
        public var location: String? = nil

        public init(app: String, type: String, weight: Int = 1, payload: PayloadTemplate = .empty) {
            self.app = app
            self.type = type
            self.weight = weight
            self.payload = payload
        }
    }

    public var prepare: [Step] = []
    public var mix: [Entry]
    /// Client connections (nil: `--clients`).
    public var clients: Int?
    /// Actions per second per client (nil: `--rate` divided among the clients).
    public var ratePerClient: Double?
    /// Seconds from no load to the full rate, linearly, at the start of each run (0: none).
    public var rampSeconds: Double = 0
    /// What the report calls it (`ledger.post`, `mix.toml`).
    public var name: String

    public init(name: String, mix: [Entry], prepare: [Step] = []) {
        self.name = name
        self.mix = mix
        self.prepare = prepare
    }

    /// Every app the workload dispatches to, in the order they first appear.
    public var apps: [String] {
        var seen: Set<String> = []
        return (mix.map(\.app) + prepare.map(\.app)).filter { seen.insert($0).inserted }
    }

    /// Each entry of the mix with its share of the actions: `ledger.post 80%`.
    public var shares: [String] {
        let total = Double(mix.reduce(0) { $0 + $1.weight })
        return mix.map { entry in
            let percent = Double(entry.weight) / Swift.max(1, total) * 100
            return "\(entry.app).\(entry.type) "
                + (percent == percent.rounded() || percent >= 10 ? String(format: "%.0f%%", percent) : String(format: "%.1f%%", percent))
        }
    }

    /// One action type with one payload template (`--app --action --payload`).
    public static func single(app: String, action: String, payload: String) throws(WorkloadError) -> Workload {
        try checkName(action, what: "action", source: "--action", line: nil)
        let template = try PayloadTemplate(json: payload.isEmpty ? "{}" : payload, source: "--payload", line: nil)
        return Workload(name: "\(app).\(action)", mix: [Entry(app: app, type: action, payload: template)])
    }

    /// The stock bench: open `stateItems` ledger accounts, then post to accounts spread over them with
    /// a memo that pads each action to about `payloadBytes` on the wire. `probe` is the size of a post
    /// with an empty memo (the binary's own encoding when it hosts the ledger).
    public static func ledger(stateItems: Int, payloadBytes: Int, probeBytes: Int) -> Workload {
        let pad = String(repeating: "x", count: max(0, payloadBytes - probeBytes))
        let template = PayloadTemplate(
            .object([("account", .int(0...max(0, stateItems - 1))), ("amount", .literal("1")), ("memo", .literal(quoted(pad)))]))
        return Workload(
            name: "ledger.post", mix: [Entry(app: "ledger", type: "post", payload: template)],
            prepare: [Step(app: "ledger", action: "open", arguments: "{\"count\":\(stateItems)}")])
    }

    /// The stock bench's default, for reports: `stateItems` applies to it only.
    public var isLedgerDefault: Bool { name == "ledger.post" && mix.count == 1 && mix[0].app == "ledger" }

    static func checkName(_ name: String, what: String, source: String, line: Int?) throws(WorkloadError) {
        guard !name.isEmpty, Header.isValidActionType(Array(name.utf8)) else {
            throw WorkloadError(source: source, line: line, "\(what) '\(name)' is not an action name (letters, digits and '_')")
        }
    }
}

/// Bad workload input: says where (file and line) and what.
public struct WorkloadError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(source: String, line: Int?, _ message: String) {
        self.message = "\(source)\(line.map { ":\($0)" } ?? ""): \(message)"
    }

    public var description: String { message }
}

func quoted(_ text: String) -> String {
    String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
}

// MARK: - Payload templates

/// A JSON object whose values may be drawn at random: a string that is exactly `${int A B}` becomes an
/// integer from A to B, `${pick x y z}` one of the words (a word that reads as a number stays a number),
/// `${seq}` the payload's number; inside a longer string they are replaced as text.
public struct PayloadTemplate: Sendable, Equatable {
    indirect enum Node: Sendable, Equatable {
        /// JSON text as it is.
        case literal(String)
        case object([(String, Node)])
        case array([Node])
        case int(ClosedRange<Int>)
        /// One of these, each JSON text.
        case pick([String])
        case seq
        /// A string built from pieces.
        case text([Piece])

        static func == (a: Node, b: Node) -> Bool {
            switch (a, b) {
            case (.literal(let x), .literal(let y)): x == y
            case (.object(let x), .object(let y)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
            case (.array(let x), .array(let y)): x == y
            case (.int(let x), .int(let y)): x == y
            case (.pick(let x), .pick(let y)): x == y
            case (.seq, .seq): true
            case (.text(let x), .text(let y)): x == y
            default: false
            }
        }
    }

    enum Piece: Sendable, Equatable {
        case text(String)
        case int(ClosedRange<Int>)
        case pick([String])
        case seq
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
        case .text(let pieces): pieces.contains(.seq)
        case .literal, .int, .pick: false
        }
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
            for key in fields.keys.sorted() { out.append((key, try node(fields[key]!, source: source, line: line))) }
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
            case .seq: return .seq
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
            case "seq":
                guard words.count == 1 else { throw WorkloadError(source: source, line: line, "'${seq}' takes no arguments") }
                pieces.append(.seq)
            default:
                throw WorkloadError(
                    source: source, line: line, "unknown template '${\(words.joined(separator: " "))}' (there are ${int A B}, ${pick x y}, ${seq})")
            }
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { pieces.append(.text(String(rest))) }
        return pieces
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
            out += Double(word) != nil ? word : quoted(word)
        case .seq: out += String(seq)
        case .text(let pieces):
            var text = ""
            for piece in pieces {
                switch piece {
                case .text(let part): text += part
                case .int(let range): text += String(Int.random(in: range, using: &rng))
                case .pick(let words): text += words[Int.random(in: 0...(words.count - 1), using: &rng)]
                case .seq: text += String(seq)
                }
            }
            out += quoted(text)
        }
    }
}

// MARK: - The workload file

extension Workload {
    /// Reads a workload file:
    ///
    /// ```toml
    /// [load]
    /// clients = 4
    /// rate_per_client = 500
    /// ramp_seconds = 2
    ///
    /// [[prepare]]
    /// app = "ledger"
    /// action = "open"
    /// payload = '{"count": 100}'
    ///
    /// [[action]]
    /// app = "ledger"
    /// type = "post"
    /// weight = 8
    /// payload = '{"account": "${int 0 99}", "amount": 1, "memo": "${pick rent food}"}'
    /// ```
    ///
    /// Every error names the file and line: a syntax error, an unknown key, a missing or mistyped
    /// value, a weight below 1, a template that does not parse, a payload that is not a JSON object.
    public static func parse(toml text: String, source: String) throws(WorkloadError) -> Workload {
        try checkTableHeaders(text, source: source)
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw WorkloadError(source: source, line: error.source.begin.line, error.description)
        } catch {
            throw WorkloadError(source: source, line: nil, "\(error)")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func line(_ table: String?, _ index: Int?, _ key: String?) -> Int? { lineOf(lines, table: table, index: index, key: key) }
        func fail(_ table: String?, _ index: Int?, _ key: String?, _ message: String) -> WorkloadError {
            WorkloadError(source: source, line: line(table, index, key), message)
        }
        for key in table.keys where !["load", "prepare", "action"].contains(key) {
            throw fail(nil, nil, key, "unknown key '\(key)' (a workload has [load], [[prepare]] and [[action]])")
        }
        var workload = Workload(name: (source as NSString).lastPathComponent, mix: [])
        if let load = table["load"] {
            guard let load = load.table else { throw fail(nil, nil, "load", "'load' must be a table: [load]") }
            for key in load.keys where !["clients", "rate_per_client", "ramp_seconds"].contains(key) {
                throw fail("load", nil, key, "unknown key '\(key)' in [load] (it has clients, rate_per_client, ramp_seconds)")
            }
            if let value = load["clients"] {
                guard let clients = value.int, (1...64).contains(clients) else { throw fail("load", nil, "clients", "clients must be 1…64") }
                workload.clients = clients
            }
            if let value = load["rate_per_client"] {
                guard let rate = value.double ?? value.int.map(Double.init), rate > 0, rate <= 5_000_000 else {
                    throw fail("load", nil, "rate_per_client", "rate_per_client must be a number of actions per second, above 0")
                }
                workload.ratePerClient = rate
            }
            if let value = load["ramp_seconds"] {
                guard let ramp = value.double ?? value.int.map(Double.init), ramp >= 0, ramp <= 3600 else {
                    throw fail("load", nil, "ramp_seconds", "ramp_seconds must be 0…3600")
                }
                workload.rampSeconds = ramp
            }
        }
        /// A `[[name]]` array of tables, each checked for its keys.
        func entries(_ name: String, keys: Set<String>) throws(WorkloadError) -> [TOMLTable] {
            guard let value = table[name] else { return [] }
            guard let array = value.array else { throw fail(nil, nil, name, "'\(name)' must be an array of tables: [[\(name)]]") }
            var out: [TOMLTable] = []
            for (index, item) in array.enumerated() {
                guard let entry = item.table else { throw fail(nil, nil, name, "each '\(name)' must be a table: [[\(name)]]") }
                for key in entry.keys where !keys.contains(key) {
                    throw fail(name, index, key, "unknown key '\(key)' in [[\(name)]] (it has \(keys.sorted().joined(separator: ", ")))")
                }
                out.append(entry)
            }
            return out
        }
        func string(_ entry: TOMLTable, _ key: String, _ name: String, _ index: Int) throws(WorkloadError) -> String {
            guard let value = entry[key] else { throw fail(name, index, nil, "[[\(name)]] number \(index + 1) has no '\(key)'") }
            guard let text = value.string, !text.isEmpty else { throw fail(name, index, key, "'\(key)' must be a non-empty string") }
            return text
        }
        func payload(_ entry: TOMLTable, _ name: String, _ index: Int) throws(WorkloadError) -> PayloadTemplate {
            guard let value = entry["payload"] else { return .empty }
            let at = line(name, index, "payload")
            if let text = value.string { return try PayloadTemplate(json: text, source: source, line: at) }
            if let inline = value.table {
                guard let json = try? JSONEncoder().encode(inline) else {
                    throw WorkloadError(source: source, line: at, "the payload table cannot be read as JSON")
                }
                return try PayloadTemplate(json: String(decoding: json, as: UTF8.self), source: source, line: at)
            }
            throw WorkloadError(source: source, line: at, "payload must be a JSON object in a string ('{\"a\": 1}') or an inline table ({ a = 1 })")
        }
        for (index, entry) in try entries("prepare", keys: ["app", "action", "payload"]).enumerated() {
            let app = try string(entry, "app", "prepare", index)
            let action = try string(entry, "action", "prepare", index)
            try checkName(action, what: "action", source: source, line: line("prepare", index, "action"))
            let template = try payload(entry, "prepare", index)
            var rng = SplitMix64(seed: UInt64(index))
            workload.prepare.append(Step(app: app, action: action, arguments: template.render(seq: 0, using: &rng)))
        }
        for (index, entry) in try entries("action", keys: ["app", "type", "weight", "payload"]).enumerated() {
            let app = try string(entry, "app", "action", index)
            let type = try string(entry, "type", "action", index)
            try checkName(type, what: "type", source: source, line: line("action", index, "type"))
            var weight = 1
            if let value = entry["weight"] {
                guard let number = value.int, number >= 1, number <= 1_000_000 else {
                    throw fail("action", index, "weight", "weight must be a whole number from 1 to 1000000")
                }
                weight = number
            }
            var parsed = Entry(app: app, type: type, weight: weight, payload: try payload(entry, "action", index))
            parsed.location = "\(source):\(line("action", index, "payload") ?? line("action", index, nil) ?? 0)"
            workload.mix.append(parsed)
        }
        guard !workload.mix.isEmpty else {
            throw WorkloadError(source: source, line: nil, "the workload has no [[action]]: give at least one action to drive")
        }
        return workload
    }

    /// The line where `key` is set in `table` (the `index`-th of an array of tables), or where that
    /// table starts; a top-level key when `table` is nil.
    static func lineOf(_ lines: [String], table: String?, index: Int?, key: String?) -> Int? {
        var current: String? = nil
        var seen: [String: Int] = [:]
        var tableLine: Int?
        for (number, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                let name =
                    line.trimmingCharacters(in: CharacterSet(charactersIn: "[] ")).split(separator: "#").first
                    .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[] ")) } ?? ""
                current = name
                let count = seen[name, default: -1] + 1
                seen[name] = count
                if name == table && (index ?? 0) == count { tableLine = number + 1 }
                continue
            }
            let inTable = table.map { current == $0 && seen[$0] == (index ?? 0) } ?? (current == nil)
            if let key, inTable, line.hasPrefix(key), line.dropFirst(key.count).trimmingCharacters(in: .whitespaces).hasPrefix("=") {
                return number + 1
            }
        }
        return tableLine
    }

    /// toml++ (inside TOMLKit) stops the process on a table header whose name starts with anything but
    /// a key character or a quote (`[= "x"]`); such headers are refused here first, with their line.
    static func checkTableHeaders(_ text: String, source: String) throws(WorkloadError) {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var rest = line.drop { $0 == " " || $0 == "\t" }
            guard rest.first == "[" else { continue }
            rest = rest.dropFirst()
            if rest.first == "[" { rest = rest.dropFirst() }
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            guard let first = rest.first, first.isASCII && (first.isLetter || first.isNumber) || "_-\"'[]".contains(first) else {
                throw WorkloadError(source: source, line: index + 1, "a table name must start with a letter, digit, '_', '-' or a quote")
            }
        }
    }
}

// MARK: - What the load client sends

/// A workload made concrete for one run: wire payloads generated ahead of time (so the sending loop
/// does no JSON work) and the order of the mix, both drawn from a seed.
public struct LoadMix: Sendable {
    /// Per entry: its app's topic, its action type and its payloads.
    public struct Kind: Sendable {
        public var app: String
        public var type: String
        /// A pool used in turn (action `i` sends `payloads[i % count]`), or, when ``perAction``, the
        /// payload of each action of the run by its index (empty at the indices of other kinds).
        public var payloads: [[UInt8]]
        /// The template numbers actions (`${seq}`): each action has its own payload.
        public var perAction = false

        public init(app: String, type: String, payloads: [[UInt8]], perAction: Bool = false) {
            self.app = app
            self.type = type
            self.payloads = payloads
            self.perAction = perAction
        }
    }

    public var kinds: [Kind]
    /// Which kind action `i` is: `kinds[picks[i % picks.count]]`, drawn by weight.
    public var picks: [UInt16]

    /// Payloads generated per entry whose template does not number its actions.
    public static let poolSize = 4096
    /// At most this many actions of a run get their own `${seq}` payload (rounded up to whole turns of
    /// the mix); later ones reuse them in turn, so `${seq}` counts up to about a million, then repeats.
    public static let perActionLimit = 1 << 20

    public init(kinds: [Kind], picks: [UInt16]) {
        self.kinds = kinds
        self.picks = picks.isEmpty ? [0] : picks
    }

    /// One kind, every action (what `LoadClient` sent before mixes).
    public init(app: String, type: String, payloads: [[UInt8]]) {
        self.init(kinds: [Kind(app: app, type: type, payloads: payloads)], picks: [0])
    }

    /// Draws the order of the mix by weight and makes every entry's payloads with `encode` (app, type,
    /// arguments JSON → wire payload). With `actions` (how many the run sends), an entry whose template
    /// has `${seq}` gets one payload per action of the run, numbered by the action's index; without it,
    /// or for other entries, a pool of ``poolSize`` where `${seq}` numbers the payload in the pool.
    public init(
        _ workload: Workload, seed: UInt64 = 1, actions: Int? = nil, encode: (String, String, [UInt8]) throws -> [UInt8]
    ) throws {
        var rng = SplitMix64(seed: seed)
        // Smooth weighted order: each entry appears in proportion to its weight, shuffled by the seed.
        let total = workload.mix.reduce(0) { $0 + $1.weight }
        let length = max(LoadMix.poolSize, total)
        var picks: [UInt16] = []
        picks.reserveCapacity(length)
        for (index, entry) in workload.mix.enumerated() {
            let share = Int((Double(entry.weight) / Double(total) * Double(length)).rounded())
            picks.append(contentsOf: repeatElement(UInt16(index), count: max(1, share)))
        }
        picks.shuffle(using: &rng)
        self.init(kinds: [], picks: picks)
        // Per-action payloads cover whole turns of `picks`, so index `i % covered` is of `i`'s kind.
        let turns = actions.map { (min($0, LoadMix.perActionLimit) + self.picks.count - 1) / self.picks.count } ?? 0
        let covered = max(1, turns) * self.picks.count
        for (number, entry) in workload.mix.enumerated() {
            func make(_ seq: Int, _ rng: inout SplitMix64) throws -> [UInt8] {
                let arguments = entry.payload.render(seq: seq, using: &rng)
                do {
                    return try encode(entry.app, entry.type, Array(arguments.utf8))
                } catch {
                    // Every payload is checked before the run; say which entry made a bad one.
                    throw BenchError("\(entry.location ?? workload.name): \(error)")
                }
            }
            if actions != nil && entry.payload.numbersActions {
                var payloads = [[UInt8]](repeating: [], count: covered)
                for index in 0..<covered where kind(of: index) == number { payloads[index] = try make(index, &rng) }
                kinds.append(Kind(app: entry.app, type: entry.type, payloads: payloads, perAction: true))
            } else {
                var payloads: [[UInt8]] = []
                payloads.reserveCapacity(LoadMix.poolSize)
                for seq in 0..<LoadMix.poolSize { payloads.append(try make(seq, &rng)) }
                kinds.append(Kind(app: entry.app, type: entry.type, payloads: payloads))
            }
        }
    }

    /// The kind of action `index`.
    public func kind(of index: Int) -> Int { Int(picks[index % picks.count]) }

    /// The payload of action `index`.
    public func payload(of index: Int) -> [UInt8] {
        let kind = kinds[kind(of: index)]
        return kind.payloads[index % kind.payloads.count]
    }
}
