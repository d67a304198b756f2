import ArgumentParser
import Cluster
import Examples
import FluxCore
import Foundation
import NodeSupport
import ViewNode

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start a local cluster, follow its stores in a view, and drive it with a stream of actions.",
        discussion:
            "The dispatcher and one store per example app (todo, star, filter, login, counter, stats, primes, food) run as separate processes over ipc. Ctrl-C stops everything."
    )

    @OptionGroup var runDir: RunDirOptions
    @Option(help: "Milliseconds between the driver's actions.") var intervalMs: Int = 700
    @Option(help: "Stop by itself after this many seconds (default: run until Ctrl-C).") var duration: Double?

    func run() async throws {
        LogSetup.bootstrap()
        let topology = try ClusterConfig.load(path: nil)
            .topology(runDirectory: runDir.path, transportOverride: nil, basePortOverride: nil)
        let supervisor = Supervisor(topology: topology, runDirectory: runDir.path, logLevel: "notice")
        let signals = TerminationSignals { supervisor.forward(signal: $0) }
        defer { withExtendedLifetime(signals) {} }
        let interval = intervalMs, duration = duration
        let status = try await supervisor.supervise(report: printError) {
            emitLine(
                "zflux demo: dispatcher and stores running as processes " + supervisor.pids.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
                    + "; Ctrl-C stops everything\n")
            let views = try topology.stores.map { endpoints in
                try ViewNode(
                    configuration: .init(topology: topology, store: endpoints, app: Catalog.app(named: endpoints.app)),
                    logger: .init(label: "zflux.view"),
                    onUpdate: UpdatePrinter(app: try Catalog.require(endpoints.app), json: false).print)
            }
            for view in views { Task { try await view.run() } }
            let driver = Thread {
                runDemoDriver(intake: topology.dispatcher.intake, intervalMs: interval, stopping: { supervisor.isStopping })
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

/// Dispatches a small story, over and over, until the cluster stops.
func runDemoDriver(intake: String, intervalMs: Int, stopping: @Sendable () -> Bool) {
    guard let connection = try? DispatchConnection(intake: intake) else { return }
    defer { connection.close() }
    connection.timeout = .seconds(2)
    func app(_ name: String) -> any AnyApp { Catalog.app(named: name)! }
    let story: [(any AnyApp, String, String)] = [
        (app("todo"), "loadTapped", ""),
        (app("primes"), "loadFavoritesTapped", ""),
        (app("star"), "starTapped", ""),
        (app("todo"), "addTodo", #"{"title":"Buy milk"}"#),
        (app("login"), "usernameChanged", #"{"username":"ada@example.com"}"#),
        (app("stats"), "goalSet", #"{"done":2}"#),
        (app("login"), "passwordChanged", #"{"password":"analytical"}"#),
        (app("filter"), "groupEntered", #"{"group":"issues"}"#),
        (app("filter"), "filterToggled", #"{"filter":"issueOpen"}"#),
        (app("login"), "loginTapped", ""),
        (app("primes"), "incrementTapped", ""),
        (app("primes"), "incrementTapped", ""),
        (app("primes"), "nthPrimeTapped", ""),
        (app("todo"), "toggleTodo", #"{"index":0}"#),
        (app("counter"), "addTapped", #"{"amount":10}"#),
        (app("primes"), "favoriteToggled", ""),
        (app("food"), "refreshTapped", ""),
        (app("primes"), "alertDismissed", ""),
        (app("star"), "starTapped", ""),
        (app("todo"), "toggleTodo", #"{"index":2}"#),
        (app("filter"), "resetAllTapped", ""),
        (app("filter"), "groupLeft", ""),
        (app("todo"), "clearCompleted", ""),
        (app("login"), "logoutTapped", ""),
        (app("counter"), "resetTapped", ""),
        (app("primes"), "decrementTapped", ""),
        (app("primes"), "decrementTapped", ""),
        (app("todo"), "removeTodo", #"{"index":0}"#),
    ]
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
