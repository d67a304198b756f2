import ArgumentParser
import Cluster
import FluxCore
import Foundation
import NodeSupport
import ViewNode

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start a local cluster, follow its stores in a view, and drive it with a stream of actions.",
        discussion:
            "The dispatcher and the stores of the default cluster (--config to choose; the stock zflux: one store per example app) run as separate processes over ipc, and the binary's demo story is dispatched over and over. Ctrl-C stops everything."
    )

    @OptionGroup var runDir: RunDirOptions
    @Option(help: "Milliseconds between the driver's actions.") var intervalMs: Int = 700
    @Option(help: "Stop by itself after this many seconds (default: run until Ctrl-C).") var duration: Double?

    func run() async throws {
        LogSetup.bootstrap()
        let host = ZFluxCLI.Host.current
        let topology = try ClusterConfig.load(path: runDir.configPath, defaultText: host.defaultConfigText)
            .topology(runDirectory: runDir.path, transportOverride: nil, basePortOverride: nil, apps: host.apps)
        let supervisor = Supervisor(topology: topology, runDirectory: runDir.path, logLevel: "notice")
        let signals = TerminationSignals { supervisor.forward(signal: $0) }
        defer { withExtendedLifetime(signals) {} }
        let interval = intervalMs, duration = duration
        let status = try await supervisor.supervise(report: printError) {
            emitLine(
                "\(RootCommand.binaryName) demo: dispatcher and stores running as processes "
                    + supervisor.pids.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
                    + "; Ctrl-C stops everything\n")
            let views = try topology.stores.map { endpoints in
                try ViewNode(
                    configuration: .init(topology: topology, store: endpoints, app: host.app(named: endpoints.app)),
                    logger: .init(label: "zflux.view"),
                    onUpdate: UpdatePrinter(app: try host.require(endpoints.app), json: false).print)
            }
            for view in views { Task { try await view.run() } }
            let driver = Thread {
                runDemoDriver(host: host, intake: topology.dispatcher.intake, intervalMs: interval, stopping: { supervisor.isStopping })
            }
            driver.start()
            if let duration {
                Task {
                    try await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                    supervisor.forward(signal: SIGTERM)
                }
            }
        }
        if status != 0 { throw ExitCode(status) }
    }
}

/// Dispatches the host's story, over and over, until the cluster stops.
func runDemoDriver(host: ZFluxCLI.Host, intake: String, intervalMs: Int, stopping: @Sendable () -> Bool) {
    let story = host.demoStory.compactMap { step in host.app(named: step.app).map { ($0, step.type, step.arguments) } }
    guard !story.isEmpty, let connection = try? DispatchConnection(intake: intake) else { return }
    defer { connection.close() }
    connection.timeout = .seconds(2)
    var step = 0
    while !stopping() {
        let (app, type, args) = story[step % story.count]
        step += 1
        if let payload = try? app.wirePayload(type: type, argumentsJSON: Array(args.utf8)),
            case .acknowledged(let seq) = (try? connection.dispatch(app: app.name, actionType: type, payload: payload)) ?? .timedOut
        {
            emitLine("→ dispatched \(app.name).\(type) \(args.isEmpty ? "" : args + " ")as seq \(seq)")
        }
        let deadline = ContinuousClock.now + .milliseconds(intervalMs)
        while !stopping() && ContinuousClock.now < deadline { usleep(20_000) }
    }
}
