import ArgumentParser
import Devtools
import Dispatcher
import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import StoreNode
import ViewNode

struct JournalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal",
        abstract: "Read the dispatcher's journal: verify it, dump or tail it, replay it to any seq, export a session of it; import one; compact it.",
        subcommands: [Verify.self, Dump.self, Tail.self, Replay.self, Export.self, Import.self, Compact.self, Truncate.self, Bench.self, Fill.self])

    struct Location: ParsableArguments {
        @Option(help: ArgumentHelp("The journal directory. Default: the cluster's (RUN_DIR/journal).", valueName: "dir"))
        var journal: String?
        @OptionGroup var runDir: RunDirOptions

        var directory: String {
            if let journal { return journal }
            if let topology = try? Topology.load(runDirectory: runDir.path), let durability = topology.durability {
                return durability.journalDirectory
            }
            return runDir.path + "/journal"
        }

        /// Opens the journal read-only: nothing on disk changes, a torn tail is only reported.
        func open() throws -> Journal {
            try Journal(directory: try existingDirectory(), repair: false)
        }

        /// The journal directory, once it exists and is a journal of its own (not a pair's run directory).
        func existingDirectory() throws -> String {
            let dir = directory
            guard FileManager.default.fileExists(atPath: dir) else { throw CLIError("no journal at \(dir)") }
            try refusePairDirectory(dir)
            return dir
        }

        /// Unless `--journal` names one, a pair's run directory is refused (``refusePairJournal(_:remedy:)``).
        func refusePairDirectory(_ dir: String) throws {
            guard journal == nil else { return }
            try refusePairJournal(dir)
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Check every record and index file; report a torn tail, a corrupt record or a bad index (exit 1) without changing anything.")
        @OptionGroup var location: Location

        func run() throws {
            let journal = try location.open()
            let recovery = journal.recovery
            emitLine(
                "\(location.directory): \(recovery.records) records in \(recovery.segments) segments, seqs \(journal.firstSeq)…\(recovery.lastSeq), \(journal.sizeInBytes) bytes"
            )
            if recovery.trimmedBytes > 0 {
                printError(
                    "torn tail: \(recovery.trimmedBytes) bytes after seq \(recovery.lastSeq) (\(recovery.trimmedReason ?? "")); the dispatcher trims it on start"
                )
                throw ExitCode(1)
            }
            if !recovery.badIndexFiles.isEmpty {
                printError(
                    "index files that disagree with their segments (the dispatcher ignores them and writes them again): \(recovery.badIndexFiles.joined(separator: ", "))"
                )
                throw ExitCode(1)
            }
            emitLine("ok")
        }
    }

    struct Truncate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give up every action from a seq on, after a corrupt record that cannot be restored.",
            discussion: """
                A dispatcher never trims a damaged record with intact records after it (that is corruption, \
                not a torn tail: the records may have been acknowledged); it refuses to start and names the \
                seq. Restore the segment from a backup, or from the other member of a pair, if you can. If you \
                cannot, this command cuts the journal before --from-seq. Nothing is deleted: the cut bytes go \
                to SEGMENT.set-aside-from-SEQ and later segments are renamed SEGMENT.set-aside. Stores that \
                applied the cut actions rebuild from the journal when the dispatcher is back. The dispatcher \
                must be stopped (the command takes the journal's lock).
                """)
        @OptionGroup var location: Location
        @Option(help: ArgumentHelp("The first seq to give up (the damaged one, as the dispatcher's refusal names it).", valueName: "seq"))
        var fromSeq: UInt64

        func run() throws {
            let done = try Journal.truncate(directory: try location.existingDirectory(), fromSeq: fromSeq)
            emitLine("\(location.directory): now ends at seq \(done.lastSeq)")
            for file in done.setAside { emitLine("set aside: \(file)") }
            if !done.setAside.isEmpty { emitLine("\(done.bytesSetAside) bytes set aside; nothing was deleted") }
        }
    }

    struct Compact: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the journal's oldest segments that every store's snapshot already covers.",
            discussion: """
                Removes whole segments whose actions all lie below the oldest store snapshot, so that every \
                store can still start from its snapshot and catch up from the journal. The newest segment \
                always stays. The dispatcher must be stopped (the command takes the journal's lock).

                The stores are the running cluster's, or once it stopped the last run's (cluster.last.json in \
                the run directory), or --config's. Snapshots are read from the cluster's snapshot directory. \
                A store with no snapshot there (a \
                new store, or one on another host) needs the whole journal, and the command refuses; pass \
                --keep-from SEQ to say yourself what to keep, and --force to keep less than a snapshot found \
                here needs. A store left behind the journal says so and can be given another store's \
                snapshot (docs/OPERATIONS.md, "A journal that starts above 1"). Whatever it is told, it keeps \
                what schedules still pending (`zflux schedules`) need: the records after the dispatcher's \
                checkpoint of them, or, without one, the records that requested them.
                """)
        @OptionGroup var location: Location
        @Option(help: ArgumentHelp("Keep every action from this seq on (default: the oldest store snapshot's version + 1).", valueName: "seq"))
        var keepFrom: UInt64?
        @Flag(help: "Keep less than the snapshots found here need.") var force = false
        @Flag(help: "Say what would be removed, and remove nothing.") var dryRun = false

        func run() throws {
            let directory = try location.existingDirectory()
            // A running dispatcher first: nothing else matters while it holds the journal.
            _ = try Journal.compact(directory: directory, keepFrom: 0, dryRun: true)
            // What each store's snapshot needs: everything after its version.
            var needs: [(store: String, from: UInt64?)] = []
            if let topology = try? location.runDir.recordedTopology(), let snapshots = topology.durability?.snapshotDirectory {
                for store in topology.stores {
                    let contents = try? SnapshotFile.read(snapshots + "/" + store.name + ".snapshot")
                    needs.append((store.name, contents.map { $0.version + 1 }))
                }
            }
            let missing = needs.filter { $0.from == nil }.map(\.store)
            let safe = needs.compactMap(\.from).min()
            var keep: UInt64
            if let keepFrom {
                if !missing.isEmpty && !force {
                    throw CLIError(
                        "no snapshot of \(missing.joined(separator: ", ")) here: it needs the whole journal; add --force to keep only from seq \(keepFrom)"
                    )
                }
                if let safe, keepFrom > safe, !force {
                    let behind = needs.filter { ($0.from ?? 0) < keepFrom }.map(\.store).joined(separator: ", ")
                    throw CLIError("the snapshot of \(behind) needs the actions from seq \(safe) on; add --force to keep only from seq \(keepFrom)")
                }
                keep = keepFrom
            } else {
                guard !needs.isEmpty else {
                    throw CLIError(
                        "no cluster.json nor cluster.last.json in \(location.runDir.path) to find the stores' snapshots: pass --config FILE, or --keep-from SEQ"
                    )
                }
                guard missing.isEmpty, let safe else {
                    throw CLIError(
                        "no snapshot of \(missing.joined(separator: ", ")) here: it needs the whole journal (a store writes one every snapshot_every actions and when it stops); or pass --keep-from SEQ --force"
                    )
                }
                keep = safe
            }
            // Pending schedules live in the dispatcher's checkpoint, or, without one, in the journal alone.
            // With a checkpoint, the records after it stay (a start reads it and them); without, the
            // records that made the pending schedules stay, whatever the snapshots allow, or the
            // schedules would be lost when the dispatcher next reads its journal.
            let (schedules, checkpoint) = try DispatcherBoot.schedules(
                of: try location.open(), logger: Logger(label: "zflux.journal") { _ in SwiftLogNoOpLogHandler() })
            if let checkpoint {
                if checkpoint.seq + 1 < keep {
                    emitLine(
                        "keeping from seq \(checkpoint.seq + 1) instead of \(keep): the dispatcher's checkpoint at seq \(checkpoint.seq) holds the schedule book (\(schedules.count) pending), and a start reads the journal after it"
                    )
                    keep = checkpoint.seq + 1
                }
            } else if let oldest = schedules.pending().min(by: { $0.requestSeq < $1.requestSeq }), oldest.requestSeq < keep {
                emitLine(
                    "keeping from seq \(oldest.requestSeq) instead of \(keep): schedule '\(oldest.id)' of \(oldest.app) (\(schedules.count) pending) was requested there and has not fired"
                )
                keep = oldest.requestSeq
            }
            let result: Journal.Compaction
            result = try Journal.compact(directory: directory, keepFrom: keep, dryRun: dryRun)
            guard let first = result.removed.first, let last = result.removed.last else {
                emitLine("nothing to remove: no segment but the newest lies wholly below seq \(keep)")
                return
            }
            let bytes = result.removed.reduce(0) { $0 + $1.bytes }
            emitLine(
                "\(dryRun ? "would remove" : "removed") \(result.removed.count) segment\(result.removed.count == 1 ? "" : "s") (seqs \(first.first)…\(last.last), \(bytes) bytes); the journal \(dryRun ? "would start" : "now starts") at seq \(result.firstSeq)"
            )
        }
    }

    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print records as JSON lines: seq, time, app, type, client, client_seq, payload (and scheduled, for a schedule's action; quarantined {reason, released_as}, for a quarantined action; release_of, for the release of one)."
        )
        @OptionGroup var location: Location
        @Option(help: "First seq to print (default: the journal's first; one it no longer holds is an error).") var from: UInt64?
        @Option(help: "Last seq to print.") var to: UInt64?

        func run() throws {
            let journal = try location.open()
            // A quarantined action, and its release (sequenced again as a new action), say so.
            let quarantine = try journal.quarantine()
            let quarantined = Dictionary(quarantine.map { ($0.seq, $0) }) { first, _ in first }
            let releases = Dictionary(quarantine.compactMap { entry in entry.releasedAs.map { ($0, entry.seq) } }) { first, _ in first }
            try journal.forEach(from: from, through: to ?? .max) { message in
                var line = jsonLine(message, .current)
                let seq = message.header.seq
                var marks: [String] = []
                if let entry = quarantined[seq] {
                    marks.append("\"quarantined\":{\"reason\":\(quotedJSON(entry.reason))\(entry.releasedAs.map { ",\"released_as\":\($0)" } ?? "")}")
                }
                if let original = releases[seq] { marks.append("\"release_of\":\(original)") }
                if !marks.isEmpty, line.hasSuffix("}") { line = line.dropLast() + "," + marks.joined(separator: ",") + "}" }
                emitLine(line)
            }
        }
    }

    struct Tail: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the last records as JSON lines; with --follow, keep printing new ones.")
        @OptionGroup var location: Location
        @Option(name: [.customShort("n"), .long], help: "How many records.") var lines: UInt64 = 10
        @Flag(help: "Keep watching for new records until interrupted.") var follow = false

        func run() throws {
            var journal = try location.open()
            if follow { StandardOutput.endWhenReaderGoes() }
            var next = max(journal.lastSeq > lines ? journal.lastSeq - lines + 1 : 1, journal.firstSeq)
            while true {
                try journal.forEach(from: next) { message in
                    emitLine(jsonLine(message, .current))
                    next = message.header.seq + 1
                }
                guard follow else { return }
                // Re-reading the files is how a second process sees the dispatcher's appends.
                usleep(200_000)
                journal = try location.open()
            }
        }
    }

    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Time travel: a store's state after the journal's actions up to a seq.",
            discussion: "Applies the journal's actions 1…SEQ with the store's reducer (no effects run) and prints {\"version\": SEQ, \"state\": …}.")
        @OptionGroup var location: Location
        @Option(help: "The store (or app) whose state to rebuild.") var store: String
        @Option(help: "The last seq to apply (default: all).") var to: UInt64?

        func run() throws {
            let topology = try? Topology.load(runDirectory: location.runDir.path)
            let appName = topology?.store(named: store)?.app ?? store
            if let topology, topology.store(named: store) == nil, ZFluxCLI.Host.current.app(named: store) == nil {
                throw Topology.UnknownStore(name: store, known: topology.stores.map(\.name))
            }
            guard let app = ZFluxCLI.Host.current.app(named: appName) else {
                throw CLIError(
                    "a past state of '\(store)' is rebuilt by its app's reducer, and \(RootCommand.binaryName) does not host app '\(appName)': use the binary that runs the cluster"
                )
            }
            try location.refusePairDirectory(location.directory)
            let rewind = try Rewind(journalDirectory: location.directory, snapshotDirectory: nil)
            let last = min(to ?? rewind.head, rewind.head)
            guard let replica = try rewind.replicas([.init(name: store, app: app)], at: last).first else { return }
            emitLine("{\"version\":\(last),\"state\":\(String(decoding: try replica.stateJSON(), as: UTF8.self))}")
        }
    }
}

