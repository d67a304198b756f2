import FluxCore
import Foundation

extension Workload {
    /// The state its actions refer to (`${from APP PATH}`): each (app, path) once.
    public var references: [(app: String, path: String)] {
        var found: [(app: String, path: String)] = []
        for entry in mix {
            for reference in entry.payload.references where !found.contains(where: { $0 == reference }) { found.append(reference) }
        }
        return found
    }

    /// The workload with each `${from APP PATH}` replaced by the values PATH selects in `state(APP)`, the
    /// app's state as JSON once the prepare steps are applied. A path that selects nothing, or a list or
    /// an object rather than a single value, is an error that names the action and the path.
    public func resolvingReferences(state: (String) throws -> JSONValue) throws -> Workload {
        var states: [String: JSONValue] = [:]
        var resolved = self
        for index in resolved.mix.indices {
            let entry = resolved.mix[index]
            resolved.mix[index].payload = try entry.payload.resolvingReferences { app, path in
                if states[app] == nil { states[app] = try state(app) }
                let selected = Workload.select(path, in: states[app] ?? .null)
                let place = "\(entry.location ?? name): ${from \(app) \(path)}"
                guard !selected.isEmpty else {
                    throw WorkloadError(source: place, line: nil, "selects nothing in \(app)'s state after the [[prepare]] steps")
                }
                return try selected.map { value in
                    switch value {
                    case .array, .object:
                        throw WorkloadError(source: place, line: nil, "selects a list or an object, not one value: add .* or a field to the path")
                    default: return String(decoding: value.jsonBytes, as: UTF8.self)
                    }
                }
            }
        }
        precondition(resolved.references.isEmpty, "every reference is resolved")
        return resolved
    }

    /// What `path` selects in `value`: its parts split at `.`, each a field of an object, an index of a
    /// list, or `*`, every item of a list or every value of an object (in key order).
    static func select(_ path: String, in value: JSONValue) -> [JSONValue] {
        var current = [value]
        for part in path.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            current = current.flatMap { node -> [JSONValue] in
                switch (node, part) {
                case (.array(let items), "*"): return items
                case (.object(let fields), "*"): return fields.keys.sorted().compactMap { fields[$0] }
                case (.array(let items), _): return Int(part).flatMap { items.indices.contains($0) ? [items[$0]] : nil } ?? []
                case (.object(let fields), _): return fields[part].map { [$0] } ?? []
                default: return []
                }
            }
        }
        return current
    }
}
