import ArgumentParser
import FluxCore
import Foundation
import NodeSupport

struct DispatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dispatch",
        abstract: "Dispatch one action and print the sequence number it was given.",
        discussion: """
            ARGUMENTS is a JSON object with the action's arguments, e.g.
              zflux dispatch todo addTodo '{"title":"Buy milk"}'
              zflux dispatch counter incrementTapped
            A refusal (NACK) prints its reason and exits 1; no answer within the timeout exits 2. `zflux apps` lists the actions of every app this binary hosts (for a cluster of your own apps, ask its own binary).

            The dispatcher acknowledges an action once it is sequenced and durable; the app's stores apply it after. With --wait the command also waits for them: it prints the seq once every store of the app has applied it (their state is then current through that seq, the version `zflux state` reports), or prints the store's reason and exits 1 when a store's reducer refused the action (the app's `reject`), or says so and exits 4 when the action was quarantined because it crashed a store's reducer (every store skips it). Stores that say nothing within the timeout exit 2.
            """)

    @Argument(help: "The app the action belongs to.") var app: String
    @Argument(help: "The action's name.") var action: String
    @Argument(help: "The action's arguments as a JSON object (default: {}).") var arguments: String?
    @Option(
        help: ArgumentHelp(
            "Seconds to wait for the dispatcher's answer, retrying meanwhile. Default: 5, or with a dispatcher pair three leases and 2 s (time for a failover).",
            valueName: "seconds"))
    var timeout: Double?
    @Option(help: "Dispatch the action this many times, one after the other (each acknowledged before the next); prints the last seq.")
    var `repeat` = 1
    @Flag(help: "Wait until the app's stores have applied the action (or print their refusal and exit 1; exit 4 if it was quarantined).")
    var wait = false
    @OptionGroup var runDir: RunDirOptions

    func validate() throws {
        guard `repeat` >= 1 else { throw ValidationError("--repeat must be at least 1") }
        if let timeout, !(timeout.isFinite && timeout > 0 && timeout <= 86_400) {
            throw ValidationError("--timeout must be more than 0 and at most 86400 seconds")
        }
        guard !wait || `repeat` == 1 else { throw ValidationError("--wait waits for one action: it does not go with --repeat") }
    }

    func run() throws {
        let app = ZFluxCLI.Host.current.client(app)
        let (topology, security) = try runDir.cluster()
        let payload: [UInt8]
        do {
            payload = try app.wirePayload(
                type: action, argumentsJSON: Array((arguments ?? "").utf8), format: Settings.Cluster.codec.value(topology.codec))
        } catch {
            throw CLIError("\(self.app) \(action): \(error.reason)")
        }
        let timeout = timeout ?? topology.defaultDispatchTimeoutSeconds
        let started = MonotonicClock.nowMilliseconds()
        let deadline = started + UInt64(timeout * 1000)
        // Subscribed before the action is sent, so no store's answer about it can be missed.
        let watch = try wait ? AppliedWatch(stores: topology.requireStores(running: app.name), security: security) : nil
        if let watch, !(try watch.waitUntilHeard(deadline: deadline)) {
            printError("no word from store \(watch.silent.joined(separator: ", ")) within \(timeout) s; is the cluster up?")
            throw ExitCode(2)
        }
        let connection = try DispatchConnection(intake: topology.dispatcher.intake, security: security)
        defer { connection.close() }
        connection.timeout = .milliseconds(Int(timeout * 1000))
        connection.retryInterval = .milliseconds(min(1000, Int(timeout * 1000)))
        var last: UInt64 = 0
        for done in 0..<`repeat` {
            switch try connection.dispatch(app: app.name, actionType: action, payload: payload) {
            case .acknowledged(let seq):
                last = seq
            case .rejected(let reason):
                printError(`repeat` == 1 ? "rejected: \(reason)" : "rejected after \(done) acknowledged: \(reason)")
                throw ExitCode(1)
            case .timedOut:
                printError(
                    "no answer from the dispatcher at \(topology.dispatcher.intake) within \(timeout) s\(done > 0 ? " after \(done) acknowledged" : ""); is the cluster up?"
                )
                throw ExitCode(2)
            }
        }
        guard let watch else {
            emitLine(String(last))
            return
        }
        switch try watch.wait(for: last, deadline: max(deadline, MonotonicClock.nowMilliseconds() + 1000)) {
        case .applied:
            // Every store is current through the seq, which a quarantined action also leaves them (skipped,
            // their state unchanged): only the dispatcher tells the two apart for sure, as a store's word
            // of its skip is published while it recovers, before this command is subscribed again.
            guard let status = nodeStatus(endpoint: topology.dispatcher.intake, security: security, timeoutMilliseconds: 5000) else {
                printError("the stores are current through seq \(last), but the dispatcher did not say within 5 s whether it was quarantined")
                throw ExitCode(2)
            }
            if let entry = status.quarantined?.first(where: { $0.seq == last }) {
                throw quarantined(last, entry.reason)
            }
            // The stores' state is now current through this seq: `zflux state` reports it as its version.
            emitLine(String(last))
        case .refused(let store, let reason, let quarantine):
            if quarantine { throw quarantined(last, reason) }
            printError("store \(store) refused seq \(last): \(reason)")
            throw ExitCode(1)
        case .timedOut(let stores):
            printError("seq \(last) was acknowledged, but store \(stores.joined(separator: ", ")) did not apply it within \(timeout) s")
            throw ExitCode(2)
        }
    }

    /// A quarantined action was acknowledged, but no store applies it: exit 4, apart from a refusal
    /// (1), since what it asks is not another input but a fixed reducer and a release.
    private func quarantined(_ seq: UInt64, _ reason: String) -> ExitCode {
        let program = RootCommand.binaryName
        printError(
            "seq \(seq) (\(app).\(action)) was not applied: it was quarantined (\(reason)), and every store skips it. `\(program) quarantine list` shows it; once the reducer is fixed, `\(program) quarantine release \(seq)` sequences it again"
        )
        return ExitCode(4)
    }
}

struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Print a store's current state as one JSON line: {\"version\": N, \"state\": {...}}.",
        discussion: """
            With --at SEQ, the store's state as of that seq instead (time travel): rebuilt here from the \
            newest snapshot at or below SEQ and the journal, with the store's reducer and no effects. The \
            running cluster is not asked or disturbed; the journal must be on this host. In a dispatcher \
            pair's run directory, name a member's journal with --journal (RUN_DIR/journal/d1).

            When no cluster runs in the run directory (stopped), or the store does not answer, the state is \
            read from the journal and snapshots on this host instead, as `--at` reads them at the journal's \
            head: the line then carries "live": false, and stderr says so (exit 2 when the store did not answer).
            """)

    @Argument(help: "The store's name.") var store: String
    @Option(help: "Seconds to wait for the store's answer.") var timeout: Double = 5
    @Option(help: ArgumentHelp("The state as of this seq (from the journal), not the current one.", valueName: "seq")) var at: UInt64?
    @Option(help: ArgumentHelp("With --at: the journal directory to read. Default: the cluster's.", valueName: "dir")) var journal: String?
    @OptionGroup var runDir: RunDirOptions

    func validate() throws {
        if journal != nil && at == nil { throw ValidationError("--journal goes with --at: the current state is the running store's") }
    }

    func run() throws {
        if let at {
            emitLine(try TimeMachine(runDir: runDir, journal: journal).stateLine(store, at: at))
            return
        }
        let topology: Topology, security: Security.Settings?
        do {
            (topology, security) = try runDir.cluster()
        } catch {
            // No cluster runs here: a stopped one's last state is read from its journal and snapshots.
            guard runDir.configPath == nil, let disk = try? stateFromDisk() else { throw error }
            printError("no cluster runs in \(runDir.path): the state of '\(store)' through seq \(disk.head), read from its journal on disk, not live")
            emitLine(disk.line)
            return
        }
        let endpoints = try topology.requireStore(named: store)
        let app = ZFluxCLI.Host.current.client(endpoints.app)
        guard
            let reply = try requestReply(
                endpoint: endpoints.snapshot, security: security, request: Message(header: Header(kind: .snapshotRequest)),
                expecting: .snapshot, timeoutMilliseconds: Int(timeout * 1000))
        else {
            // Still exit 2 (the store did not answer), with what the disk says, marked as such.
            if let disk = try? stateFromDisk() {
                printError(
                    "no answer from store '\(store)' at \(endpoints.snapshot) within \(timeout) s: its state through seq \(disk.head), read from the journal on disk, not live"
                )
                emitLine(disk.line)
            } else {
                printError("no answer from store '\(store)' at \(endpoints.snapshot) within \(timeout) s")
            }
            throw ExitCode(2)
        }
        let state = String(decoding: try app.stateJSON(fromWire: reply.payload), as: UTF8.self)
        // The state is current through `ref` (a store publishes only when its state changes).
        emitLine("{\"version\":\(max(reply.header.seq, reply.header.ref)),\"state\":\(state)}")
    }

    /// The store's state as the journal and snapshots here leave it, as `--at` rebuilds it at the
    /// journal's head, marked `"live":false`; and that head.
    private func stateFromDisk() throws -> (line: String, head: UInt64) {
        let machine = try TimeMachine(runDir: runDir, journal: journal)
        let head = machine.rewind.head
        let line = try machine.stateLine(store, at: head)
        guard line.hasSuffix("}") else { throw CLIError("unexpected state line") }
        return (line.dropLast() + ",\"live\":false}", head)
    }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Print every node's status as JSON lines.")

    @Option(
        help: ArgumentHelp(
            "Ask the node whose status endpoint this is (a dispatcher's intake, a store's snapshot endpoint); repeat for more. Default: every node of the cluster.",
            valueName: "endpoint"))
    var endpoint: [String] = []
    @OptionGroup var runDir: RunDirOptions

    func run() throws {
        var failed = false
        for target in try statusTargets(endpoints: endpoint, runDir: runDir) {
            let (name, endpoint) = (target.name, target.endpoint)
            if let reply = try requestReply(
                endpoint: endpoint, security: target.security, request: Message(header: Header(kind: .statusRequest)),
                expecting: .status, timeoutMilliseconds: 2000)
            {
                emitLine(String(decoding: reply.payload, as: UTF8.self))
            } else {
                printError("\(name) at \(endpoint) did not answer")
                failed = true
            }
        }
        if failed { throw ExitCode(2) }
    }
}

struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "List the apps this binary can host and how to dispatch their actions.",
        discussion: """
            Generated from the app catalog: every app with each action, its payload fields and an example to pass \
            to `zflux dispatch APP TYPE 'ARGS'`. Actions marked "from an effect" are what the app's effects send \
            back (answers to requests); the intake refuses them from clients, taking them from the stores' effects only \
            (over tcp without [security] it cannot tell the two apart, and takes both).
            """)

    @Flag(help: "One JSON document: [{name, summary, reads, actions: [{type, fields: [{name, type}], summary, origin, example}]}].")
    var json = false

    func run() throws {
        let apps = ZFluxCLI.Host.current.apps.map { $0.describe() }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            emitLine(String(decoding: try encoder.encode(apps), as: UTF8.self))
            return
        }
        var lines: [String] = []
        for app in apps {
            let reads = app.reads.isEmpty ? "" : "  (reads \(app.reads.joined(separator: ", ")))"
            lines.append("\(app.name): \(app.summary)\(reads)")
            for action in app.actions {
                let fields = action.fields.map { "\($0.name): \($0.type)" }.joined(separator: ", ")
                let arguments = action.fields.isEmpty ? "" : " '\(action.example)'"
                let origin = action.origin == .effect ? "  [from an effect]" : ""
                lines.append("  \(action.type)(\(fields))\(origin)")
                if action.origin == .effect {
                    // Refused from a client: no command line to copy.
                    lines.append("      \(action.summary); sent by the app's effects only (the intake refuses it from clients)")
                } else {
                    lines.append("      \(action.summary); e.g. \(RootCommand.binaryName) dispatch \(app.name) \(action.type)\(arguments)")
                }
            }
        }
        emitLine(lines.joined(separator: "\n"))
    }
}

extension Topology {
    /// How long a dispatch waits for its answer unless told otherwise: 5 s, or with a dispatcher pair
    /// three leases and 2 s, since a failover takes about a lease and the default waits it out.
    var defaultDispatchTimeoutSeconds: Double { ha.map { 3 * Double($0.leaseMilliseconds) / 1000 + 2 } ?? 5 }
}
