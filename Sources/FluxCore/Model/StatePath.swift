import Foundation

/// A part of a state, for views that follow only that part (`zflux view todo --select todos`):
/// ReSwift's `select` plus `skipRepeats`, across processes.
///
/// Syntax: field names separated by dots, array elements by index in brackets, on the state's JSON
/// form: `todos`, `todos[0]`, `todos[0].title`, `favorites[2].prime`. A field name is letters,
/// digits and `_`. A path that leads nowhere selects `null`.
///
/// On the wire a selection has a topic of its own, `?STORE/PATH`: a store sees views subscribe to it
/// (its publisher is an XPUB) and publishes the selected value there only when it changed, so a view
/// of a selection is woken only when its part changes.
public struct StatePath: Hashable, Sendable, CustomStringConvertible {
    public enum Step: Hashable, Sendable {
        case field(String)
        case index(Int)
    }

    public let steps: [Step]

    public init(steps: [Step]) { self.steps = steps }

    /// Parses a path; throws with the position and what was expected.
    public init(parsing text: String) throws(ActionError) {
        var steps: [Step] = []
        let characters = Array(text)
        var i = 0
        func isName(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || c == "_") }
        guard !characters.isEmpty else { throw ActionError("an empty path: name a field, like `todos` or `todos[0].title`") }
        while i < characters.count {
            if characters[i] == "[" {
                var j = i + 1
                while j < characters.count && characters[j].isASCII && characters[j].isNumber { j += 1 }
                guard j > i + 1, j < characters.count, characters[j] == "]", let index = Int(String(characters[(i + 1)..<j])) else {
                    throw ActionError("path '\(text)': expected an index like [0] at character \(i + 1)")
                }
                steps.append(.index(index))
                i = j + 1
            } else {
                if !steps.isEmpty {
                    guard characters[i] == "." else { throw ActionError("path '\(text)': expected '.' or '[' at character \(i + 1)") }
                    i += 1
                }
                var j = i
                while j < characters.count && isName(characters[j]) { j += 1 }
                guard j > i else { throw ActionError("path '\(text)': expected a field name at character \(i + 1)") }
                steps.append(.field(String(characters[i..<j])))
                i = j
            }
        }
        self.steps = steps
    }

    public var description: String {
        var text = ""
        for step in steps {
            switch step {
            case .field(let name): text += (text.isEmpty ? "" : ".") + name
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// The selected part of `value` (null when the path leads nowhere).
    public func select(in value: JSONValue) -> JSONValue {
        var current = value
        for step in steps {
            switch (step, current) {
            case (.field(let name), .object(let fields)): current = fields[name] ?? .null
            case (.index(let index), .array(let items)) where items.indices.contains(index): current = items[index]
            default: return .null
            }
        }
        return current
    }

    /// The topic a store publishes this selection of its state on.
    public func topic(store: String) -> String { StatePath.topicPrefix + store + "/" + description }

    /// Selection topics start with this, which no store name does: a view of a whole store (topic
    /// `STORE`) never receives them.
    public static let topicPrefix = "?"

    /// The path of a selection topic of `store`, nil for any other topic.
    public static func fromTopic(_ topic: String, store: String) -> StatePath? {
        let prefix = topicPrefix + store + "/"
        guard topic.hasPrefix(prefix) else { return nil }
        return try? StatePath(parsing: String(topic.dropFirst(prefix.count)))
    }
}
