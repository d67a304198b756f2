import ArgumentParser
import FluxCore
import Foundation
import Synchronization
import ViewNode

/// The whole zflux command line for a binary's own apps: `cluster up`, the node commands the supervisor
/// runs, `dispatch`, `state`, `view`, `tail`, `top`, `devtools`, `status`, `quarantine`, `failover`, `journal`,
/// `apps`, `bench`, `simulate`, `keygen`, `new` and `demo`. A team's package calls it from its own `@main`:
///
/// ```swift
/// import PollApp
/// import ZFluxCLI
///
/// @main struct Poll {
///     static func main() async {
///         await ZFluxCLI.main(
///             apps: { context in [PollApp.app(environment: context.mock ? .mock : .live)] },
///             screens: [PollScreen.self])
///     }
/// }
/// ```
///
/// The supervisor re-executes that same binary for each node, so the nodes host the same apps. Apps a
/// binary does not host can still be addressed by its client commands: states and actions in the
/// binary codec describe themselves, and the dispatcher judges every payload.
public enum ZFluxCLI {
    /// Parses the process's arguments and runs the command they name, then exits.
    ///
    /// - Parameters:
    ///   - apps: the apps this binary hosts, built for a context (mock or live environments, a data
    ///     directory); called once per process that needs them.
    ///   - screens: the terminal screens of those apps; an app without one gets the generic state tree.
    ///   - codecSamples: values `bench codec` times the wire codecs on (states and actions of your apps).
    public static func main(
        apps: @escaping @Sendable (AppContext) -> [any AnyApp],
        screens: [any AppScreen.Type] = [],
        codecSamples: [CodecSample] = []
    ) async {
        await main(Host(apps: apps, screens: ScreenRegistry(screens), codecSamples: codecSamples))
    }

    /// Runs the command line for `host`, with `arguments` instead of the process's own when given
    /// (a wrapper that rewrites them), then exits: it never returns.
    public static func main(_ host: Host, arguments: [String]? = nil) async {
        // A peer that resets a TCP connection (a metrics probe, a terminal closed under `zflux tail |
        // head`) must turn the next write into an EPIPE error for the code that wrote, never into a
        // SIGPIPE that kills a node.
        signal(SIGPIPE, SIG_IGN)
        Host.install(host)
        var command: ParsableCommand
        do {
            command = try RootCommand.parseAsRoot(arguments)
        } catch {
            RootCommand.exit(withError: error)  // usage and help, as ArgumentParser words them
        }
        do {
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ExitCode {
            exit(error.rawValue)
        } catch let error where error is ValidationError || error is CleanExit || String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") {
            // Usage errors and help (`zflux help X` asks for help while it runs) are ArgumentParser's to word.
            RootCommand.exit(withError: error)
        } catch {
            // Every other failure reads like the command's other messages: "zflux: what went wrong".
            printError(String(describing: error))
            exit(1)
        }
        exit(0)
    }

    /// What one binary hosts: its apps and their screens, and what a few commands use by default.
    public struct Host: Sendable {
        /// The apps, built for a context.
        public var makeApps: @Sendable (AppContext) -> [any AnyApp]
        /// The apps' screens.
        public var screens: ScreenRegistry
        /// What `bench codec` measures.
        public var codecSamples: [CodecSample]
        /// The cluster config (TOML) `cluster up` and `demo` use without `--config`; nil: a dispatcher
        /// and one store per app, over ipc.
        public var defaultConfig: String?
        /// What `demo` dispatches, over and over, while it shows every store's state (nil: nothing; the
        /// demo then only shows the states).
        public var demoStory: [DemoStep]
        /// What `simulate` dispatches to the apps; nil: every app's own examples (``ActionMix/examples(of:)``).
        public var simulationMix: ActionMix?
        /// The commit the stock `zflux` was built from, for `--version`: set by its executable, which a
        /// build-tool plugin gives it; nil in a team's binary, whose `--version` names the zflux version.
        package var buildCommit: String? = nil

        public init(
            apps: @escaping @Sendable (AppContext) -> [any AnyApp], screens: ScreenRegistry = ScreenRegistry(), codecSamples: [CodecSample] = [],
            defaultConfig: String? = nil, demoStory: [DemoStep] = [], simulationMix: ActionMix? = nil
        ) {
            self.simulationMix = simulationMix
            self.makeApps = apps
            self.screens = screens
            self.codecSamples = codecSamples
            self.defaultConfig = defaultConfig
            self.demoStory = demoStory
        }

        /// The binary's host, installed once by ``ZFluxCLI/main(_:arguments:)`` before any command is
        /// parsed. It is what the binary *is* (like its arguments), not configuration that changes, and
        /// commands reach it from their own threads (a view's history loader, tail's socket thread), where
        /// a task-local value would not follow.
        static var current: Host { installed.withLock { $0 } ?? Host(apps: { _ in [] }) }
        private static let installed = Mutex<Host?>(nil)
        static func install(_ host: Host) { installed.withLock { $0 = host } }
    }
}
