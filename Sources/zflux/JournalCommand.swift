import ArgumentParser
import Dispatcher
import Examples
import FluxCore
import Foundation
import NodeSupport

struct JournalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal",
        abstract: "Read the dispatcher's journal: verify it, dump or tail it, replay it to any seq.",
        subcommands: [Verify.self, Dump.self, Tail.self, Replay.self, Bench.self])

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
            let dir = directory
            guard FileManager.default.fileExists(atPath: dir) else { throw CLIError("no journal at \(dir)") }
            do { return try Journal(directory: dir, repair: false) } catch { throw CLIError("\(error)") }
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every record; report a torn tail (exit 1) without changing anything.")
        @OptionGroup var location: Location

        func run() throws {
            let journal = try location.open()
            let recovery = journal.recovery
            emitLine(
                "\(location.directory): \(recovery.records) records in \(recovery.segments) segments, seqs 1…\(recovery.lastSeq), \(journal.sizeInBytes) bytes"
            )
            if recovery.trimmedBytes > 0 {
                printError(
                    "torn tail: \(recovery.trimmedBytes) bytes after seq \(recovery.lastSeq) (\(recovery.trimmedReason ?? "")); the dispatcher trims it on start"
                )
                throw ExitCode(1)
            }
            emitLine("ok")
        }
    }

    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print records as JSON lines: seq, time, app, type, client, client_seq, payload.")
        @OptionGroup var location: Location
        @Option(help: "First seq to print.") var from: UInt64 = 1
        @Option(help: "Last seq to print.") var to: UInt64?

        func run() throws {
            let journal = try location.open()
            try journal.forEach(from: from, through: to ?? .max) { emitLine(jsonLine($0)) }
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
            var next = journal.lastSeq > lines ? journal.lastSeq - lines + 1 : 1
            while true {
                try journal.forEach(from: next) { message in
                    emitLine(jsonLine(message))
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
            let appName = (try? Topology.load(runDirectory: location.runDir.path))?.store(named: store)?.app ?? store
            let app = try Catalog.require(appName)
            let journal = try location.open()
            let last = min(to ?? journal.lastSeq, journal.lastSeq)
            let runtime = app.makeRuntime { _, _, _ in }
            try journal.forEach(through: last) { message in
                _ = try? runtime.apply(
                    app: message.topicString, actionType: message.header.actionType,
                    payload: message.payload, stamp: Stamp(seq: message.header.seq, wallNanoseconds: message.header.timestamp),
                    runEffects: false)
            }
            let state = String(decoding: try app.stateJSON(fromWire: try runtime.encodedState()), as: UTF8.self)
            emitLine("{\"version\":\(last),\"state\":\(state)}")
        }
    }
}

/// One journal record as a JSON line.
func jsonLine(_ message: Message) -> String {
    let header = message.header
    let seconds = Double(header.timestamp) / 1e9
    let time = ISO8601DateFormatter.withFractionalSeconds.string(from: Date(timeIntervalSince1970: seconds))
    let json = readablePayload(message)
    let payload = (try? JSONSerialization.jsonObject(with: Data(json))) != nil ? String(decoding: json, as: UTF8.self) : "null"
    return "{\"seq\":\(header.seq),\"time\":\"\(time)\",\"app\":\"\(message.topicString)\",\"type\":\"\(header.actionType)\","
        + "\"client\":\(header.clientID),\"client_seq\":\(header.clientSeq),\"payload\":\(payload)}"
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withFractionalSeconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}

/// An action's payload as JSON: binary payloads are converted by their app; JSON is shown as it is.
func readablePayload(_ message: Message) -> [UInt8] {
    guard WireCodec.isBinary(message.payload) else { return message.payload }
    guard let app = Catalog.app(named: message.topicString),
        let json = try? app.actionJSON(fromWire: message.payload)
    else { return Array("null".utf8) }
    return json
}
