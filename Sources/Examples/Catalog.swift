import FluxCore

/// The apps the `zflux` binary can host, by name.
public enum Catalog {
    public static let apps: [any AnyApp] = [
        Todo.app(), Star.app(), AnnotationFilter.app(), Login.app(), Counter.app(), TodoStats.app(), Ledger.app(),
    ]

    public static func app(named name: String) -> (any AnyApp)? {
        apps.first { $0.name == name }
    }

    public static var names: [String] { apps.map(\.name) }
}
