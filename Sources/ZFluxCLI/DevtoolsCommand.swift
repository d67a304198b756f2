import ArgumentParser
import Cluster
import Devtools
import DevtoolsServer
import FluxCore
import Foundation
import NodeSupport
import Synchronization
import ViewNode

struct DevtoolsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devtools",
        abstract: "Serve a browser page that shows the cluster live: nodes, actions, every store's state, time travel, dispatch.",
        discussion: """
            Prints the page's address (`devtools at http://127.0.0.1:8745/#token=…`) and serves it until Ctrl-C. \
            The page needs nothing from the internet: zflux serves all of it. It shows
              - every node, as `zflux top` shows them (version, lag, restarts, quarantines);
              - the action stream as `zflux tail` prints it, filtered by app and type;
              - each store's state as a collapsible tree, the paths the last update changed highlighted;
              - a slider over the journal's seqs: every store's state at that seq (as `zflux state --at`), \
            with the diff against the seq before and the action that made it; click an action to go to it;
              - a form to dispatch an action of the apps the cluster runs, from their catalog (`zflux apps`), \
            with the ACK or NACK it got;
              - session files: export a stretch of the journal as `journal export` does (saved by the \
            browser), or open one to step through its actions and the states they left;
              - latency: open a `zflux bench --json` report to plot its e2e latency by percentile and second \
            by second, or follow a `zflux bench --attach` run on this cluster as it goes (its ACK latency \
            and rate each second, read from bench-live.jsonl in the run directory), then its report.

            It is one more subscriber of the cluster, as `zflux view` is: a snapshot and the live updates \
            of every store, the action stream, a status request per node a second. Time travel reads the \
            journal on this host, read-only, and rebuilds states with the apps this binary hosts (the \
            binary that runs the cluster: for your own apps, your own binary's devtools).

            Security (docs/OPERATIONS.md, "The devtools page"): it listens on loopback by default; reach \
            it from another machine through an SSH tunnel. On every address, loopback too (another local \
            user reaches it), a dispatch, time travel and an export need a token: $ZFLUX_DEVTOOLS_TOKEN, \
            the first line of --token-file, or else a fresh one it prints in the page's address \
            (#token=…), which the page keeps; viewing the live states needs none. Given a key pair of its own (--key, [devtools] \
            key) on a cluster with a [security] section, it also takes the token of every key in the \
            cluster's authorized-keys file, which `devtools token` prints from that key: developers \
            dispatch with their own keys, and revoking a key revokes its token. The WebSocket refuses another site's page (its \
            Origin) and, on loopback, any Host that is not a loopback name; connections, frame sizes and \
            requests per second are capped.

            The cluster config's [devtools] section (listen, token_file, max_connections, key) sets the \
            same four things; these options win over it.
            """,
        subcommands: [DevtoolsTokenCommand.self])

    @Option(
        help: ArgumentHelp(
            "Where to serve the page: HOST:PORT (port 0: any free port, printed). Default: [devtools] listen, else 127.0.0.1:8745.",
            valueName: "host:port"))
    var listen: String?
    @Option(help: ArgumentHelp("A file whose first line is the token a dispatch must carry.", valueName: "file"))
    var tokenFile: String?
    @Option(help: "The most connections (pages and their files) open at once. Default: [devtools] max_connections, else 16.")
    var maxConnections: Int?
    @Option(
        help: ArgumentHelp(
            "The devtools' own key pair (made by `keygen`): under [security], every authorized key's token dispatches too (`devtools token`). Default: [devtools] key.",
            valueName: "file"))
    var key: String?
    @OptionGroup var node: NodeOptions

    func validate() throws {
        if let listen, ClusterConfig.splitListen(listen) == nil { throw ValidationError("--listen takes HOST:PORT, like 127.0.0.1:8745") }
        let range = ClusterConfig.DevtoolsSection.connectionRange
        if let maxConnections, !range.contains(maxConnections) {
            throw ValidationError("--max-connections must be between \(range.lowerBound) and \(range.upperBound)")
        }
    }

    func run() async throws {
        LogSetup.bootstrap()
        let logger = node.logger("zflux.devtools")
        let (topology, security) = try node.runDir.cluster()
        // The options win over the config's [devtools] section, which wins over the defaults.
        let configured = topology.devtools
        guard let (host, port) = ClusterConfig.splitListen(listen ?? Settings.Devtools.listen.value(configured?.listen)) else {
            throw CLIError("--listen takes HOST:PORT")
        }
        let (access, shownToken) = try dispatchAccess(fixed: try devtoolsToken(configuredFile: configured?.tokenFile), topology: topology)
        let hub = DevtoolsHub()
        let backend = ClusterDevtools(runDir: node.runDir, topology: topology, security: security, tokenRequired: access.required)
        var limits = DevtoolsServer.Limits()
        limits.maxConnections = maxConnections ?? Settings.Devtools.maxConnections.value(configured?.maxConnections)
        let server = try DevtoolsServer(
            host: host, port: port, access: access, isLoopback: isLoopbackHost, hub: hub, backend: backend, limits: limits, logger: logger)
        // Every address (0.0.0.0, ::): the host's name, which another machine can open; the page's
        // checks follow whatever name the browser uses.
        let everywhere = ["0.0.0.0", "::", "*"].contains(host)
        let named = everywhere ? (ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? host) : host
        let shown = named.contains(":") ? "[\(named)]" : named
        let address = "devtools at http://\(shown):\(server.port)/#token=\(shownToken)"

        let app = ZFluxCLI.Host.current
        let stop = Atomic<Bool>(false)
        let wake = DispatchSemaphore(value: 0)
        var views: [ViewNode] = []
        for store in topology.stores {
            var configuration = ViewNode.Configuration(topology: topology, store: store, app: app.app(named: store.app))
            configuration.security = security
            let reader = app.client(store.app)
            views.append(
                try ViewNode(configuration: configuration, logger: logger) { update in
                    // A refusal too: it leaves the state current through the refused seq, which the
                    // store's header says (no heartbeat says it again), as the nodes table does.
                    let state = update.state
                    hub.updateState(store: update.store, version: update.currentThrough, connection: "\(update.connection)") {
                        (try? reader.stateJSON(fromWire: state)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
                    }
                })
        }
        // The action stream, on a thread of its own (it owns the two sockets).
        Thread {
            do {
                try followActionStream(
                    topology: topology, security: security, app: nil, type: nil, stopped: { stop.load(ordering: .acquiring) },
                    onAction: { hub.action(DevtoolsCommand.streamLine($0, app)) }, onRejected: { hub.action(TailCommand.rejectedJSONLine($0)) })
            } catch {
                printError("devtools: the action stream stopped: \(error)")
            }
        }.start()
        // The nodes, as `top` samples them, once a second.
        let table = TopTable(nodes: try statusTargets(endpoints: [], runDir: node.runDir), runDirectory: node.runDir.path)
        Thread {
            while !stop.load(ordering: .acquiring) {
                table.sample()
                let rows = table.sampledRows
                let head = rows.compactMap { UInt64($0[4]) }.max() ?? 0
                let encode = { (cells: [String]) in "[" + cells.map(jsonString).joined(separator: ",") + "]" }
                hub.nodes(
                    "{\"kind\":\"nodes\",\"head\":\(head),\"header\":\(encode(TopTable.header)),\"rows\":[\(rows.map(encode).joined(separator: ","))]}"
                )
                _ = wake.wait(timeout: .now() + .seconds(1))
            }
        }.start()
        DevtoolsCommand.followBenchFeed(runDirectory: node.runDir.path, hub: hub) { stop.load(ordering: .acquiring) }
        let all = views
        try await runNode(
            stop: {
                stop.store(true, ordering: .releasing)
                wake.signal()
                all.forEach { $0.stop() }
            }, supervisorPid: node.supervisorPid
        ) {
            // Printed once SIGTERM is handled: whoever waits for the address may stop it at once, and
            // it exits cleanly (it used to die of the signal when stopped just after printing).
            emitLine(address)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for view in all { group.addTask { try await view.run() } }
                try await group.waitForAll()
            }
        }
        server.shutdown()
    }

    /// An action's line in the page's stream: as `tail` prints it, or, when that would be longer than
    /// the hub keeps (``DevtoolsHub/actionBytes``), without its payload and with the payload's size
    /// (`payload_bytes`). Time travel still shows the whole action.
    static func streamLine(_ message: Message, _ host: ZFluxCLI.Host) -> String {
        let line = jsonLine(message, host)
        guard line.utf8.count > DevtoolsHub.actionBytes else { return line }
        var bare = message
        bare.payload = []
        return String(jsonLine(bare, host).dropLast()) + ",\"payload_bytes\":\(message.payload.count)}"
    }

    /// Who may dispatch, travel in time and export, and the token the printed address carries. A token
    /// is required on every address, loopback too: any local user reaches loopback, while the cluster's
    /// own sockets are in the run directory, 0700. When none is set, a fresh one is made, shown only in
    /// the address printed (as Jupyter does), which only the user who started it sees. With a key pair
    /// of the devtools' own (`--key`, `[devtools] key`), the token of every key in the cluster's
    /// authorized-keys file is taken too (``AuthorizedKeyTokens``).
    func dispatchAccess(fixed: String?, topology: Topology) throws -> (access: DispatchAccess, shown: String) {
        var derived: (@Sendable () -> [DispatchAccess.Holder])?
        if let keyFile = key ?? topology.devtools?.key {
            guard let files = topology.security else {
                throw CLIError("--key: the devtools take the tokens of the cluster's authorized keys, and this cluster has no [security] section")
            }
            let pair: KeyPair
            do {
                let publicHalf = key == nil ? topology.devtools?.publicKey : nil
                pair = try publicHalf.map { try KeyPair.load(keyFile, publicHalf: $0) } ?? KeyPair.load(keyFile)
            } catch {
                throw CLIError("the devtools' key \(keyFile): \(error)")
            }
            let tokens = AuthorizedKeyTokens(devtools: pair, file: files.authorizedKeysFile)
            derived = { tokens.current() }
        }
        let token = fixed ?? (0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max)) }.joined()
        let hint =
            derived == nil
            ? DispatchAccess().hint
            : "open the address it printed, with its #token=…, or put the token `\(RootCommand.binaryName) devtools token` makes from your authorized key after #token="
        return (DispatchAccess(token: token, derivedTokens: derived, hint: hint), token)
    }

    /// The first line of --token-file, or `$ZFLUX_DEVTOOLS_TOKEN`, or the first line of the config's
    /// token_file; nil: none given.
    func devtoolsToken(configuredFile: String?) throws -> String? {
        func firstLine(_ file: String, _ named: String) throws -> String {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw CLIError("\(named) \(file) cannot be read") }
            guard let token = text.split(whereSeparator: \.isNewline).first.map(String.init), !token.isEmpty else {
                throw CLIError("\(named) \(file) holds no token")
            }
            return token
        }
        if let file = tokenFile { return try firstLine(file, "--token-file") }
        if let token = ProcessInfo.processInfo.environment["ZFLUX_DEVTOOLS_TOKEN"], !token.isEmpty { return token }
        return try configuredFile.map { try firstLine($0, "[devtools] token_file") }
    }
}

