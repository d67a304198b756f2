import FluxMacros
import Foundation
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import Testing

/// The example apps' `@WireCodable` conformances, written out: the stock binary builds the examples
/// without the macro, so that it builds no swift-syntax (a release build spends most of its time on
/// it), and a team's package that writes `@WireCodable` still builds the macro as before.
///
/// An example type asks for its conformance with a line comment `// @WireCodable` where the attribute
/// would be. This test expands each such type with the macro's own code, through the same entry point
/// the compiler's plugin calls (`expandAttachedMacro`, both roles), and checks that each example source
/// with marked types has its generated file beside it (Counter.swift → Counter+WireCodable.swift) that
/// is what the macro writes today, byte for byte, and that no generated file is left without such a
/// source: the files and the macro cannot drift. `ZFLUX_WRITE_EXPANSIONS=1 swift test --filter
/// WireCodableExpansionTests` (`make expand-macros`) writes the files again, removes the stale ones and
/// then fails on purpose; review the diff and run the test again.
///
/// The one change to the macro's text: its member part (the `__WireTypeN` aliases) lives in the type
/// where the compiler expands it, and here in an extension at file scope, where a type nested in an
/// enclosing type (`Item` in `Food.Row`) is not in scope; such names are written qualified
/// (`Food.Item`). The generated `init(wireReader:)` assigns each alias's value to its field, so an
/// alias that named another type would not compile. For the same reason (another file), a marked
/// type's stored properties cannot be `private`.
@Suite("@WireCodable written out for the example apps")
struct WireCodableExpansionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    static let examples = root.appendingPathComponent("Sources/Examples")
    static let marker = "// @WireCodable"
    /// What a generated file's name ends with; the generator owns every file in Sources/Examples so named.
    static let generatedSuffix = "+WireCodable.swift"
    /// How every generated file begins, whatever its name (a file so begun is the generator's too).
    static let generatedOpening = "// swift-format-ignore-file\n// Generated: what `@WireCodable` writes"

    @Test("each example with marked types has its +WireCodable.swift, what the macro writes today, and no other is left")
    func generatedFilesAreTheMacros() throws {
        let expected = try Self.generate()
        let onDisk = try Self.generatedFiles()
        let stale = onDisk.filter { expected[$0.lastPathComponent] == nil }
        if ProcessInfo.processInfo.environment["ZFLUX_WRITE_EXPANSIONS"] == "1" {
            for (name, text) in expected { try text.write(to: Self.examples.appendingPathComponent(name), atomically: true, encoding: .utf8) }
            for file in stale { try FileManager.default.removeItem(at: file) }
            Issue.record(
                """
                wrote \(expected.keys.sorted().joined(separator: ", ")) in \(Self.examples.path)\
                \(stale.isEmpty ? "" : " and removed \(stale.map(\.lastPathComponent).joined(separator: ", "))"): \
                review the diff, then run the test again without ZFLUX_WRITE_EXPANSIONS
                """)
            return
        }
        #expect(!expected.isEmpty, "the generator finds the marked types")
        let again = "Write them again with `make expand-macros` (ZFLUX_WRITE_EXPANSIONS=1 swift test --filter WireCodableExpansionTests)."
        for (name, text) in expected.sorted(by: { $0.key < $1.key }) {
            guard let actual = try? String(contentsOf: Self.examples.appendingPathComponent(name), encoding: .utf8) else {
                Issue.record("\(name) is missing: \(Self.sourceName(of: name)) marks types \(Self.marker). \(again)")
                continue
            }
            if actual != text {
                Issue.record(
                    """
                    \(name) is not what @WireCodable writes for the types \(Self.sourceName(of: name)) marks \(Self.marker) \
                    (\(Self.firstDifference(actual, text))). \(again)
                    """)
            }
        }
        for name in stale.map(\.lastPathComponent) {
            let why =
                name.hasSuffix(Self.generatedSuffix)
                ? "no \(Self.sourceName(of: name)) marks a type \(Self.marker) (names ending \(Self.generatedSuffix) are the generator's)"
                : "it begins as a generated file, and the generator writes only names ending \(Self.generatedSuffix)"
            Issue.record("\(name) is a stale generated file: \(why). Remove it, or write the files again with `make expand-macros`.")
        }
    }

    @Test("the examples use no macro: no @WireCodable attribute and no import of FluxWire, and some types are marked")
    func examplesUseNoMacro() throws {
        var marked = 0
        for file in try Self.sourceFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            let tree = Parser.parse(source: text)
            let finder = MarkedTypes(viewMode: .sourceAccurate)
            finder.walk(tree)
            marked += finder.found.count
            let named = "\(Self.marker): written out in \(Self.generatedName(for: file.lastPathComponent))"
            for text in finder.markers where text != Self.marker && text != named {
                Issue.record("\(file.lastPathComponent) marks a type `\(text)`: write `\(Self.marker)` or `\(named)`")
            }
            #expect(!finder.attributes.contains("WireCodable"), "\(file.lastPathComponent) writes @WireCodable: mark the type \(Self.marker) instead")
            #expect(
                !tree.statements.contains { $0.item.as(ImportDeclSyntax.self)?.path.first?.name.text == "FluxWire" },
                "\(file.lastPathComponent) imports FluxWire")
        }
        #expect(marked >= 20, "marked types found: \(marked)")
    }

    @Test("a nested type's name is qualified where the extension would not see it, and kept where it would")
    func qualification() throws {
        let source = """
            enum Outer {
                struct Sibling {}
                // @WireCodable
                struct Inner {
                    struct Own {}
                    var sibling: [Sibling]
                    var own: Own
                    var dictionary: Dictionary<Int, Sibling>.Values
                    var plain: Int
                }
            }
            """
        let generated = try Self.expansions(of: Parser.parse(source: source), file: "Outer.swift")
        #expect(generated.contains("typealias __WireType0 = [Outer.Sibling]"), "\(generated)")
        #expect(generated.contains("typealias __WireType1 = Own"), "\(generated)")
        #expect(generated.contains("typealias __WireType2 = Dictionary<Int, Outer.Sibling>.Values"), "\(generated)")
        #expect(generated.contains("typealias __WireType3 = Int"), "\(generated)")
        #expect(generated.contains("extension Outer.Inner: WireEncodable, WireDecodable {"), "\(generated)")
    }

    // MARK: The generator

    /// The first line where a file differs from what the macro writes (the files are long).
    static func firstDifference(_ actual: String, _ expected: String) -> String {
        let has = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let writes = expected.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = zip(has, writes).enumerated().first(where: { $0.element.0 != $0.element.1 }) else { return "their lengths differ" }
        return "line \(first.offset + 1): the file has\n\(first.element.0)\nthe macro writes\n\(first.element.1)"
    }

    /// The example sources: every Swift file in Sources/Examples but the generated ones.
    static func sourceFiles() throws -> [URL] {
        try swiftFiles().filter { !(try isGenerated($0)) }
    }

    /// The generated files in Sources/Examples today, whether or not a source still stands behind them.
    static func generatedFiles() throws -> [URL] {
        try swiftFiles().filter { try isGenerated($0) }
    }

    static func swiftFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: examples, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func isGenerated(_ file: URL) throws -> Bool {
        if file.lastPathComponent.hasSuffix(generatedSuffix) { return true }
        return try String(contentsOf: file, encoding: .utf8).hasPrefix(generatedOpening)
    }

    /// The generated file for an example source: Counter.swift → Counter+WireCodable.swift.
    static func generatedName(for source: String) -> String {
        String(source.dropLast(".swift".count)) + generatedSuffix
    }

    /// The source a generated file's name stands for: Counter+WireCodable.swift → Counter.swift.
    static func sourceName(of generated: String) -> String {
        generated.hasSuffix(generatedSuffix) ? String(generated.dropLast(generatedSuffix.count)) + ".swift" : generated
    }

    /// Each generated file by name, one per example source with marked types: a header, the source's
    /// own imports, and each marked type's expansion in source order.
    static func generate() throws -> [String: String] {
        var files: [String: String] = [:]
        for file in try sourceFiles() {
            let tree = Parser.parse(source: try String(contentsOf: file, encoding: .utf8))
            let body = try expansions(of: tree, file: file.lastPathComponent)
            guard !body.isEmpty else { continue }
            var imports: Set<String> = []
            for statement in tree.statements {
                if let name = statement.item.as(ImportDeclSyntax.self)?.path.first?.name.text, name != "FluxWire" { imports.insert(name) }
            }
            let header = """
                \(generatedOpening) for the types in \(file.lastPathComponent) marked `\(marker)`, so that
                // the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
                // a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
                // fails while it differs from what the macro writes.


                """
            files[generatedName(for: file.lastPathComponent)] = header + imports.sorted().map { "import \($0)\n" }.joined() + body
        }
        return files
    }

    /// The expansions of every marked struct and enum in `tree`.
    static func expansions(of tree: SourceFileSyntax, file: String) throws -> String {
        let finder = MarkedTypes(viewMode: .sourceAccurate)
        finder.walk(tree)
        var text = ""
        let attribute = AttributeSyntax(attributeName: IdentifierTypeSyntax(name: .identifier("WireCodable")))
        let conformances = try #require(
            Parser.parse(source: "struct __Conformances: WireEncodable, WireDecodable {}").statements.first?.item.as(StructDeclSyntax.self)?
                .inheritanceClause?.inheritedTypes)
        for found in finder.found {
            let declaration = found.declaration
            let context = BasicMacroExpansionContext()
            let qualifiedName = found.enclosing.map(\.name).joined(separator: ".")
            let members = expand(.member, attribute, declaration, extendedType: nil, conformances: nil, in: context)
            let extensions = expand(
                .extension, attribute, declaration, extendedType: TypeSyntax(stringLiteral: qualifiedName), conformances: conformances, in: context)
            #expect(context.diagnostics.isEmpty, "\(file): \(qualifiedName): \(context.diagnostics.map(\.message))")
            let member = try #require(members, "\(file): \(qualifiedName): no member expansion")
            let extensionText = try #require(extensions, "\(file): \(qualifiedName): no extension")
            text += "\n// \(file): \(qualifiedName)\n"
            if !member.isEmpty {
                // One alias a line, a blank line between them as the plugin joins members.
                let aliases = member.split(separator: "\n").map { line in
                    "    " + qualify(String(line).trimmingCharacters(in: .whitespaces), enclosing: found.enclosing)
                }
                text += "\nextension \(qualifiedName) {\n\(aliases.joined(separator: "\n"))\n}\n"
            }
            text += "\n\(extensionText)\n"
        }
        return text
    }

    /// One role's expansion as the plugin returns it to the compiler (swift-syntax 602 renamed the label).
    static func expand(
        _ role: MacroRole, _ attribute: AttributeSyntax, _ declaration: DeclSyntax, extendedType: TypeSyntax?,
        conformances: InheritedTypeListSyntax?, in context: BasicMacroExpansionContext
    ) -> String? {
        #if canImport(SwiftSyntax602)
            expandAttachedMacro(
                definition: WireCodableMacro.self, macroRole: role, attributeNode: attribute, node: declaration, parentDeclNode: nil,
                extendedType: extendedType, conformanceList: conformances, in: context)
        #else
            expandAttachedMacro(
                definition: WireCodableMacro.self, macroRole: role, attributeNode: attribute, declarationNode: declaration,
                parentDeclNode: nil, extendedType: extendedType, conformanceList: conformances, in: context)
        #endif
    }

    /// `typealias __WireTypeN = T` with each name in `T` that a type enclosing the marked one declares
    /// (other than the marked type itself, whose own members an extension sees) written qualified.
    static func qualify(_ alias: String, enclosing: [Enclosing]) -> String {
        guard let decl = Parser.parse(source: alias).statements.first?.item.as(TypeAliasDeclSyntax.self) else { return alias }
        let rewriter = Qualifier(enclosing: enclosing)
        let type = rewriter.rewrite(decl.initializer.value).cast(TypeSyntax.self)
        return decl.with(\.initializer.value, type).trimmedDescription
    }

    struct Enclosing {
        var name: String
        var nestedTypes: Set<String>
    }

    final class Qualifier: SyntaxRewriter {
        let enclosing: [Enclosing]
        init(enclosing: [Enclosing]) {
            self.enclosing = enclosing
            super.init(viewMode: .sourceAccurate)
        }

        override func visit(_ node: IdentifierTypeSyntax) -> TypeSyntax {
            let visited = super.visit(node).cast(IdentifierTypeSyntax.self)
            // Innermost first; the marked type's own members resolve in its extension as they are.
            if enclosing.last?.nestedTypes.contains(node.name.text) == true { return TypeSyntax(visited) }
            for depth in enclosing.indices.dropLast().reversed() where enclosing[depth].nestedTypes.contains(node.name.text) {
                let prefix = enclosing[...depth].map(\.name).joined(separator: ".")
                return TypeSyntax(visited.with(\.name, .identifier(prefix + "." + node.name.text)))
            }
            return TypeSyntax(visited)
        }
    }

    /// The structs and enums marked `// @WireCodable`, with the types enclosing each (itself last), the
    /// markers as written, and the attributes written on any type.
    final class MarkedTypes: SyntaxVisitor {
        var found: [(declaration: DeclSyntax, enclosing: [Enclosing])] = []
        var attributes: [String] = []
        /// The marker comments as written.
        var markers: [String] = []
        var stack: [Enclosing] = []

        func enter(_ node: some DeclGroupSyntax, name: String) {
            let nested = node.memberBlock.members.compactMap { member -> String? in
                let decl = member.decl
                if let type = decl.as(StructDeclSyntax.self) { return type.name.text }
                if let type = decl.as(EnumDeclSyntax.self) { return type.name.text }
                if let type = decl.as(ClassDeclSyntax.self) { return type.name.text }
                if let type = decl.as(ActorDeclSyntax.self) { return type.name.text }
                if let type = decl.as(TypeAliasDeclSyntax.self) { return type.name.text }
                return decl.as(ProtocolDeclSyntax.self)?.name.text
            }
            stack.append(Enclosing(name: name, nestedTypes: Set(nested)))
            attributes += node.attributes.compactMap { $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription }
            let markers = node.leadingTrivia.compactMap { piece -> String? in
                if case .lineComment(let text) = piece, text.hasPrefix(WireCodableExpansionTests.marker) { return text }
                return nil
            }
            self.markers += markers
            if !markers.isEmpty {
                // The declaration as the compiler hands it to the plugin: with its attribute.
                var declaration = node
                let attribute = AttributeSyntax(attributeName: IdentifierTypeSyntax(name: .identifier("WireCodable")))
                declaration.attributes = AttributeListSyntax([.attribute(attribute.with(\.trailingTrivia, .newline))] + Array(node.attributes))
                found.append((DeclSyntax(declaration), stack))
            }
        }

        override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind {
            enter(node, name: node.name.text)
            return .visitChildren
        }
        override func visitPost(_ node: StructDeclSyntax) { stack.removeLast() }
        override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind {
            enter(node, name: node.name.text)
            return .visitChildren
        }
        override func visitPost(_ node: EnumDeclSyntax) { stack.removeLast() }
        override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind {
            enter(node, name: node.name.text)
            return .visitChildren
        }
        override func visitPost(_ node: ClassDeclSyntax) { stack.removeLast() }
        override func visit(_ node: ExtensionDeclSyntax) -> SyntaxVisitorContinueKind {
            enter(node, name: node.extendedType.trimmedDescription)
            return .visitChildren
        }
        override func visitPost(_ node: ExtensionDeclSyntax) { stack.removeLast() }
    }
}