/// A dispatcher pair's run directory keeps a journal per member (`journal/d1`, `journal/d2`) and none
/// at the top: reading the empty top would say "ok" of nothing, or rebuild the past of an empty history.
/// When `dir` holds no journal of its own but its members' do, the command stops and names them;
/// `remedy` says what to run instead, given the first member's journal (nil: name it with `--journal`).
func refusePairJournal(_ dir: String, remedy: ((String) -> String)? = nil) throws {
    // An empty segment at the top (a single dispatcher started there by mistake) is no journal either.
    guard recordSegments(in: dir).isEmpty else { return }
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    let members = entries.sorted().filter { !recordSegments(in: dir + "/" + $0).isEmpty }
    guard let first = members.first else { return }
    let list = members.joined(separator: ", ")
    guard let remedy else {
        throw CLIError(
            "\(dir) holds no journal of its own but one per member of a dispatcher pair (\(list)): "
                + "name one with --journal \(dir)/\(first); the members hold the same actions up to what each has")
    }
    throw CLIError(
        "\(dir) holds no journal of its own but one per member of a dispatcher pair (\(list)): "
            + remedy(dir + "/" + first) + "; the members hold the same actions up to what each has")
}

/// The journal segment files of `directory` that hold something (an empty journal's first segment
/// holds nothing, whoever made it): what `cluster up --ha` and the pair refusals count as a journal.
func recordSegments(in directory: String) -> [String] {
    let fm = FileManager.default
    return ((try? fm.contentsOfDirectory(atPath: directory)) ?? []).filter { name in
        name.hasSuffix(".journal") && ((try? fm.attributesOfItem(atPath: directory + "/" + name))?[.size] as? Int ?? 0) > 0
    }
}