/// What the page asks of the cluster, with the clients the other commands use: `state --at`'s time
/// machine, `dispatch`'s connection, `apps`'s catalog. Called on the server's worker thread.
struct ClusterDevtools: DevtoolsBackend {
    let runDir: RunDirOptions
    let topology: Topology
    let security: Security.Settings?
    let tokenRequired: Bool

    func hello() -> String {
        let host = ZFluxCLI.Host.current
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let catalog = (try? encoder.encode(host.apps.map { $0.describe() })).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        let stores = topology.stores.map { "{\"name\":\(jsonString($0.name)),\"app\":\(jsonString($0.app))}" }.joined(separator: ",")
        return "{\"kind\":\"hello\",\"program\":\(jsonString(RootCommand.binaryName)),\"runDirectory\":\(jsonString(runDir.path)),"
            + "\"tokenRequired\":\(tokenRequired),\"stores\":[\(stores)],\"apps\":\(catalog)}"
    }

    /// `state --at`'s time machine over this run directory's journal; a pair's is refused with why.
    func timeMachine() throws -> TimeMachine {
        try TimeMachine(runDir: runDir) { member in "a pair: time travel reads one member's journal (\(member))" }
    }

    func range() -> String {
        do {
            let machine = try timeMachine()
            return "{\"kind\":\"range\",\"first\":\(machine.rewind.journal.firstSeq),\"head\":\(machine.rewind.head)}"
        } catch {
            return "{\"kind\":\"range\",\"error\":\(jsonString("time travel: \(error)"))}"
        }
    }

