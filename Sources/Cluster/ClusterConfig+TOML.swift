import FluxCore
import Foundation
import TOMLKit

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
        try checkTableHeaders(text, source: source)
        do {
            var config = try TOMLDecoder().decode(ClusterConfig.self, from: text)
            config.text = text
            config.source = source
            try config.checkKeys()
            return config
        } catch let error as ClusterError {
            throw error
        } catch let error as TOMLParseError {
            throw ClusterError("\(source):\(error.source.begin.line): \(error.description)")
        } catch let error as DecodingError {
            // TOMLKit reports a value of the wrong type as a missing key, so name both possibilities.
            if case .keyNotFound(let key, let context) = error {
                let keys = (context.codingPath + [key]).map { $0.intValue.map { "[\($0 + 1)]" } ?? $0.stringValue }
                let path = keys.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
                    .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
                throw ClusterError("\(source): '\(path)' is missing or has the wrong type")
            }
            throw ClusterError("\(source): \(error.shortDescription)")
        }
    }

    /// Refuses, with its line, a table header that would make toml++ abort (``TOMLHeaderGuard``).
    static func checkTableHeaders(_ text: String, source: String) throws {
        if let (line, reason) = TOMLHeaderGuard.firstUnsafeHeader(in: text) { throw ClusterError("\(source):\(line): \(reason)") }
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
