import ArgumentParser
import Cluster
import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import ZeroMQ

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

    /// The topology of the cluster whose files are here: as ``topology()``, or when none runs, the one
    /// that ran last (`cluster.last.json`). For commands that read the journal and snapshots, never
    /// for one that connects.
    func recordedTopology() throws -> Topology {
        if configPath != nil { return try topology() }
        return try Topology.load(runDirectory: path, orLastRun: true)
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
            let k0 = secret.readLittleEndian(UInt64.self, at: 0), k1 = secret.readLittleEndian(UInt64.self, at: 8)
            return SipHash.hash(Array("zflux effect token".utf8), k0: k0, k1: k1) | 1
        }
        guard topology.dispatcher.intake.hasPrefix("ipc://") || topology.isLoopbackOnly else { return nil }
        return try runDirectoryToken("effect-token")
    }

    /// A pair's member token (``DispatcherRules/memberToken``): where both members run on this host
    /// (their replication endpoints over ipc, or tcp with every node on loopback), a secret kept in the
    /// run directory that clients are never given, whose proof each REPLICA-HELLO carries. Between
    /// hosts there is none: under CURVE each member's own key does that work, and without CURVE the
    /// config had to say `unauthenticated_replication = true`.
    func memberToken(_ topology: Topology) throws -> UInt64? {
        guard topology.ha != nil, topology.isLoopbackOnly else { return nil }
        return try runDirectoryToken("member-token")
    }

    /// The 64-bit secret in the run directory's file `name` (0600), made by the first process that
    /// needs it.
    private func runDirectoryToken(_ name: String) throws -> UInt64 {
        let file = RunDirectory(path).path + "/" + name
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
        throw CLIError("cannot read or make the token \(file)")
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

/// The options that take a value of these types.
extension Topology.Transport: ExpressibleByArgument {}
extension WireCodec.Format: ExpressibleByArgument {}
extension FsyncPolicy: ExpressibleByArgument {}