    func states(at seq: UInt64) -> String {
        do {
            let machine = try timeMachine()
            // Seq 0 is before the first action: the states the stores start with.
            let replicas = try machine.rewind.replicas(machine.stores, at: seq == 0 ? 0 : seq - 1)
            let previous = try replicas.map { String(decoding: try $0.stateJSON(), as: UTF8.self) }
            var action = "null", quarantined = false
            try machine.rewind.advance(replicas, through: seq) { message, _ in
                guard message.header.seq == seq else { return }
                action = jsonLine(message, .current)
                quarantined = message.header.flags.contains(.quarantined)
            }
            var stores: [String] = []
            for (replica, before) in zip(replicas, previous) {
                let after = String(decoding: try replica.stateJSON(), as: UTF8.self)
                stores.append(
                    "{\"name\":\(jsonString(replica.name)),\"app\":\(jsonString(replica.app.name)),\"previous\":\(before),\"state\":\(after)}")
            }
            let unhosted = machine.unhosted.map { jsonString($0.name) }.joined(separator: ",")
            return
                "{\"kind\":\"at\",\"seq\":\(seq),\"action\":\(action),\"quarantined\":\(quarantined),\"stores\":[\(stores.joined(separator: ","))],\"unhosted\":[\(unhosted)]}"
        } catch {
            return "{\"kind\":\"at\",\"seq\":\(seq),\"error\":\(jsonString("time travel: \(error)"))}"
        }
    }

