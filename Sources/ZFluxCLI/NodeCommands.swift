import ArgumentParser
import Cluster
import Dispatcher
import FluxCore
import Foundation
import NodeSupport
import StoreNode

struct DispatcherCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dispatcher",
        abstract: "Run the dispatcher node of the cluster in the run directory (cluster up starts it for you).")

    @OptionGroup var node: NodeOptions
    @Option(
        name: .customLong("node"),
        help: ArgumentHelp(
            "This node's name: 'dispatcher', or with [ha] the name of one of the cluster's [[dispatcher]] entries.", valueName: "name"))
    var nodeName: String?

    func run() async throws {
        LogSetup.bootstrap()
        try IOThreadScheduling.applyFromEnvironment()
        try node.runDir.makePrivate()
        let topology = try node.runDir.topology()
        var configuration = DispatcherNode.Configuration(topology: topology, apps: ZFluxCLI.Host.current.apps)
        var endpoints = topology.dispatcher
        if let ha = topology.ha {
            let names = ha.dispatchers.map(\.name).joined(separator: ", ")
            guard let nodeName, let member = ha.member(named: nodeName) else {
                throw CLIError("this cluster has a standby dispatcher: name this one with --node (one of: \(names))")
            }
            endpoints = member.endpoints
            configuration.ha = try Self.pairMember(member, of: ha, in: topology, configuration: &configuration)
            configuration.ha?.memberToken = try node.runDir.memberToken(topology)
        } else if let nodeName, nodeName != "dispatcher" {
            throw CLIError("the dispatcher's node name is 'dispatcher', not '\(nodeName)'; stores run with `\(RootCommand.binaryName) store`")
        }
        // A member's replication endpoint admits its partner's member key alone.
        let partnerKeys = topology.ha.map { ha in Set(ha.dispatchers.filter { $0.name != nodeName }.compactMap(\.publicKey)) }
        let (security, zap) = try node.runDir.nodeSecurity(
            topology, domains: partnerKeys.map { [ZAPHandler.replicationDomain: $0] } ?? [:], logger: node.logger("zflux.zap"))
        configuration.security = security
        configuration.revocations = zap?.revocations
        configuration.effectToken = try node.runDir.effectToken(topology, security: security)
        let dispatcher = try DispatcherNode(configuration: configuration, logger: node.logger("zflux.dispatcher"))
        let metrics = try endpoints.metricsPort.map { port in
            try MetricsServer(
                host: endpoints.metricsListen ?? "127.0.0.1", port: port,
                statusEndpoint: Topology.localEndpoint(endpoints.intake, listen: endpoints.listen), security: security, node: "dispatcher",
                token: try metricsToken(), logger: node.logger("zflux.metrics"))
        }
        defer { metrics?.shutdown() }
        do {
            try await runNode(stop: dispatcher.stop, supervisorPid: node.supervisorPid) { try await dispatcher.run() }
        } catch let stepped as SteppedDown {
            // Not a crash: the supervisor starts it again at once, as the standby.
            printError("\(stepped); exiting to come back as the standby")
            throw ExitCode(Supervisor.steppedDownStatus)
        }
        withExtendedLifetime(zap) {}
    }
}

extension DispatcherCommand {
    /// One dispatcher of a pair: its own endpoints and journal, and whom it follows as a standby.
    static func pairMember(
        _ member: Topology.HighAvailability.Member, of ha: Topology.HighAvailability, in topology: Topology,
        configuration: inout DispatcherNode.Configuration
    ) throws -> DispatcherNode.HighAvailability {
        let bound = member.endpoints.bound
        configuration.intake = bound.intake
        configuration.actions = bound.actions
        configuration.replay = bound.replay
        configuration.journal = .init(
            directory: member.journalDirectory, policy: topology.durability?.fsync ?? Defaults.fsync,
            segmentBytes: topology.durability?.segmentBytes ?? Defaults.segmentBytes)
        guard let mode = DispatcherNode.Replication(rawValue: ha.replication) else {
            throw CLIError("[ha] replication is \"\(ha.replication)\"; it must be \"sync\" or \"async\"")
        }
        let partners = ha.dispatchers.filter { $0.name != member.name }
        // Under CURVE over tcp, replication is between the two members' own keys: a client's key
        // must not be able to follow the leader (and read every action and the client-scope secret).
        var memberKey: KeyPair? = nil
        if topology.security != nil, ([member] + partners).contains(where: { $0.replication.hasPrefix("tcp://") }) {
            guard let keyFile = member.keyFile, partners.allSatisfy({ $0.publicKey != nil }) else {
                throw CLIError(
                    "this pair replicates over tcp under [security], but its members have no keys of their own: give each "
                        + "[[dispatcher]] key = \"keys/NAME.key\" (\(RootCommand.binaryName) keygen NAME makes it), and check the config again")
            }
            // The partner admits this member by the public key from its .pub: one of another pair would
            // shut this member out of replication, logged only on the partner.
            memberKey = try member.publicKey.map { try KeyPair.load(keyFile, publicHalf: $0) } ?? KeyPair.load(keyFile)
        }
        return DispatcherNode.HighAvailability(
            name: member.name, replication: Topology.bindEndpoint(member.replication, listen: member.endpoints.listen),
            peers: partners.map(\.replication), etcd: ha.etcd, key: ha.key, leaseMilliseconds: ha.leaseMilliseconds, mode: mode,
            memberKey: memberKey, leases: EtcdLeases.connect)
    }
}

struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Run one store node of the cluster in the run directory (cluster up starts them for you).")

    @Argument(help: "The store's name in the cluster config.") var storeName: String?
    @OptionGroup var node: NodeOptions
    @Option(
        name: .customLong("node"), help: ArgumentHelp("The same as the NAME argument (with --config, as the dispatcher takes it).", valueName: "name")
    )
    var nodeName: String?

    func validate() throws {
        guard storeName != nil || nodeName != nil else {
            throw ValidationError("name the store: `\(RootCommand.binaryName) store NAME` or `--node NAME`")
        }
        if let storeName, let nodeName, storeName != nodeName { throw ValidationError("NAME '\(storeName)' and --node '\(nodeName)' differ") }
    }

    func run() async throws {
        LogSetup.bootstrap()
        try IOThreadScheduling.applyFromEnvironment()
        let name = storeName ?? nodeName ?? ""
        try node.runDir.makePrivate()
        let topology = try node.runDir.topology()
        let endpoints = try topology.requireStore(named: name)
        let (security, zap) = try node.runDir.nodeSecurity(topology, logger: node.logger("zflux.zap"))
        let context = AppContext(mock: endpoints.usesMockEnvironment, dataDirectory: RunDirectory(node.runDir.path).dataDirectory(of: name))
        let app = try ZFluxCLI.Host.current.require(endpoints.app, context)
        var configuration = StoreNode.Configuration(topology: topology, store: endpoints, app: app)
        configuration.security = security
        configuration.revocations = zap?.revocations
        let runDirectory = RunDirectory(node.runDir.path)
        try RunDirectory.makePrivateDirectory(runDirectory.stateDirectory)
        configuration.crashMarkerPath = runDirectory.crashMarker(of: name)
        configuration.logPath = runDirectory.log(of: "store-" + name)
        configuration.effectToken = try node.runDir.effectToken(topology, security: security)
        let store = try StoreNode(configuration: configuration, logger: node.logger("zflux.store"))
        let metrics = try endpoints.metricsPort.map { port in
            try MetricsServer(
                host: endpoints.metricsListen ?? "127.0.0.1", port: port,
                statusEndpoint: Topology.localEndpoint(endpoints.snapshot, listen: endpoints.listen), security: security, node: name,
                token: try metricsToken(), logger: node.logger("zflux.metrics"))
        }
        defer { metrics?.shutdown() }
        try await runNode(stop: store.stop, supervisorPid: node.supervisorPid) { try await store.run() }
        withExtendedLifetime(zap) {}
    }
}

/// Runs a node until SIGINT/SIGTERM (or its supervisor's death), then lets it shut down cleanly.
func runNode(stop: @escaping @Sendable () -> Void, supervisorPid: Int32?, _ body: () async throws -> Void) async throws {
    // Every thread the node has started is on the CPU its supervisor gave it; the ones it starts later
    // inherit it from them.
    do { try CPUAffinity.applyFromEnvironment() } catch { printError("\(error); running on any CPU") }
    let signals = TerminationSignals { _ in stop() }
    let watch = ParentWatch(supervisorPid: supervisorPid, onGone: stop)
    try await body()
    withExtendedLifetime((signals, watch)) {}
}

/// The bearer token the metrics port requires: `$ZFLUX_METRICS_TOKEN`, or the first line of the file
/// `$ZFLUX_METRICS_TOKEN_FILE` names (a Kubernetes secret mounted as a file); nil: none required.
func metricsToken() throws -> String? {
    let environment = ProcessInfo.processInfo.environment
    if let token = environment["ZFLUX_METRICS_TOKEN"], !token.isEmpty { return token }
    guard let file = environment["ZFLUX_METRICS_TOKEN_FILE"], !file.isEmpty else { return nil }
    let text = try String(contentsOfFile: file, encoding: .utf8)
    guard let token = text.split(whereSeparator: \.isNewline).first.map(String.init), !token.isEmpty else {
        throw CLIError("ZFLUX_METRICS_TOKEN_FILE \(file) holds no token")
    }
    return token
}
