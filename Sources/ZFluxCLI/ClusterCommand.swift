import ArgumentParser
import Cluster
import Foundation
import Leadership
import Logging
import NodeSupport

struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Run a whole cluster on this machine.",
        subcommands: [Up.self, Check.self]
    )

    struct ClusterOptions: ParsableArguments {
        @Option(help: "Override the config's transport: ipc or tcp.")
        var transport: Transport?

        /// What `--transport` takes: the transports between processes. (`Topology.Transport` also has
        /// inproc, for nodes inside one process, which a cluster of processes cannot use.)
        enum Transport: String, CaseIterable, ExpressibleByArgument {
            case ipc, tcp

            var topology: Topology.Transport {
                switch self {
                case .ipc: .ipc
                case .tcp: .tcp
                }
            }
        }

        @Option(help: ArgumentHelp("With tcp: the first of the consecutive ports the nodes listen on.", valueName: "port"))
        var basePort: Int?

        @Flag(
            help: ArgumentHelp(
                "Run every store with its app's mock environment: instant answers, no network, files in memory (the config's `environment` per store otherwise)."
            ))
        var mock = false

        func topology(runDirectory: String, config: String?) throws -> Topology {
            var topology = try ClusterConfig.load(path: config, defaultText: ZFluxCLI.Host.current.defaultConfigText)
                .topology(
                    runDirectory: runDirectory, transportOverride: transport?.topology, basePortOverride: basePort,
                    apps: ZFluxCLI.Host.current.apps)
            if mock {
                for index in topology.stores.indices { topology.stores[index].environment = "mock" }
            }
            return topology
        }
    }

    struct Up: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start the dispatcher and every store, each as its own process; stay in the foreground.",
            discussion: """
                Writes the endpoints to RUN_DIR/cluster.json (read by dispatch, state and view) and each node's \
                log to RUN_DIR/logs/. Ctrl-C or SIGTERM stops every node; none outlives this command, even if \
                it is killed outright.
                """)

        @OptionGroup var runDir: RunDirOptions
        @OptionGroup var cluster: ClusterOptions
        @Option(help: ArgumentHelp("Log level of the nodes.", valueName: "level"))
        var logLevel: String = "info"
        @Flag(
            help: ArgumentHelp(
                "Run a dispatcher pair: a private etcd on loopback, a leader and a standby dispatcher with sync replication, and the stores (zflux failover hands over)."
            ))
        var ha = false
        @Flag(
            help: ArgumentHelp(
                "Keep each node's threads on one CPU (the dispatcher on the first this command may use, each store on the next, in turn): fewer cross-CPU wake-ups per action, as zflux bench runs it. Best with about as many CPUs as busy nodes."
            ))
        var pinCpus = false
        /// Set by a parent (a test, a script) that wants the cluster gone when it is gone.
        @Option(help: .hidden) var supervisorPid: Int32?

        func run() async throws {
            var topology = try cluster.topology(runDirectory: runDir.path, config: runDir.configPath)
            var etcd: EtcdProcess?
            if ha && topology.ha == nil {
                if topology.security == nil && topology.dispatcher.intake.contains("tcp://") {
                    throw CLIError(
                        "cluster up --ha over tcp without [security] would let any process that reaches a member's replication port "
                            + "follow it as its standby: run it over ipc (the default), or give the config a [security] section")
                }
                // Its etcd would start on the running one's data and fail only after its start-up wait.
                try Supervisor.refuseIfRunning(in: RunDirectory(runDir.path))
                try Self.refuseSingleDispatcherJournal(topology)
                var logger = Logger(label: "zflux.etcd")
                logger.logLevel = .warning
                // Its data stays in the run directory: etcd's revisions, which name the pair's epochs, go on
                // growing from one run to the next.
                let started = try await EtcdProcess.start(dataDirectory: RunDirectory(runDir.path).path + "/etcd", logger: logger)
                etcd = started
                printError("etcd for the pair at \(started.endpoint) (pid \(started.pid), data in \(started.directory))")
                topology = try topology.withLocalPair(
                    etcd: [started.endpoint], clusterName: "local", keyDirectory: RunDirectory(runDir.path).path + "/keys")
            }
            defer { etcd?.stop() }
            try ClusterConfig.checkOutsideEphemeralPorts(topology)
            let supervisor = Supervisor(
                topology: topology, runDirectory: runDir.path, logLevel: logLevel, restartPolicy: .init(topology.restart), pinCPUs: pinCpus)
            let signals = TerminationSignals { supervisor.forward(signal: $0) }
            let watch = ParentWatch(supervisorPid: supervisorPid) { supervisor.forward(signal: SIGTERM) }
            defer { withExtendedLifetime((signals, watch)) {} }
            let status = try await supervisor.supervise(report: printError) {
                printError("cluster up in \(runDir.path): " + supervisor.pids.map { "\($0.0) (pid \($0.1))" }.joined(separator: ", "))
                printError("logs in \(supervisor.logDirectory); Ctrl-C stops the cluster")
            }
            if status != 0 { throw ExitCode(status) }
        }
    }
}

extension ClusterCommand.Up {
    /// `cluster up --ha` where a single dispatcher ran: its journal is at the top of the journal
    /// directory, and the pair's members keep theirs below it (`d1`, `d2`, as `withLocalPair` names
    /// them). Started so, the pair would begin a new, empty history and leave those records where no
    /// member reads them; the stores would refuse it as foreign. Refused, with nothing started or
    /// changed, until the journal is moved into the first member's directory.
    static func refuseSingleDispatcherJournal(_ topology: Topology) throws {
        guard let top = topology.durability?.journalDirectory else { return }
        let segments = recordSegments(in: top)
        guard !segments.isEmpty, recordSegments(in: top + "/d1").isEmpty else { return }
        throw CLIError(
            "\(top) holds a single dispatcher's journal (\(segments.count) segment file\(segments.count == 1 ? "" : "s")), "
                + "but a pair keeps one journal per member, in \(top)/d1 and \(top)/d2: started now, it would begin an empty "
                + "history and leave those records behind. Nothing was started or changed. Move the journal into \(top)/d1 "
                + "first, as docs/OPERATIONS.md says under \"From a single dispatcher to a pair\" (in \"High availability: a "
                + "dispatcher pair\"); the pair then carries on its history")
    }
}

extension ClusterCommand {
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Validate a cluster config and print the endpoints it gives.")
        @Argument(help: "The config file (TOML).") var file: String
        @OptionGroup var runDir: RunDirOptions

        func run() throws {
            let topology = try ClusterConfig.load(path: file)
                .topology(runDirectory: runDir.path, transportOverride: nil, basePortOverride: nil, apps: ZFluxCLI.Host.current.apps)
            try ClusterConfig.checkOutsideEphemeralPorts(topology)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            emitLine(String(decoding: try encoder.encode(topology), as: UTF8.self))
        }
    }
}
