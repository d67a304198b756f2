/// One of an app's actions, given by example: what `zflux apps` lists, generated from the app itself.
///
/// An app lists one example per case of its `Action`, including the cases only its effects send. The
/// listing takes the case name and the payload fields (names and types) from the example, so it cannot
/// drift from the code: a renamed field shows renamed.
public struct ActionExample<Action: Sendable>: Sendable {
    public let action: Action
    public let summary: String
    public let origin: ActionDescription.Origin

    /// An action people (or views, or scripts) dispatch.
    public static func user(_ action: Action, _ summary: String) -> ActionExample {
        ActionExample(action: action, summary: summary, origin: .user)
    }

    /// An action only the app's effects send (an answer to a request), though anyone may dispatch it.
    public static func effect(_ action: Action, _ summary: String) -> ActionExample {
        ActionExample(action: action, summary: summary, origin: .effect)
    }
}

/// An action as `zflux apps` shows it.
public struct ActionDescription: Codable, Equatable, Sendable {
    public enum Origin: String, Codable, Sendable { case user, effect }

    public struct Field: Codable, Equatable, Sendable {
        public var name: String
        public var type: String
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    /// The case name: the action type on the wire.
    public var type: String
    public var fields: [Field]
    public var summary: String
    public var origin: Origin
    /// The example's JSON payload, ready for `zflux dispatch APP TYPE 'ARGS'`.
    public var example: String

    public init<Action: Encodable & Sendable>(_ example: ActionExample<Action>) {
        type = ActionCoding.caseName(of: example.action)
        summary = example.summary
        origin = example.origin
        fields = Self.fields(of: example.action)
        let json = (try? JSONPayloadCodec().encode(example.action)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        // `{"case":{...}}` → `{...}`: the arguments as `zflux dispatch` takes them.
        let prefix = "{\"\(type)\":"
        self.example = json.hasPrefix(prefix) && json.hasSuffix("}") ? String(json.dropFirst(prefix.count).dropLast()) : "{}"
    }

    /// The associated values' labels and types, in declaration order.
    static func fields(of action: Any) -> [Field] {
        guard let payload = Mirror(reflecting: action).children.first?.value else { return [] }
        let mirror = Mirror(reflecting: payload)
        if mirror.displayStyle == .tuple {
            return mirror.children.enumerated().map { index, child in
                Field(name: child.label.map { $0.hasPrefix(".") ? "_\(index)" : $0 } ?? "_\(index)", type: typeName(Swift.type(of: child.value)))
            }
        }
        return [Field(name: "_0", type: typeName(Swift.type(of: payload)))]
    }

    /// `Optional<Array<Item>>` reads `[Item]?`.
    static func typeName(_ type: Any.Type) -> String {
        var name = String(describing: type)
        while let range = name.range(of: "Optional<") {
            guard let close = matchingClose(in: name, from: range.upperBound) else { break }
            name = String(name[..<range.lowerBound]) + name[range.upperBound..<close] + "?" + name[name.index(after: close)...]
        }
        while let range = name.range(of: "Array<") {
            guard let close = matchingClose(in: name, from: range.upperBound) else { break }
            name = String(name[..<range.lowerBound]) + "[" + name[range.upperBound..<close] + "]" + name[name.index(after: close)...]
        }
        return name
    }

    private static func matchingClose(in text: String, from start: String.Index) -> String.Index? {
        var depth = 1
        var index = start
        while index < text.endIndex {
            switch text[index] {
            case "<": depth += 1
            case ">":
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
            index = text.index(after: index)
        }
        return nil
    }
}

/// An app as `zflux apps` shows it.
public struct AppDescription: Codable, Equatable, Sendable {
    public var name: String
    public var summary: String
    /// The apps whose state this one reads (`waitFor`).
    public var reads: [String]
    public var actions: [ActionDescription]

    public init(name: String, summary: String, reads: [String], actions: [ActionDescription]) {
        self.name = name
        self.summary = summary
        self.reads = reads
        self.actions = actions
    }
}
