import Cluster
import FluxCore
import Foundation
import TOML

extension Workload {
    /// The keys a workload file may hold, by table ("" for the top level), in the order errors list them
    /// (docs/reference/workload.md lists the same).
    package static let knownKeys: [String: [String]] = [
        "": ["load", "prepare", "action"],
        "load": ["clients", "rate_per_client", "ramp_seconds"],
        "prepare": ["app", "action", "payload"],
        "action": ["app", "type", "weight", "payload"],
    ]
    /// `[load] clients`: client connections.
    package static let clientRange = 1...64
    /// `[load] rate_per_client`: actions per second, above 0 and at most this.
    package static let maxRatePerClient: Double = 5_000_000
    /// `[load] ramp_seconds`.
    package static let rampRange: ClosedRange<Double> = 0...3600
    /// `[[action]] weight`.
    package static let weightRange = 1...1_000_000

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
        let table: TOMLTable
        do {
            table = try TOMLParser.parse(text)
        } catch {
            throw WorkloadError(source: source, line: error.line, error.message)
        }
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
        func line(_ table: String?, _ index: Int?, _ key: String?) -> Int? { lineOf(lines, table: table, index: index, key: key) }
        func fail(_ table: String?, _ index: Int?, _ key: String?, _ message: String) -> WorkloadError {
            WorkloadError(source: source, line: line(table, index, key), message)
        }
        for key in table.keys where !(knownKeys[""] ?? []).contains(key) {
            throw fail(nil, nil, key, "unknown key '\(key)' (a workload has [load], [[prepare]] and [[action]])")
        }
        var workload = Workload(name: (source as NSString).lastPathComponent, mix: [])
        if let load = table["load"] {
            guard let load = load.table else { throw fail(nil, nil, "load", "'load' must be a table: [load]") }
            let loadKeys = knownKeys["load"] ?? []
            for key in load.keys where !loadKeys.contains(key) {
                throw fail("load", nil, key, "unknown key '\(key)' in [load] (it has \(loadKeys.joined(separator: ", ")))")
            }
            if let value = load["clients"] {
                guard let clients = value.int, clientRange.contains(clients) else {
                    throw fail("load", nil, "clients", "clients must be \(clientRange.lowerBound)…\(clientRange.upperBound)")
                }
                workload.clients = clients
            }
            if let value = load["rate_per_client"] {
                guard let rate = value.double ?? value.int.map(Double.init), rate > 0, rate <= maxRatePerClient else {
                    throw fail(
                        "load", nil, "rate_per_client",
                        "rate_per_client must be a number of actions per second, above 0 and at most \(Int(maxRatePerClient))")
                }
                workload.ratePerClient = rate
            }
            if let value = load["ramp_seconds"] {
                guard let ramp = value.double ?? value.int.map(Double.init), rampRange.contains(ramp) else {
                    throw fail("load", nil, "ramp_seconds", "ramp_seconds must be \(Int(rampRange.lowerBound))…\(Int(rampRange.upperBound))")
                }
                workload.rampSeconds = ramp
            }
        }
        /// A `[[name]]` array of tables, each checked for its keys.
        func entries(_ name: String) throws(WorkloadError) -> [TOMLTable] {
            let keys = knownKeys[name] ?? []
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
            if let inline = value.table { return try PayloadTemplate(json: TOMLValue.table(inline).json, source: source, line: at) }
            throw WorkloadError(source: source, line: at, "payload must be a JSON object in a string ('{\"a\": 1}') or an inline table ({ a = 1 })")
        }
        for (index, entry) in try entries("prepare").enumerated() {
            let app = try string(entry, "app", "prepare", index)
            let action = try string(entry, "action", "prepare", index)
            try checkName(action, what: "action", source: source, line: line("prepare", index, "action"))
            let template = try payload(entry, "prepare", index)
            guard template.references.isEmpty else {
                throw WorkloadError(
                    source: source, line: line("prepare", index, "payload"),
                    "a [[prepare]] step's payload cannot use ${from …}: it is read from the state the prepare steps leave, for the [[action]]s")
            }
            var rng = SplitMix64(seed: UInt64(index))
            workload.prepare.append(Step(app: app, action: action, arguments: template.render(seq: 0, using: &rng)))
        }
        for (index, entry) in try entries("action").enumerated() {
            let app = try string(entry, "app", "action", index)
            let type = try string(entry, "type", "action", index)
            try checkName(type, what: "type", source: source, line: line("action", index, "type"))
            var weight = 1
            if let value = entry["weight"] {
                guard let number = value.int, weightRange.contains(number) else {
                    throw fail("action", index, "weight", "weight must be a whole number from \(weightRange.lowerBound) to \(weightRange.upperBound)")
                }
                weight = number
            }
            var parsed = Entry(app: app, type: type, weight: weight, payload: try payload(entry, "action", index))
            // The entry's [[action]] line: a refusal may be about its type as well as its payload.
            parsed.location = "\(source):\(line("action", index, nil) ?? 0)"
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
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
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

}
