import FluxCore
import Foundation

extension JSONValue {
    /// How a leaf is shown.
    var leafText: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .object, .array: ""
        }
    }
}
