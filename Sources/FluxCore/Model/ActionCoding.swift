import Foundation

/// How actions travel: the header carries the case name, the payload carries the whole action encoded
/// by the wire codec. In JSON, `Todo.Action.addTodo(title: "Milk")` is
/// `{"addTodo":{"title":"Milk"}}` (Swift's synthesized `Codable` for enums).
public enum ActionCoding {
    /// The enum case name of an action value.
    public static func caseName<Action>(of action: Action) -> String {
        let mirror = Mirror(reflecting: action)
        if mirror.displayStyle == .enum, let label = mirror.children.first?.label { return label }
        // A case without associated values prints as its bare name.
        return String(describing: action)
    }

    /// The JSON form of an action from its case name and its arguments as a JSON object
    /// (`zflux dispatch todo addTodo '{"title":"Milk"}'`). Empty arguments mean `{}`.
    public static func json(type: String, arguments: [UInt8]) throws(ActionError) -> [UInt8] {
        guard Header.isValidActionType(Array(type.utf8)) else {
            throw ActionError("'\(type)' is not an action name (letters, digits and '_')")
        }
        let args = arguments.isEmpty ? Array("{}".utf8) : arguments
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(args))
        } catch {
            throw ActionError("the arguments of '\(type)' are not JSON: \((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error)")
        }
        guard object is NSDictionary else {
            throw ActionError("the arguments of '\(type)' must be a JSON object of its fields, e.g. '{\"field\":1}'")
        }
        return Array("{\"\(type)\":".utf8) + args + Array("}".utf8)
    }
}

/// An action that is not acceptable: unknown, undecodable or invalid. `reason` is what a NACK carries.
public struct ActionError: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
