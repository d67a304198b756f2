import ArgumentParser
import Devtools
import FluxCore
import Foundation
import NodeSupport
import ViewNode

struct ViewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Follow stores' state live: a snapshot first, then every update.",
        discussion: """
            On a terminal the view is full-screen: each example app has its own screen and keys that \
            dispatch its actions (shown at the bottom); any other store is shown as a collapsible tree with \
            the values that changed highlighted. A status line shows each dispatch's outcome, and a status \
            bar the version, time since the last update, the end-to-end latency of your own dispatches \
            and the connection state. Ctrl-N switches between stores, F1 (or ? outside text fields) lists \
            the screen's keys, Ctrl-C quits. NO_COLOR turns colours off; the screen follows resizes.

            Time travel: --history (or Ctrl-T) puts the store's timeline beside its screen, rebuilt from \
            the cluster's journal on this host: ←/→ step one action, PgUp/PgDn ten, g jumps to a seq, \
            / filters by app or type; each step shows the action, the state diff it caused and the screen \
            as of that step. L goes back to live; the status bar keeps showing the live version meanwhile.

            When stdout is not a terminal (or with --json), each update is one JSON line:
            {"store":S,"version":N,"connection":"live","state":{...}}.
            """)

    @Argument(help: "The stores to follow.") var stores: [String]
    @Flag(help: "Print JSON lines even on a terminal.") var json = false
    @Flag(help: "Open on the store's history (time travel) instead of its live screen.") var history = false
    @Option(
        help: ArgumentHelp(
            "Follow only this part of the state, woken only when it changes: field names and [index] on the state's JSON, like todos, todos[0].title (one store).",
            valueName: "path"))
    var select: String?
    @Option(help: ArgumentHelp("How many of the journal's newest actions the history covers.", valueName: "n")) var historyWindow: UInt64 = 2000
    @OptionGroup var node: NodeOptions

    func run() async throws {
        LogSetup.bootstrap()
        let (topology, security) = try node.runDir.cluster()
        var path: StatePath? = nil
        if let select {
            guard stores.count == 1 else { throw CLIError("--select follows a part of one store's state: name one store") }
            do { path = try StatePath(parsing: select) } catch { throw CLIError("--select: \(error.reason)") }
            if history { throw CLIError("--select and --history do not go together: the history shows the whole state") }
        }
        if history {
            // A past state is rebuilt by its app's reducer: refused here, in full and with a failing exit,
            // not on the screen's status line of a view that goes on live.
            let host = ZFluxCLI.Host.current
            for name in stores {
                let app = try topology.requireStore(named: name).app
                guard host.app(named: app) != nil else {
                    throw CLIError(
                        "--history of '\(name)' rebuilds its past states with app '\(app)''s reducer, and \(RootCommand.binaryName) "
                            + "does not host that app: use the binary that runs the cluster (without --history, this binary shows the live state as a tree)"
                    )
                }
            }
        }
        if !json && Terminal.isInteractive {
            try await runInteractive(topology, security, select: path)
            return
        }
        if history { throw CLIError("--history needs a terminal (for a state at a seq, use `\(RootCommand.binaryName) state STORE --at SEQ`)") }
        let plain = json || isatty(STDOUT_FILENO) == 0
        StandardOutput.endWhenReaderGoes()
        let host = ZFluxCLI.Host.current
        var views: [ViewNode] = []
        for name in stores {
            let endpoints = try topology.requireStore(named: name)
            let printer = UpdatePrinter(app: host.client(endpoints.app), json: plain, select: path)
            var configuration = ViewNode.Configuration(topology: topology, store: endpoints, app: host.app(named: endpoints.app))
            configuration.security = security
            configuration.select = path
            views.append(try ViewNode(configuration: configuration, logger: node.logger("zflux.view"), onUpdate: printer.print))
        }
        let all = views
        try await runNode(stop: { all.forEach { $0.stop() } }, supervisorPid: node.supervisorPid) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for view in all { group.addTask { try await view.run() } }
                try await group.waitForAll()
            }
        }
    }
}

extension ViewCommand {
    func runInteractive(_ topology: Topology, _ security: Security.Settings?, select: StatePath?) async throws {
        let host = ZFluxCLI.Host.current
        let stores = try self.stores.map { name -> InteractiveView.Store in
            let endpoints = try topology.requireStore(named: name)
            var configuration = ViewNode.Configuration(topology: topology, store: endpoints, app: host.app(named: endpoints.app))
            configuration.security = security
            configuration.select = select
            let (runDir, window) = (node.runDir, historyWindow)
            // A selection is shown as a tree: the app's screen needs the whole state.
            return InteractiveView.Store(
                name: name, app: endpoints.app, configuration: configuration,
                screen: select == nil ? host.screens.screen(forApp: endpoints.app) : StateTreeScreen(),
                history: {
                    let machine = try TimeMachine(runDir: runDir) { member in
                        // Short: it is shown on the status line, cut at the pane's width.
                        "a pair: run `\(RootCommand.binaryName) state \(name) --at SEQ --journal \(member)`"
                    }
                    return try HistoryBrowser.load(
                        rewind: machine.rewind, store: try machine.store(name), screen: host.screens.screen(forApp: endpoints.app), window: window)
                })
        }
        var logger = node.logger("zflux.view")
        logger.logLevel = .critical  // the screen is the output; log lines would tear it
        let view = try InteractiveView(
            stores: stores, intake: topology.dispatcher.intake, security: security, startInHistory: history, logger: logger)
        let signals = TerminationSignals { _ in view.stop() }
        let watch = ParentWatch(supervisorPid: node.supervisorPid, onGone: view.stop)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            Thread { continuation.resume(with: Result { try view.run() }) }.start()
        }
        withExtendedLifetime((signals, watch)) {}
    }
}
