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
        try TOMLEncoder().encode(self)
    }

    public static func parse(_ text: String, source: String) throws -> ClusterConfig {
        do {
            var config = try TOMLDecoder().decode(ClusterConfig.self, from: text)
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

    /// "FILE:LINE: 'store[2].port' has the wrong type: …", the line being the key's (or its table's).
    static func decodingError(_ error: DecodingError, text: String, source: String) -> ClusterError {
        var path = error.codingPath
        var problem: String
        switch error {
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
            problem = "is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            problem = "has the wrong type: \(context.debugDescription.prefix(1).lowercased() + context.debugDescription.dropFirst())"
        case .dataCorrupted(let context):
            problem = "cannot be read: \(context.debugDescription)"
        @unknown default:
            problem = "cannot be read"
        }
        var names: [String] = [], index: Int?
        for (position, key) in path.enumerated() {
            if let number = key.intValue {
                // The entry of an array of tables ([[store]], [[dispatcher]]) is the one that names a line.
                if position == 1 { index = number }
                names[names.count - 1] += "[\(number + 1)]"
            } else {
                names.append(key.stringValue)
            }
        }
        let plain = path.filter { $0.intValue == nil }.map(\.stringValue)
        let missing = if case .keyNotFound = error { true } else { false }
        let line = ClusterConfig.line(
            in: text, key: missing ? nil : plain.last, table: plain.count > 1 ? plain.dropLast().joined(separator: ".") : nil, storeIndex: index)
        return ClusterError("\(source):\(line.map { "\($0): " } ?? " ")'\(names.joined(separator: "."))' \(problem)")
    }

    /// Reads the config at `path`; without one, parses `defaultText` (the binary's default cluster).
    public static func load(path: String?, defaultText: String = "") throws -> ClusterConfig {
        guard let path else { return try parse(defaultText, source: "the default config") }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ClusterError("cannot read the config file \(path)")
        }
        var config = try parse(text, source: path)
        let absolute = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
        config.baseDirectory = absolute.deletingLastPathComponent().path
        return config
    }
}
