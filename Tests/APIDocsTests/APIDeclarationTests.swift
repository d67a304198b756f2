import Foundation
import Testing

/// docs/API.md's Swift blocks against the code. Its examples are compiled in this module: APITally.swift,
/// which scripts/extract-api.py writes from the page. Its `swift declarations` blocks, excerpts of the
/// package's declarations that no compiler takes on their own, are looked up here in the source files
/// that declare or extend their types.
@Suite("API.md")
struct APIDeclarationTests {
    /// The package's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The Swift blocks of a Markdown page: the word after `swift` on the opening fence ("" for a plain
    /// block), and the code.
    static func blocks(of page: String) -> [(kind: String, code: String)] {
        var blocks: [(String, String)] = []
        var open: (kind: String, lines: [String])?
        for line in page.components(separatedBy: "\n") {
            if let block = open {
                if line == "```" {
                    blocks.append((block.kind, block.lines.joined(separator: "\n")))
                    open = nil
                } else {
                    open?.lines.append(line)
                }
            } else if line == "```swift" || line.hasPrefix("```swift ") {
                open = (String(line.dropFirst("```swift".count)).trimmingCharacters(in: .whitespaces), [])
            }
        }
        return blocks
    }

    /// Swift text as the lookup compares it: comments dropped, whitespace collapsed and removed next to
    /// punctuation, and no trailing comma before a closing bracket.
    static func normalized(_ text: String) -> String {
        text.replacingOccurrences(of: "(?m)(^|[ \\t])//.*$", with: "$1", options: .regularExpression)
            .replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
            .replacingOccurrences(of: " ?([(),:\\[\\]<>{}=&.\\-]) ?", with: "$1", options: .regularExpression)
            .replacingOccurrences(of: ",([)\\]])", with: "$1", options: .regularExpression)
            .trimmingCharacters(in: .whitespaces)
    }

    /// The type a line at a block's left margin declares or extends, if it does.
    static func declaredType(_ line: String) -> String? {
        guard
            let range = line.range(
                of: "\\b(struct|class|enum|protocol|extension|typealias|actor) +[A-Za-z_][A-Za-z0-9_]*", options: .regularExpression)
        else { return nil }
        return line[range].split(separator: " ").last.map(String.init)
    }

