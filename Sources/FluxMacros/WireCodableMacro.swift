import SwiftCompilerPlugin
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

@main
struct FluxMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [WireCodableMacro.self]
}

/// `@WireCodable`: a `WireEncodable`/`WireDecodable` conformance that writes and reads what synthesized
/// `Codable` writes and reads through the binary codec (FluxCore's WireCodable.swift has the runtime).
///
/// The extension (at file scope) names no field type itself: the member part declares a typealias per
/// field inside the type (`__WireType0`…), where the field's type name resolves as it does in the
/// declaration, and the extension uses `Self.__WireType0`.
public struct WireCodableMacro: ExtensionMacro, MemberMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        // Refusals are reported once, by the extension part.
        guard let types = try? fieldTypes(of: declaration) else { return [] }
        return types.enumerated().map { i, type in "typealias __WireType\(raw: i) = \(raw: type)" }
    }

    /// As many as FluxWire's declaration of the macro names (`__WireType0`…`__WireType31`).
    static let maxFieldTypes = 32

    /// The types the generated code reads, in the order `typeName(_:)` numbers them.
    static func fieldTypes(of declaration: some DeclGroupSyntax) throws -> [String] {
        if declaration.is(StructDeclSyntax.self) {
            return try storedProperties(of: declaration.memberBlock).filter { !$0.encodeOnly }.map(\.type)
        }
        if let enumDecl = declaration.as(EnumDeclSyntax.self), rawType(of: enumDecl) == nil {
            return try cases(of: declaration.memberBlock).flatMap { $0.values.map(\.field.type) }
        }
        return []
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        do {
            return try extensions(of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols)
        } catch let refusal as Refusal {
            context.diagnose(Diagnostic(node: refusal.node, message: refusal))
            return []
        }
    }

    static func extensions(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax]
    ) throws -> [ExtensionDeclSyntax] {
        let access = accessLevel(of: declaration)
        if try fieldTypes(of: declaration).count > maxFieldTypes {
            throw Refusal("@WireCodable handles at most \(maxFieldTypes) properties or associated values", at: node)
        }
        let body: String
        if let structDecl = declaration.as(StructDeclSyntax.self) {
            if structDecl.genericParameterClause != nil { throw Refusal("@WireCodable does not handle generic types", at: structDecl.name) }
            try refuseCustomCoding(in: declaration.memberBlock)
            body = try structBody(fields: storedProperties(of: declaration.memberBlock), access: access)
        } else if let enumDecl = declaration.as(EnumDeclSyntax.self) {
            if enumDecl.genericParameterClause != nil { throw Refusal("@WireCodable does not handle generic types", at: enumDecl.name) }
            try refuseCustomCoding(in: declaration.memberBlock)
            if let raw = rawType(of: enumDecl) {
                body = rawEnumBody(raw: raw, access: access)
            } else {
                body = try enumBody(cases: cases(of: declaration.memberBlock), access: access)
            }
        } else {
            throw Refusal("@WireCodable applies to structs and enums only", at: node)
        }
        let conformances = protocols.map(\.trimmedDescription)
        let clause = conformances.isEmpty ? "" : ": " + conformances.joined(separator: ", ")
        let decl: DeclSyntax = "extension \(type.trimmed)\(raw: clause) {\n\(raw: body)\n}"
        guard let ext = decl.as(ExtensionDeclSyntax.self) else { throw Refusal("@WireCodable could not build its extension", at: node) }
        return [ext]
    }

    // MARK: What the macro refuses

    static func refuseCustomCoding(in members: MemberBlockSyntax) throws {
        for member in members.members {
            let decl = member.decl
            if decl.is(IfConfigDeclSyntax.self) { throw Refusal("@WireCodable does not handle #if among members", at: decl) }
            if let nested = decl.as(EnumDeclSyntax.self), nested.name.text == "CodingKeys" {
                throw Refusal("@WireCodable does not handle custom CodingKeys: the generated code would not match them", at: nested.name)
            }
            if let alias = decl.as(TypeAliasDeclSyntax.self), alias.name.text == "CodingKeys" {
                throw Refusal("@WireCodable does not handle custom CodingKeys", at: alias.name)
            }
            if let initDecl = decl.as(InitializerDeclSyntax.self),
                initDecl.signature.parameterClause.parameters.first?.firstName.text == "from",
                initDecl.signature.parameterClause.parameters.count == 1
            {
                throw Refusal("@WireCodable does not handle a custom init(from:): the generated decoder would not match it", at: initDecl)
            }
            if let function = decl.as(FunctionDeclSyntax.self), function.name.text == "encode",
                function.signature.parameterClause.parameters.first?.firstName.text == "to"
            {
                throw Refusal("@WireCodable does not handle a custom encode(to:): the generated encoder would not match it", at: function.name)
            }
        }
    }

    // MARK: Structs

    struct Field {
        var name: String
        /// The declared (or inferred) type; for an optional, the wrapped type.
        var type: String
        var isOptional: Bool
        /// A `let` with an initial value: written, never read (as synthesized `Codable`).
        var encodeOnly: Bool
    }

    static func storedProperties(of members: MemberBlockSyntax) throws -> [Field] {
        var fields: [Field] = []
        for member in members.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            let modifiers = variable.modifiers.map(\.name.text)
            if modifiers.contains("static") || modifiers.contains("class") { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            // A type written once for several names (`var a, b: Int`) applies to those before it.
            var pendingType: TypeSyntax? = nil
            var parsed: [(name: String, type: TypeSyntax?, initializer: ExprSyntax?, node: PatternBindingSyntax)] = []
            for binding in variable.bindings.reversed() {
                if let accessors = binding.accessorBlock, isComputed(accessors) { continue }
                guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
                    throw Refusal("@WireCodable needs one name per stored property", at: binding.pattern)
                }
                if let annotation = binding.typeAnnotation?.type { pendingType = annotation }
                let type = binding.typeAnnotation?.type ?? (binding.initializer == nil ? pendingType : nil)
                parsed.insert((identifier.identifier.text, type, binding.initializer?.value, binding), at: 0)
            }
            if parsed.isEmpty { continue }
            if modifiers.contains("lazy") { throw Refusal("@WireCodable does not handle lazy properties", at: variable) }
            if !variable.attributes.isEmpty {
                throw Refusal("@WireCodable does not handle property wrappers or attributes on properties", at: variable)
            }
            for property in parsed {
                guard let type = property.type ?? property.initializer.flatMap(inferredType) else {
                    throw Refusal("@WireCodable cannot tell the type of '\(property.name)': give it a type annotation", at: property.node)
                }
                let name = property.name.trimmingCharacters(in: "`")
                let wrapped = optionalWrapped(type)
                fields.append(
                    Field(
                        name: name, type: (wrapped ?? type).trimmedDescription, isOptional: wrapped != nil,
                        encodeOnly: isLet && property.initializer != nil))
            }
        }
        return fields
    }

    static func isComputed(_ block: AccessorBlockSyntax) -> Bool {
        switch block.accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains { accessor in
                let kind = accessor.accessorSpecifier.text
                return kind != "willSet" && kind != "didSet"
            }
        }
    }

    /// The type of an untyped property from its initial value, when the value says it plainly.
    static func inferredType(_ expr: ExprSyntax) -> TypeSyntax? {
        if expr.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if expr.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if expr.is(FloatLiteralExprSyntax.self) { return "Double" }
        if expr.is(StringLiteralExprSyntax.self) { return "String" }
        if let prefix = expr.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            if prefix.expression.is(IntegerLiteralExprSyntax.self) { return "Int" }
            if prefix.expression.is(FloatLiteralExprSyntax.self) { return "Double" }
        }
        if let call = expr.as(FunctionCallExprSyntax.self) {
            // `Name(...)`, `Name<A>(...)`, `Outer.Name(...)`: a type when the last name starts with a capital.
            let callee = call.calledExpression
            var last: String?
            if let reference = callee.as(DeclReferenceExprSyntax.self) {
                last = reference.baseName.text
            } else if let specialized = callee.as(GenericSpecializationExprSyntax.self) {
                last =
                    specialized.expression.as(DeclReferenceExprSyntax.self)?.baseName.text
                    ?? specialized.expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text
            } else if let member = callee.as(MemberAccessExprSyntax.self), member.base != nil {
                last = member.declName.baseName.text
            }
            if let last, let first = last.first, first.isUppercase { return TypeSyntax(stringLiteral: callee.trimmedDescription) }
        }
        return nil
    }

    /// The wrapped type of `T?`, `T!` or `Optional<T>`; nil for any other type.
    static func optionalWrapped(_ type: TypeSyntax) -> TypeSyntax? {
        if let optional = type.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return optional.wrappedType }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
            let argument = identifier.genericArgumentClause?.arguments.first
        {
            return TypeSyntax(stringLiteral: argument.argument.trimmedDescription)
        }
        if let member = type.as(MemberTypeSyntax.self), member.baseType.trimmedDescription == "Swift", member.name.text == "Optional",
            let argument = member.genericArgumentClause?.arguments.first
        {
            return TypeSyntax(stringLiteral: argument.argument.trimmedDescription)
        }
        return nil
    }

    /// Writes `fields` as one map; `value(i)` is how the generated code names field i's value.
    static func encodeMap(_ fields: [Field], value: (Int) -> String, indent: String) -> String {
        var lines = ["let __map = writer.beginMap()"]
        let optionals = fields.contains { $0.isOptional }
        if optionals { lines.append("var __present = 0") }
        for (i, field) in fields.enumerated() {
            if field.isOptional {
                lines.append(
                    "if let __value = \(value(i)) { writer.key(\"\(field.name)\"); try writer.encode(__value); __present += 1 }")
            } else {
                lines.append("writer.key(\"\(field.name)\"); try writer.encode(\(value(i)))")
            }
        }
        let required = fields.filter { !$0.isOptional }.count
        lines.append("writer.end(__map, count: \(required)\(optionals ? " + __present" : ""))")
        return lines.map { indent + $0 }.joined(separator: "\n")
    }

    /// Reads a map into locals `__f0`, `__f1`…: the fields in any order, unknown keys skipped, optional
    /// fields nil when missing; then binds `__v0`, `__v1`… (missing required fields throw).
    static func decodeMap(_ fields: [Field], aliasFrom alias: inout Int, indent: String) -> String {
        var lines: [String] = []
        var types: [Int: String] = [:]
        for (i, field) in fields.enumerated() where !field.encodeOnly {
            types[i] = "Self.__WireType\(alias)"
            alias += 1
            lines.append("var __f\(i): \(types[i] ?? "")? = nil")
        }
        lines.append("let __map = try reader.beginMap()")
        lines.append("for _ in 0..<__map.count {")
        lines.append("    let __key = try reader.readKey()")
        var first = true
        for (i, field) in fields.enumerated() where !field.encodeOnly {
            let read =
                field.isOptional
                ? "try reader.decodeIfPresent(\(types[i] ?? "").self, forKey: \"\(field.name)\")"
                : "try reader.decode(\(types[i] ?? "").self, forKey: \"\(field.name)\")"
            lines.append("    \(first ? "if" : "} else if") reader.key(__key, is: \"\(field.name)\") {")
            lines.append("        __f\(i) = \(read)")
            first = false
        }
        lines.append(first ? "    try reader.skipValue()" : "    } else {\n        try reader.skipValue()\n    }")
        lines.append("}")
        lines.append("try reader.end(__map)")
        for (i, field) in fields.enumerated() where !field.encodeOnly {
            if field.isOptional {
                lines.append("let __v\(i) = __f\(i)")
            } else {
                lines.append("guard let __v\(i) = __f\(i) else { throw reader.missing(\"\(field.name)\") }")
            }
        }
        return lines.map { indent + $0 }.joined(separator: "\n")
    }

    static func structBody(fields: [Field], access: String) -> String {
        let encode = encodeMap(fields, value: { "self.\(fields[$0].name)" }, indent: "        ")
        var alias = 0
        var decode = decodeMap(fields, aliasFrom: &alias, indent: "        ")
        for (i, field) in fields.enumerated() where !field.encodeOnly {
            decode += "\n        self.\(field.name) = __v\(i)"
        }
        return """
                \(access)func wireEncode(to writer: inout FluxCore.WireWriter) throws {
            \(encode)
                }

                \(access)init(wireReader reader: inout FluxCore.WireReader) throws {
            \(decode)
                }
            """
    }

    // MARK: Enums

    struct Case {
        var name: String
        /// Associated values: key (label, or `_0`, `_1`… when unlabeled), call label (nil: none), field.
        var values: [(label: String?, field: Field)]
    }

    static func cases(of members: MemberBlockSyntax) throws -> [Case] {
        var cases: [Case] = []
        for member in members.members {
            guard let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            for element in caseDecl.elements {
                var values: [(String?, Field)] = []
                for (i, parameter) in (element.parameterClause?.parameters ?? []).enumerated() {
                    let label = parameter.firstName.flatMap { $0.tokenKind == .wildcard ? nil : $0.text.trimmingCharacters(in: "`") }
                    let wrapped = optionalWrapped(parameter.type)
                    let field = Field(
                        name: label ?? "_\(i)", type: (wrapped ?? parameter.type).trimmedDescription, isOptional: wrapped != nil,
                        encodeOnly: false)
                    values.append((label, field))
                }
                cases.append(Case(name: element.name.text.trimmingCharacters(in: "`"), values: values))
            }
        }
        if cases.isEmpty { throw Refusal("@WireCodable needs an enum with at least one case", at: members) }
        return cases
    }

    static func enumBody(cases: [Case], access: String) -> String {
        var encode = ["switch self {"]
        for enumCase in cases {
            let bindings = enumCase.values.indices.map { "let __a\($0)" }.joined(separator: ", ")
            encode.append("case .\(enumCase.name)\(enumCase.values.isEmpty ? "" : "(\(bindings))"):")
            encode.append("    let __outer = writer.beginMap()")
            encode.append("    writer.key(\"\(enumCase.name)\")")
            encode.append(encodeMap(enumCase.values.map(\.field), value: { "__a\($0)" }, indent: "    "))
            encode.append("    writer.end(__outer, count: 1)")
        }
        encode.append("}")

        var decode = [
            "let __outer = try reader.beginMap()",
            "var __case = -1, __known = 0, __at = 0",
            "for _ in 0..<__outer.count {",
            "    let __key = try reader.readKey()",
        ]
        for (i, enumCase) in cases.enumerated() {
            decode.append("    \(i == 0 ? "if" : "} else if") reader.key(__key, is: \"\(enumCase.name)\") {")
            decode.append("        __case = \(i); __known += 1; __at = reader.offset")
        }
        decode.append("    }")
        decode.append("    try reader.skipValue()")
        decode.append("}")
        decode.append("try reader.end(__outer)")
        decode.append("guard __known == 1 else { throw reader.caseCount(Self.self) }")
        decode.append("let __end = reader.offset")
        decode.append("reader.offset = __at")
        decode.append("switch __case {")
        var alias = 0
        for (i, enumCase) in cases.enumerated() {
            decode.append("case \(i):")
            if enumCase.values.isEmpty {
                decode.append("    try reader.end(try reader.beginMap())")
                decode.append("    self = .\(enumCase.name)")
            } else {
                decode.append("    do {")
                decode.append(decodeMap(enumCase.values.map(\.field), aliasFrom: &alias, indent: "        "))
                let arguments = enumCase.values.enumerated().map { j, value in (value.label.map { "\($0): " } ?? "") + "__v\(j)" }
                decode.append("        self = .\(enumCase.name)(\(arguments.joined(separator: ", ")))")
                decode.append("    }")
            }
        }
        decode.append("default:")
        decode.append("    throw reader.caseCount(Self.self)")
        decode.append("}")
        decode.append("reader.offset = __end")

        return """
                \(access)func wireEncode(to writer: inout FluxCore.WireWriter) throws {
            \(encode.map { "        " + $0 }.joined(separator: "\n"))
                }

                \(access)init(wireReader reader: inout FluxCore.WireReader) throws {
            \(decode.map { "        " + $0 }.joined(separator: "\n"))
                }
            """
    }

    static let rawTypes: Set<String> = [
        "String", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float",
    ]

    /// The raw type of `enum E: String` (and the other raw types `Codable` writes as a single value).
    static func rawType(of decl: EnumDeclSyntax) -> String? {
        guard let first = decl.inheritanceClause?.inheritedTypes.first?.type.trimmedDescription else { return nil }
        let name = first.hasPrefix("Swift.") ? String(first.dropFirst(6)) : first
        return rawTypes.contains(name) ? name : nil
    }

    /// A raw-value enum is its raw value (`RawRepresentable`'s `Codable`).
    static func rawEnumBody(raw: String, access: String) -> String {
        """
            \(access)func wireEncode(to writer: inout FluxCore.WireWriter) throws {
                try writer.encode(self.rawValue)
            }

            \(access)init(wireReader reader: inout FluxCore.WireReader) throws {
                let __raw = try reader.decode(Swift.\(raw).self)
                guard let __value = Self(rawValue: __raw) else { throw reader.badRawValue(Self.self, __raw) }
                self = __value
            }
        """
    }

    static func accessLevel(of decl: some DeclGroupSyntax) -> String {
        for modifier in decl.modifiers {
            switch modifier.name.text {
            case "public", "open": return "public "
            case "package": return "package "
            default: continue
            }
        }
        return ""
    }
}

/// An error at a node: what the macro cannot handle, and why.
struct Refusal: Error, DiagnosticMessage, CustomStringConvertible {
    let message: String
    let node: Syntax
    init(_ message: String, at node: some SyntaxProtocol) {
        self.message = message
        self.node = Syntax(node)
    }
    var diagnosticID: MessageID { MessageID(domain: "FluxMacros", id: "WireCodable") }
    var severity: DiagnosticSeverity { .error }
    var description: String { message }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var result = Substring(self)
        while let first = result.first, set.contains(first) { result = result.dropFirst() }
        while let last = result.last, set.contains(last) { result = result.dropLast() }
        return String(result)
    }
}
