import FluxCore
import Foundation

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
        /// Where its `[[action]]` table starts (`mix.toml:12`), for errors about its type or payloads.
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