    /// The most actions a page may export at once: a session of more is `journal export`'s to write.
    static let maxExportedActions: UInt64 = 10_000

    /// The seqs a page's export of `from…to` covers: up to the head when `to` runs past it (as "go to
    /// seq" stops at the journal's ends), and at most ``maxExportedActions`` of them, counted after that.
    static func exportedRange(from: UInt64, to: UInt64, head: UInt64) -> Result<ClosedRange<UInt64>, CLIError> {
        guard from >= 1, from <= to else { return .failure(CLIError("export: from must be at least 1 and at most to (\(from)…\(to))")) }
        guard from <= head else { return .failure(CLIError("export: seq \(from) is beyond the journal's head (\(head))")) }
        let last = min(to, head)
        guard last - from < maxExportedActions else {
            return .failure(
                CLIError(
                    "export: at most \(maxExportedActions) actions from the page; for more, run \(RootCommand.binaryName) journal export --from \(from) --to \(last)"
                ))
        }
        return .success(from...last)
    }

    func export(from: UInt64, to asked: UInt64, maxBytes: Int) -> String {
        func refused(_ reason: String) -> String { "{\"kind\":\"exported\",\"error\":\(jsonString(reason))}" }
        // Checked before the journal is read, as they need no head.
        guard from >= 1, from <= asked else { return refused("export: from must be at least 1 and at most to (\(from)…\(asked))") }
        do {
            let machine = try timeMachine()
            let to: UInt64
            switch ClusterDevtools.exportedRange(from: from, to: asked, head: machine.rewind.head) {
            case .success(let range): to = range.upperBound
            case .failure(let reason): return refused(reason.description)
            }
            // As `journal export`: a session without some of the cluster's stores would pass for the whole story.
            guard machine.unhosted.isEmpty else {
                return refused(
                    "export: \(RootCommand.binaryName) does not host the app of \(machine.unhosted.map { "'\($0.name)'" }.joined(separator: ", ")): export with the binary that runs the cluster"
                )
            }
            // The file's text as a string (a page that parsed it would round its 64-bit client ids and
            // times, JavaScript numbers being doubles, and save a file unlike the journal), escaped
            // into the answer as the journal is read, and stopped once the answer passes `maxBytes`.
            var answer = Array(#"{"kind":"exported","from":\#(from),"to":\#(to),"session":""#.utf8)
            do {
                try machine.rewind.writeSession(machine.stores, from: from, to: to, readers: machine.readers) { part in
                    appendJSONStringContent(part, to: &answer)
                    guard answer.count <= maxBytes else { throw ExportTooLarge() }
                }
            } catch is ExportTooLarge {
                return refused(
                    "export: the session of seqs \(from)…\(to) is over the \(maxBytes >> 20) MiB a page may export; for it, run \(RootCommand.binaryName) journal export --from \(from) --to \(to) -o FILE, which streams it to a file"
                )
            }
            answer += Array(#""}"#.utf8)
            return String(decoding: answer, as: UTF8.self)
        } catch {
            return refused("export: \(error)")
        }
    }

    /// Stops an export from the page at its byte budget.
    private struct ExportTooLarge: Error {}

    func dispatch(app name: String, type: String, arguments: String) -> String {
        let app = ZFluxCLI.Host.current.client(name)
        let payload: [UInt8]
        do {
            payload = try app.wirePayload(type: type, argumentsJSON: Array(arguments.utf8), format: Settings.Cluster.codec.value(topology.codec))
        } catch {
            return "{\"kind\":\"dispatched\",\"outcome\":\"refused\",\"reason\":\(jsonString("\(name) \(type): \(error.reason)"))}"
        }
        do {
            let connection = try DispatchConnection(intake: topology.dispatcher.intake, security: security)
            defer { connection.close() }
            let timeout = topology.defaultDispatchTimeoutSeconds
            connection.timeout = .milliseconds(Int(timeout * 1000))
            switch try connection.dispatch(app: app.name, actionType: type, payload: payload) {
            case .acknowledged(let seq): return "{\"kind\":\"dispatched\",\"outcome\":\"ack\",\"seq\":\(seq)}"
            case .rejected(let reason): return "{\"kind\":\"dispatched\",\"outcome\":\"nack\",\"reason\":\(jsonString(reason))}"
            case .timedOut:
                return
                    "{\"kind\":\"dispatched\",\"outcome\":\"timeout\",\"reason\":\(jsonString("no answer from the dispatcher within \(timeout) s"))}"
            }
        } catch {
            return "{\"kind\":\"dispatched\",\"outcome\":\"error\",\"reason\":\(jsonString("\(error)"))}"
        }
    }
}
