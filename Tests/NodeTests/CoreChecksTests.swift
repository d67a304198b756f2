import Foundation
import Testing

/// The node cores state what they rely on (docs/TESTING.md, "The cores check themselves"): at least two
/// checks (`precondition`, `assert`, `invariant`, or their failing forms) per 100 lines across
/// Sources/NodeCores, so that a broken step stops at the step, and in the simulator ends its seed with
/// the trace, rather than going on to a wrong state. And the files stay a size one can read: none in
/// Sources past 600 lines, and the dispatcher's core, which composes its machines, at most 500.
@Suite("The cores check themselves")
struct CoreChecksTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardized

    static func swiftFiles(under directory: URL) throws -> [URL] {
        let enumerator = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
        return enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    /// The calls that check something, one a line at most (the helper's own declaration aside).
    static func checks(in text: String) -> Int {
        text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            !line.contains("func invariant(") && line.contains(/\b(precondition|preconditionFailure|assert|assertionFailure|invariant)\(/)
        }.count
    }

    @Test("Sources/NodeCores holds at least 2 checks per 100 lines")
    func density() throws {
        var lines = 0, checks = 0
        for file in try Self.swiftFiles(under: Self.sources.appendingPathComponent("NodeCores")) {
            let text = try String(contentsOf: file, encoding: .utf8)
            lines += text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
            checks += Self.checks(in: text)
        }
        #expect(lines > 1000, "the cores were found")
        #expect(checks * 100 >= 2 * lines, "\(checks) checks in \(lines) lines: \(Double(checks * 100) / Double(lines)) per 100")
    }

    @Test("the counter counts calls, not their mentions")
    func counter() {
        #expect(Self.checks(in: "precondition(a)\n    assert(b, \"x\")\ninvariant(c, \"d\", report: nil)\nfunc invariant(_ holds: Bool)") == 3)
        #expect(Self.checks(in: "// a precondition the caller keeps\nlet assertion = 1\nassertionFailure(\"no\")") == 1)
    }

    @Test("no file in Sources is past 600 lines, generated ones included, and DispatcherCore.swift is at most 500")
    func sizes() throws {
        var long: [String] = []
        for file in try Self.swiftFiles(under: Self.sources) {
            let count = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count - 1
            let limit = file.lastPathComponent == "DispatcherCore.swift" ? 500 : 600
            if count > limit { long.append("\(file.lastPathComponent): \(count) lines (at most \(limit))") }
        }
        #expect(long.isEmpty, "\(long.joined(separator: "; "))")
    }
}