/// One journal record as a JSON line.
func jsonLine(_ message: Message, _ host: ZFluxCLI.Host) -> String {
    let header = message.header
    let seconds = Double(header.timestamp) / 1e9
    let time = ISO8601DateFormatter.withFractionalSeconds.string(from: Date(timeIntervalSince1970: seconds))
    let json = readablePayload(message, host)
    let payload = (try? JSONSerialization.jsonObject(with: Data(json))) != nil ? String(decoding: json, as: UTF8.self) : "null"
    // App and type are a peer's bytes: quoted as JSON strings, never pasted in.
    var scheduled = ""
    if header.flags.contains(.scheduled) {
        // Fired by a schedule: when it was due, how late it fired, and the request that made it.
        let stamp = Stamp(header)
        let due = ISO8601DateFormatter.withFractionalSeconds.string(from: stamp.schedule?.due ?? Date(timeIntervalSince1970: 0))
        let late = stamp.lateness.components
        scheduled =
            ",\"scheduled\":{\"due\":\"\(due)\",\"late_ms\":\(late.seconds * 1000 + late.attoseconds / 1_000_000_000_000_000),\"request_seq\":\(header.clientSeq)}"
    }
    return "{\"seq\":\(header.seq),\"time\":\"\(time)\",\"app\":\(quotedJSON(message.topicString)),\"type\":\(quotedJSON(header.actionType)),"
        + "\"client\":\(header.clientID),\"client_seq\":\(header.clientSeq),\"payload\":\(payload)\(scheduled)}"
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withFractionalSeconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}

/// An action's payload as JSON: binary payloads are converted by their app, or read generically when
/// this binary does not host it; JSON is shown as it is.
func readablePayload(_ message: Message, _ host: ZFluxCLI.Host) -> [UInt8] {
    if Schedules.isScheduling(topic: message.topic) {
        // A schedule request or cancel, read as session files read it: a request's action as its app's.
        let app = (try? WireCodec().decode(ScheduleRequest.self, from: message.payload))?.app
        return Rewind.readablePayload(message, apps: app.map { [$0: host.client($0)] } ?? [:]).jsonBytes
    }
    guard WireCodec.isBinary(message.payload) else { return message.payload }
    guard let json = try? host.client(message.topicString).actionJSON(fromWire: message.payload) else {
        return Array("null".utf8)
    }
    return json
}
