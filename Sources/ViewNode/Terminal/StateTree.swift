import FluxCore
import Foundation

/// Any store's state as a collapsible tree, with the values that changed in the last update
/// highlighted: a viewer for stores that have no screen of their own.
public struct StateTree: Sendable {
    /// Paths (like `todos.1.title`) of collapsed objects and arrays.
    public var collapsed: Set<String> = []
    /// The selected row, for collapsing and expanding.
    public var selected = 0

    public init() {}

    struct Row {
        var path: String
        var depth: Int
        var label: String
        var isContainer: Bool
    }

    /// The tree of `json` as lines; rows whose value differs from `previous` are highlighted.
    public func render(_ json: Data, previous: Data?) -> Frame {
        guard let value = JSONValue.parse(json) else { return [StyledLine("(state is not JSON)", .bad)] }
        let old = previous.flatMap(JSONValue.parse)
        let changed = old.map { StateTree.changedPaths($0, value, path: "") } ?? []
        return rows(value).enumerated().map { index, row in
            let marker = row.isContainer ? (collapsed.contains(row.path) ? "▸ " : "▾ ") : "  "
            let text = String(repeating: "  ", count: row.depth) + marker + row.label
            if index == selected { return StyledLine(text, .inverse) }
            return StyledLine(text, changed.contains(row.path) ? .highlight : .plain)
        }
    }

    /// How many rows the tree has now (for moving the selection).
    public func rowCount(_ json: Data) -> Int { JSONValue.parse(json).map { rows($0).count } ?? 0 }

    /// Collapses or expands the selected object or array.
    public mutating func toggle(_ json: Data) {
        guard let value = JSONValue.parse(json) else { return }
        let all = rows(value)
        guard all.indices.contains(selected), all[selected].isContainer else { return }
        let path = all[selected].path
        if collapsed.contains(path) { collapsed.remove(path) } else { collapsed.insert(path) }
    }

    func rows(_ root: JSONValue) -> [Row] {
        var out: [Row] = []
        func walk(_ value: JSONValue, path: String, depth: Int, label: String) {
            func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
            switch value {
            case .object(let object):
                out.append(Row(path: path, depth: depth, label: "\(label){\(object.count)}", isContainer: true))
                guard !collapsed.contains(path) else { return }
                for (key, field) in object.sorted(by: { $0.key < $1.key }) { walk(field, path: child(key), depth: depth + 1, label: "\(key): ") }
            case .array(let array):
                out.append(Row(path: path, depth: depth, label: "\(label)[\(array.count)]", isContainer: true))
                guard !collapsed.contains(path) else { return }
                for (index, element) in array.enumerated() { walk(element, path: child("\(index)"), depth: depth + 1, label: "\(index): ") }
            default:
                out.append(Row(path: path, depth: depth, label: label + value.leafText, isContainer: false))
            }
        }
        walk(root, path: "", depth: 0, label: "")
        return out
    }

    /// Every path whose value differs between `old` and `new`, with the containers above it.
    static func changedPaths(_ old: JSONValue?, _ new: JSONValue, path: String) -> Set<String> {
        func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
        var result = Set<String>()
        switch (old, new) {
        case (.object(let before)?, .object(let after)):
            for (key, value) in after { result.formUnion(changedPaths(before[key], value, path: child(key))) }
            if before.count != after.count { result.insert(path) }
        case (.array(let before)?, .array(let after)):
            for (index, value) in after.enumerated() {
                result.formUnion(changedPaths(index < before.count ? before[index] : nil, value, path: child("\(index)")))
            }
            if before.count != after.count { result.insert(path) }
        default:
            if old != new { result.insert(path) }
        }
        if !result.isEmpty { result.insert(path) }
        return result
    }
}
