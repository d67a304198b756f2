import ArgumentParser
import Devtools
import FluxCore
import Foundation
import NodeSupport

/// What time travel needs of a cluster: its journal and snapshots (read-only) and its stores' apps.
struct TimeMachine {
    let rewind: Rewind
    /// The stores whose apps this binary hosts: their reducers rebuild past states.
    let stores: [Rewind.StoreSpec]
    /// Stores of apps this binary does not host (their actions are still read, generically).
    let unhosted: [Topology.StoreEndpoints]
    /// What reads each app's actions: the hosted apps, and the others by name.
    let readers: [any AnyApp]

    /// The cluster of `runDir` (cluster.json or --config); `journal` overrides where its journal is.
    /// Without it, a dispatcher pair's run directory, whose journals are its members', is refused as the
    /// journal commands refuse it; `pairRemedy` says what to run instead (default: name one with --journal).
    init(runDir: RunDirOptions, journal: String? = nil, pairRemedy: ((String) -> String)? = nil) throws {
        // The journal and snapshots outlive the cluster: a stopped one's stores are its last run's.
        let topology = try runDir.recordedTopology()
        guard let directory = journal ?? topology.durability?.journalDirectory else {
            throw CLIError("the cluster keeps no journal (it runs in memory): time travel needs one")
        }
        if journal == nil { try refusePairJournal(directory, remedy: pairRemedy) }
        let host = ZFluxCLI.Host.current
        stores = topology.stores.compactMap { store in host.app(named: store.app).map { Rewind.StoreSpec(name: store.name, app: $0) } }
        unhosted = topology.stores.filter { host.app(named: $0.app) == nil }
        readers = host.apps + Set(unhosted.map(\.app)).sorted().map { UnhostedApp(name: $0) }
        rewind = try Rewind(
            journalDirectory: directory, snapshotDirectory: topology.durability?.snapshotDirectory,
            format: Settings.Cluster.codec.value(topology.codec))
    }

    func store(_ name: String) throws -> Rewind.StoreSpec {
        if let store = unhosted.first(where: { $0.name == name }) {
            throw CLIError(
                "a past state of '\(name)' is rebuilt by its app's reducer, and \(RootCommand.binaryName) does not host app '\(store.app)': use the binary that runs the cluster"
            )
        }
        guard let store = stores.first(where: { $0.name == name }) else {
            throw Topology.UnknownStore(name: name, known: stores.map(\.name))
        }
        return store
    }

    /// `{"version": SEQ, "state": …}` of `store` as of `seq`.
    func stateLine(_ name: String, at seq: UInt64) throws -> String {
        let spec = try store(name)
        guard let replica = try rewind.replicas([spec], at: seq).first else { throw CLIError("no store '\(name)'") }
        return "{\"version\":\(seq),\"state\":\(String(decoding: try replica.stateJSON(), as: UTF8.self))}"
    }
}

extension JournalCommand {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a stretch of history as one self-contained session file, to send as a bug report.",
            discussion: """
                The file holds every store's state just before --from, the actions --from…--to with their \
                seqs, apps, clients and times, and the state each action left in the stores it changed (JSON, \
                with the exact wire bytes beside it). `zflux journal import` makes a run directory from it \
                whose cluster reproduces those states bit for bit; FluxClusterTesting's `Session.verify(apps:)` \
                turns it into a regression test (docs/GUIDE.md, "Debugging with time travel").

                Reads the journal and the snapshots read-only: a running cluster is not disturbed. The \
                binary must host every store's app (their reducers rebuild the states); a binary that does \
                not, such as the stock zflux for a cluster of your own apps, refuses and names the stores.
                """)
        @OptionGroup var runDir: RunDirOptions
        @Option(help: ArgumentHelp("The journal directory. Default: the cluster's.", valueName: "dir")) var journal: String?
        @Option(help: "The first seq to record.") var from: UInt64 = 1
        @Option(help: "The last seq to record (default: the journal's head).") var to: UInt64?
        @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the session (- for stdout).", valueName: "file")) var output: String

        func run() throws {
            let machine = try TimeMachine(runDir: runDir, journal: journal)
            // A session without some of the cluster's stores would pass for the whole story: refused.
            if !machine.unhosted.isEmpty {
                let stores = machine.unhosted.map { "'\($0.name)' (app '\($0.app)')" }.joined(separator: ", ")
                throw CLIError(
                    "\(RootCommand.binaryName) does not host the app of store\(machine.unhosted.count == 1 ? "" : "s") \(stores), and a session holds every store's states, rebuilt by its app's reducer: run `journal export` with the binary that runs the cluster"
                )
            }
            let last = to ?? machine.rewind.head
            func write(into sink: ([UInt8]) throws -> Void) throws -> (actions: Int, stores: Int) {
                try machine.rewind.writeSession(
                    machine.stores, from: from, to: last, readers: machine.readers,
                    progress: { seq in
                        printError("export: at seq \(seq) of \(last)")
                    }, into: sink)
            }
            // Streamed as the journal is read: the file is never held whole, whatever the states' size.
            if output == "-" {
                _ = try write { StandardOutput.write(bytes: $0) }
                return
            }
            // Written whole or not at all: a half-written report is worse than none. The parts go to a
            // file beside the output, renamed over it at the end.
            let partial = output + ".partial-\(getpid())"
            guard FileManager.default.createFile(atPath: partial, contents: nil), let file = FileHandle(forWritingAtPath: partial) else {
                throw CLIError("cannot write \(partial)")
            }
            var bytes = 0
            let written: (actions: Int, stores: Int)
            do {
                written = try write { part in
                    try file.write(contentsOf: part)
                    bytes += part.count
                }
                try file.synchronize()
                try file.close()
                guard rename(partial, output) == 0 else { throw CLIError("cannot move \(partial) to \(output): \(String(cString: strerror(errno)))") }
            } catch {
                try? file.close()
                try? FileManager.default.removeItem(atPath: partial)
                throw error
            }
            printError(
                "exported \(written.actions) actions (seqs \(from)…\(last)) and \(written.stores) stores' states in \(output) (\(bytes) bytes)")
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new run directory from a session file, whose cluster reproduces the session's states.",
            discussion: """
                Writes RUN_DIR/cluster.toml (the session's stores), a journal of the session's actions and \
                each store's snapshot as of just before them. Then start it:

                  zflux cluster up --run-dir DIR --config DIR/cluster.toml

                and the stores catch up to the session's last seq with exactly the recorded states. The \
                cluster gets a history of its own, so it is never taken for the one recorded.
                """)
        @Argument(help: "The session file (from `zflux journal export`).") var file: String
        @Option(name: .customLong("run-dir"), help: ArgumentHelp("The new run directory (missing or empty).", valueName: "dir"))
        var runDir: String

        func run() throws {
            let session = try Session.load(file)
            let host = ZFluxCLI.Host.current
            for store in session.stores { _ = try host.require(store.app) }
            try session.materialize(runDirectory: runDir, apps: host.apps)
            emitLine(
                "imported seqs \(session.from)…\(session.to) of \(session.stores.map(\.name).joined(separator: ", ")) into \(runDir); start it with: \(RootCommand.binaryName) cluster up --run-dir \(runDir) --config \(runDir)/cluster.toml"
            )
        }
    }
}
