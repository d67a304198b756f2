import FluxCore
import Foundation
import TOML

/// A config as TOML text: the default one, reading a file, and writing a value built in code.
extension ClusterConfig {
    /// The config `cluster up` uses without `--config`: a dispatcher and one store per app, named
    /// after it, over ipc.
    public static func defaultText(apps: [String]) -> String {
        var text = """
            # \(apps.isEmpty ? "no apps" : "one store per app"), over ipc
            [cluster]
            transport = "ipc"
            heartbeat_ms = 200

            [journal]
            fsync = "batch"

            """
        for app in apps { text += "\n[[store]]\nname = \"\(app)\"\n" }
        return text
    }

    /// This config as a TOML document that ``parse(_:source:)`` reads back as the same config: the
    /// keys it sets, and nothing for those it leaves to their defaults.
    public func tomlText() throws -> String {
        try TOMLEncoder(keyEncodingStrategy: Settings.keyEncoding).encode(self)
    }

    public static func parse(_ text: String, source: String) throws -> ClusterConfig {
        do {
            let table = try TOMLParser.parse(text)
            // Every setting takes a whole number, a string, true or false: a float is a mistake, which
            // Foundation's decoder would report without its key.
            if let (path, value) = firstFloat(in: .table(table), path: []) {
                throw located(path, "is \(value.inline): it takes a whole number", text: text, source: source)
            }
            var config = try TOMLDecoder(keyDecodingStrategy: Settings.keyDecoding).decode(ClusterConfig.self, from: table)
            config.text = text
            config.source = source
            try config.checkKeys()
            return config
        } catch let error as ClusterError {
            throw error
        } catch let error as TOMLError {
            throw ClusterError("\(source):\(error.line): \(error.message)")
        } catch let error as DecodingError {
            throw decodingError(error, text: text, source: source)
        }
    }

    /// One step of a path into the config: a key, or an entry of an array (from 0).
    enum PathStep {
        case key(String)
        case index(Int)
    }

    /// The first float in `value`, and where.
    static func firstFloat(in value: TOMLValue, path: [PathStep]) -> ([PathStep], TOMLValue)? {
        switch value {
        case .float: return (path, value)
        case .array(let items):
            for (index, item) in items.enumerated() { if let found = firstFloat(in: item, path: path + [.index(index)]) { return found } }
        case .table(let table):
            for (key, item) in table.entries { if let found = firstFloat(in: item, path: path + [.key(key)]) { return found } }
        default: break
        }
        return nil
    }

    /// "FILE:LINE: 'store[2].port' PROBLEM", the line being the key's (or its table's).
    static func located(_ path: [PathStep], _ problem: String, missing: Bool = false, text: String, source: String) -> ClusterError {
        var names: [String] = [], index: Int?
        for (position, step) in path.enumerated() {
            switch step {
            case .key(let key): names.append(key)
            case .index(let number):
                // The entry of an array of tables ([[store]], [[dispatcher]]) is the one that names a line.
                if position == 1 { index = number }
                if names.isEmpty { names.append("") }
                names[names.count - 1] += "[\(number + 1)]"
            }
        }
        let plain = path.compactMap { if case .key(let key) = $0 { key } else { nil } }
        let line = ClusterConfig.line(
            in: text, key: missing ? nil : plain.last, table: plain.count > 1 ? plain.dropLast().joined(separator: ".") : nil, storeIndex: index)
        return ClusterError("\(source):\(line.map { "\($0): " } ?? " ")'\(names.joined(separator: "."))' \(problem)")
    }

    /// A decoding error in the config's words: what the key takes and what it holds.
    static func decodingError(_ error: DecodingError, text: String, source: String) -> ClusterError {
        var path = error.codingPath
        let problem: String
        switch error {
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
            problem = "is missing"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            problem = "takes \(kindName(of: type)), not \(foundKind(context.debugDescription))\(quoteHint(type, context.debugDescription))"
        case .dataCorrupted(let context):
            problem = "cannot be read: \(context.debugDescription)"
        @unknown default:
            problem = "cannot be read"
        }
        // The decoder names a section's field; the file, its setting's key.
        let steps = path.indices.map { end in path[end].intValue.map(PathStep.index) ?? .key(Settings.fileKey(at: Array(path[...end]))) }
        let missing = if case .keyNotFound = error { true } else { false }
        return located(steps, problem, missing: missing, text: text, source: source)
    }

    /// What a Swift type is called in a config: "a whole number", "a string in quotes".
    static func kindName(of type: Any.Type) -> String {
        let name = String(describing: type)
        if name.hasPrefix("Int") || name.hasPrefix("UInt") { return "a whole number" }
        if name == "String" { return "a string in quotes" }
        if name == "Bool" { return "true or false" }
        if name.hasPrefix("Dictionary") { return "a table" }
        if name.hasPrefix("Array") { return "an array" }
        return name
    }

    /// What the value was, from Foundation's "Expected to decode X but found a string instead."
    static func foundKind(_ description: String) -> String {
        guard let start = description.range(of: "found "), let end = description.range(of: " instead", range: start.upperBound..<description.endIndex)
        else { return "that" }
        let found = description[start.upperBound..<end.lowerBound]
        switch found {
        case "a dictionary", "dictionary": return "a table"
        case "number", "a number": return "a number"
        case "bool", "a bool", "a boolean": return "true or false"
        default: return String(found)
        }
    }

    /// How to fix the commonest mismatch: quotes around a number, or none around a name.
    static func quoteHint(_ type: Any.Type, _ description: String) -> String {
        let found = foundKind(description)
        if type != String.self, found == "a string" { return " (write it without quotes)" }
        if type == String.self, found == "a number" || found == "true or false" { return " (write it in quotes)" }
        return ""
    }

    /// Reads the config at `path`; without one, parses `defaultText` (the binary's default cluster).
    public static func load(path: String?, defaultText: String = "") throws -> ClusterConfig {
        guard let path else { return try parse(defaultText, source: "the default config") }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "it is not readable UTF-8 text" : "no such file"
            throw ClusterError("cannot read the config file \(path): \(reason)")
        }
        var config = try parse(text, source: path)
        let absolute = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
        config.baseDirectory = absolute.deletingLastPathComponent().path
        return config
    }
}
