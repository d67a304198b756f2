import ArgumentParser
import Cluster
import Dispatch
import FluxCore
import FluxCores
import Foundation
import Logging
import NodeSupport
import ZeroMQ

/// A failure the user can act on; printed as `zflux: message` with exit status 1.
struct CLIError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// `--run-dir`, shared by every command.
struct RunDirOptions: ParsableArguments {
    @Option(
        name: .customLong("run-dir"),
        help: ArgumentHelp(
            "The cluster's run directory: its ipc socket files, cluster.json, pids and logs. Default: $ZFLUX_RUN_DIR or ./.zflux",
            valueName: "dir"))
    var runDir: String?

    @Option(
        help: ArgumentHelp(
            "A cluster config (TOML) to take the endpoints from, instead of RUN_DIR/cluster.json: how nodes and commands on other hosts find the cluster. Default: $ZFLUX_CONFIG",
            valueName: "file"))
    var config: String?

    var configPath: String? { config ?? ProcessInfo.processInfo.environment["ZFLUX_CONFIG"] }

    /// The run directory as an absolute path.
    var path: String {
        let raw = runDir ?? ProcessInfo.processInfo.environment["ZFLUX_RUN_DIR"] ?? ".zflux"
        let url = URL(fileURLWithPath: raw, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        return url.standardizedFileURL.path
    }

    /// The cluster's topology, from `--config` or the run directory.
    /// Creates the run directory if needed, 0700 (a node's entry point calls it before binding).
    func makePrivate() throws {
        try RunDirectory(path).makePrivate()
    }

    func topology() throws -> Topology {
        if let configPath {
            // Clients address stores of any app; the nodes check the apps they host when they start.
            return try ClusterConfig.load(path: configPath).topology(runDirectory: path, transportOverride: nil, basePortOverride: nil, apps: nil)
        }
        return try Topology.load(runDirectory: path)
    }

    /// The topology and the CURVE settings this process connects with (`$ZFLUX_KEY` or the cluster's
    /// client key), so every command connects over tcp the way the cluster requires.
    func cluster() throws -> (topology: Topology, security: Security.Settings?) {
        let topology = try topology()
        return (topology, try topology.clientSecurity(keyFile: ProcessInfo.processInfo.environment["ZFLUX_KEY"]))
    }

    /// For nodes: the server key pair too, and a ZAP handler that admits only authorized keys.
    /// The cluster's effect token: a secret the nodes share and clients lack, which lets the intake take
    /// an action only an effect may send from stores' effects alone. Under CURVE it is derived from the
    /// server's secret key (only nodes hold it). Over ipc, and over tcp when every node is on this
    /// host's loopback (so all of them read this run directory), it is kept in the run directory
    /// (0600, made by the first node that needs it). Over tcp between hosts without `[security]` there
    /// is none, and nothing is checked: anyone who can reach the intake is trusted there.
    func effectToken(_ topology: Topology, security: Security.Settings?) throws -> UInt64? {
        if let server = security?.server, let secret = Curve.decode(server.secretKey), secret.count >= 16 {
            let words = secret.withUnsafeBytes {
                ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            return SipHash.hash(Array("zflux effect token".utf8), k0: words.0, k1: words.1) | 1
        }
        guard topology.dispatcher.intake.hasPrefix("ipc://") || topology.isLoopbackOnly else { return nil }
        let file = RunDirectory(path).path + "/effect-token"
        for _ in 0..<100 {
            if let text = try? String(contentsOfFile: file, encoding: .utf8),
                let token = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16)
            {
                return token
            }
            // Made once, whole: the first node writes it beside and links it in; the others read it.
            let temporary = file + ".\(getpid())"
            let token = UInt64.random(in: 1...UInt64.max)
            guard
                FileManager.default.createFile(
                    atPath: temporary, contents: Data(String(token, radix: 16).utf8), attributes: [.posixPermissions: 0o600])
            else { throw CLIError("cannot write \(temporary)") }
            let linked = link(temporary, file) == 0
            unlink(temporary)
            if linked { return token }
        }
        throw CLIError("cannot read or make the effect token \(file)")
    }

    /// `domains`: keys a socket naming that ZAP domain admits instead of the authorized keys.
    func nodeSecurity(
        _ topology: Topology, domains: [String: Set<String>] = [:], logger: Logger
    ) throws -> (
        settings: Security.Settings?, zap: ZAPHandler?
    ) {
        guard let security = topology.security else { return (nil, nil) }
        let settings = Security.Settings(
            server: try KeyPair.load(security.serverKeyFile, publicHalf: security.serverPublicKey), serverPublicKey: security.serverPublicKey,
            client: try KeyPair.load(security.clientKeyFile))
        return (settings, try ZAPHandler(authorizedKeys: security.authorizedKeysFile, domains: domains, logger: logger))
    }
}

/// Options of a node process.
struct NodeOptions: ParsableArguments {
    @OptionGroup var runDir: RunDirOptions

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
    var logLevel: String = ProcessInfo.processInfo.environment["ZFLUX_LOG_LEVEL"] ?? "info"

    @Option(help: .hidden)
    var supervisorPid: Int32?

    func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        return logger
    }
}

enum LogSetup {
    /// Executables bootstrap logging once: to stderr, so stdout stays for results.
    static func bootstrap() {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
    }
}

/// Keeps signal sources alive and turns SIGINT/SIGTERM/SIGHUP into a callback: a hang-up (the terminal
/// or ssh session went away) stops a command the way Ctrl-C does, its nodes stopped and its terminal
/// restored, instead of killing it on the spot.
// @unchecked: dispatch sources are thread safe and never mutated after init.
final class TerminationSignals: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { handler(sig) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    deinit { sources.forEach { $0.cancel() } }
}

/// A node started by a supervisor stops when the supervisor is gone, even after `kill -9`, so no node
/// is ever orphaned. (PR_SET_PDEATHSIG fires when the spawning *thread* exits, which Foundation's
/// Process does not pin down, so the parent is watched instead.)
// @unchecked: the timer source is thread safe and never mutated after init.
final class ParentWatch: @unchecked Sendable {
    private let timer: any DispatchSourceTimer

    init?(supervisorPid: Int32?, onGone: @escaping @Sendable () -> Void) {
        guard let supervisorPid else { return nil }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now(), repeating: .milliseconds(200))
        timer.setEventHandler {
            if getppid() != supervisorPid { onGone() }
        }
        timer.resume()
        self.timer = timer
    }

    deinit { timer.cancel() }
}

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

/// Writes `line` and a newline to stdout, whole and unbuffered, so piped output arrives line by
/// line; ends the process quietly when stdout's reader has gone (``StandardOutput``).
func emitLine(_ line: String) {
    StandardOutput.line(line)
}

func printError(_ line: String) {
    StandardOutput.error(RootCommand.binaryName + ": " + line + "\n")
}

extension Topology.Transport: ExpressibleByArgument {}
extension WireCodec.Format: ExpressibleByArgument {}
extension FsyncPolicy: ExpressibleByArgument {}
