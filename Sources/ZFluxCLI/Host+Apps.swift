import Cluster
import FluxCore

/// What the commands ask of the binary's host: its apps, by name, for a node, a client or time travel.
extension ZFluxCLI.Host {
    /// The hosted apps with live environments: what the dispatcher checks actions with.
    var apps: [any AnyApp] { makeApps(.live) }

    /// The hosted app named `name`, built for `context`.
    func app(named name: String, _ context: AppContext = .live) -> (any AnyApp)? {
        makeApps(context).first { $0.name == name }
    }

    var appNames: [String] { apps.map(\.name) }

    /// The cluster `cluster up` and `demo` start without `--config`.
    var defaultConfigText: String { defaultConfig ?? ClusterConfig.defaultText(apps: appNames) }

    /// A hosted app built for `context`, for what needs its types (a node, a reducer replayed by time
    /// travel); the one error for an app this binary does not host.
    func require(_ name: String, _ context: AppContext = .live) throws -> any AnyApp {
        guard let app = app(named: name, context) else {
            let known = appNames.isEmpty ? "none" : appNames.joined(separator: ", ")
            throw CLIError("\(RootCommand.binaryName) does not host app '\(name)' (it hosts: \(known))")
        }
        return app
    }

    /// The app to talk to a store of `name` with: the hosted one, or one known by name only, whose
    /// states and actions are read from the self-describing binary codec and whose payloads the
    /// dispatcher judges.
    func client(_ name: String) -> any AnyApp {
        app(named: name) ?? UnhostedApp(name: name)
    }
}