    /// The declarations of a `swift declarations` block, each normalized and with the type it belongs to:
    /// the type the last line at the block's left margin declared. A declaration runs on while its
    /// brackets are open, into a `where` clause on the next line, and past a line that ends in `->` or a
    /// comma; an opening brace that ends it, or `{ get }`, is left out.
    static func declarations(_ code: String) -> [(type: String, text: String)] {
        let lines = code.components(separatedBy: "\n")
        var found: [(String, String)] = []
        var type = ""
        var pending: [String] = []
        var depth = 0
        for (index, line) in lines.enumerated() {
            let trimmed = line.replacingOccurrences(of: "(^|[ \\t])//.*$", with: "$1", options: .regularExpression)
                .trimmingCharacters(in: .whitespaces)
            if pending.isEmpty {
                // Blank lines and the braces that close a type.
                if trimmed.allSatisfy({ $0 == "}" }) { continue }
                if !line.hasPrefix(" "), let declared = declaredType(trimmed) { type = declared }
            }
            pending.append(trimmed)
            depth += trimmed.filter { "([{".contains($0) }.count - trimmed.filter { ")]}".contains($0) }.count
            let next = lines[(index + 1)...].first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }?.trimmingCharacters(in: .whitespaces)
            let opensBody = depth == 1 && trimmed.hasSuffix("{")
            if (depth > 0 && !opensBody) || next?.hasPrefix("where ") == true || trimmed.hasSuffix("->") || trimmed.hasSuffix(",") { continue }
            var text = normalized(pending.joined(separator: "\n"))
            if text.hasSuffix("{get}") {
                text.removeLast("{get}".count)
            } else if opensBody {
                text.removeLast()
            }
            found.append((type, text))
            pending = []
            depth = 0
        }
        return found
    }

    /// Whether `declaration` (normalized) is in `text` (normalized), not as part of a longer name: a
    /// declaration that begins or ends with a name must not have a letter, digit or `_` next to it.
    static func isFound(_ declaration: String, in text: String) -> Bool {
        let isName = { (character: Character?) in character.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
        let pattern =
            (isName(declaration.first) ? "(?<![A-Za-z0-9_])" : "") + NSRegularExpression.escapedPattern(for: declaration)
            + (isName(declaration.last) ? "(?![A-Za-z0-9_])" : "")
        return text.range(of: pattern, options: .regularExpression) != nil
    }

    /// The source-location parameters TestStore's methods take after those API.md shows, as its
    /// TestStore section says.
    static let locationParameters = normalized(", fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column")

    /// Every Swift file under Sources/, as its text.
    static func sources() throws -> [String] {
        let directory = root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var files: [String] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            files.append(try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8))
        }
        return files
    }

    @Test("every declaration API.md shows is one the code makes, in a file that declares or extends its type")
    func declarationsAreTheCode() throws {
        let sources = try Self.sources()
        #expect(sources.count > 100, "the sources are found: \(sources.count) files")
        var files: [String: String] = [:]
        func text(of type: String) -> String {
            if let text = files[type] { return text }
            let pattern = "\\b(struct|class|enum|protocol|extension|typealias|actor) +\(type)\\b"
            let text = sources.filter { $0.range(of: pattern, options: .regularExpression) != nil }
                .map { Self.normalized($0).replacingOccurrences(of: Self.locationParameters, with: "") }.joined(separator: "\n")
            files[type] = text
            return text
        }
        let blocks = Self.blocks(of: try Self.read("docs/API.md")).filter { $0.kind == "declarations" }
        #expect(blocks.count >= 8, "API.md's declaration blocks are found: \(blocks.count)")
        var count = 0
        for block in blocks {
            for (type, declaration) in Self.declarations(block.code) {
                count += 1
                // Booleans, so that a failure names the declaration and not the whole of its files.
                let code = text(of: type)
                let declared = !code.isEmpty, found = Self.isFound(declaration, in: code)
                #expect(declared, "no file of Sources/ declares or extends \(type), which API.md shows")
                #expect(found, "API.md shows `\(declaration)` in \(type), and the code declares no such thing")
            }
        }
        #expect(count >= 100, "API.md's declarations are found: \(count)")
    }

    @Test("every other Swift block of API.md is in APITally.swift, as scripts/extract-api.py writes it")
    func examplesAreCompiled() throws {
        let generated = try Self.read("Tests/APIDocsTests/APITally.swift")
        let blocks = Self.blocks(of: try Self.read("docs/API.md"))
        #expect(Set(blocks.map(\.kind)) == ["", "main", "declarations"], "kinds of block: \(Set(blocks.map(\.kind)).sorted())")
        let examples = blocks.filter { $0.kind != "declarations" }
        #expect(examples.count >= 9, "API.md's examples are found: \(examples.count)")
        for (kind, code) in examples {
            var lines = code.components(separatedBy: "\n").filter { !$0.hasPrefix("import ") }
            while lines.first?.isEmpty == true { lines.removeFirst() }
            while lines.last?.isEmpty == true { lines.removeLast() }
            if kind == "main" { lines = lines.map { $0.isEmpty ? $0 : "    " + $0 } }
            let held = generated.contains(lines.joined(separator: "\n"))
            #expect(
                held,
                "APITally.swift does not hold API.md's block that begins \"\(lines.first ?? "")\": run `python3 scripts/extract-api.py`")
        }
    }

    @Test("the lookup finds a declaration as the code writes it, and not one that differs")
    func lookupTellsChanges() {
        let code = Self.normalized(
            """
            public struct MiddlewareContext {
                /// The app the action was dispatched to.
                public let app: String
                public func count(_ key: String) { host.middlewareCount(key) }
                public func send(
                    _ action: Action, assert: ((inout State) throws -> Void)? = nil,
                    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
                ) async {
                }
            }
            """
        ).replacingOccurrences(of: Self.locationParameters, with: "")
        let block = """
            public struct MiddlewareContext {
                public let app: String
                public func count(_ key: String)
                public func send(_ action: Action, assert: ((inout State) throws -> Void)? = nil) async
            }
            """
        let shown = Self.declarations(block)
        #expect(shown.map(\.type) == Array(repeating: "MiddlewareContext", count: 4))
        for (_, declaration) in shown { #expect(Self.isFound(declaration, in: code), "\(declaration)") }
        for changed in [
            "public let apps: String", "public let app: Int", "public let app: Str", "public func count(_ key: Int)",
            "public func count(key: String)",
        ] {
            #expect(!Self.isFound(Self.normalized(changed), in: code), "\(changed)")
        }
    }
}
