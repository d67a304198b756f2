import ArgumentParser
import Dispatcher
import FluxCore
import Foundation
import NodeSupport

struct QuarantineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "List the actions quarantined because they crashed a store's reducer, or release one after a fix.",
        discussion: """
            A store that dies twice in a row applying the same action asks the dispatcher to quarantine it. \
            Every store then skips that action (its version advances, its state does not change), so one \
            action that makes a reducer trap cannot keep its store down. The action stays in the journal. Once \
            the reducer is fixed and the stores run the fixed build, `release SEQ` sequences it again as a new \
            action, which every store applies.
              zflux quarantine list
              zflux quarantine release 4812
            """,
        subcommands: [List.self, Release.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The quarantined actions, as the dispatcher keeps them, each with its payload as JSON (read from the journal on this host).")
        @Flag(help: "One JSON document: [{seq, app, action_type, reason, released_as, payload}].") var json = false
        @OptionGroup var runDir: RunDirOptions

        func run() throws {
            let entries = try dispatcherStatus(runDir).quarantined ?? []
            let payloads = QuarantineCommand.payloads(of: entries.map(\.seq), runDir: runDir)
            if json {
                // Each entry as the dispatcher keeps it, and its payload from the journal (null when
                // this host holds no journal).
                let encoder = JSONEncoder()
                encoder.keyEncodingStrategy = .convertToSnakeCase
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let objects = try entries.map { entry in
                    String(decoding: try encoder.encode(entry), as: UTF8.self).dropLast() + ",\"payload\":\(payloads[entry.seq] ?? "null")}"
                }
                emitLine("[" + objects.joined(separator: ",") + "]")
                return
            }
            guard !entries.isEmpty else {
                emitLine("no action is quarantined")
                return
            }
            emitLine(
                "seq".padding(toLength: 12, withPad: " ", startingAt: 0) + "action".padding(toLength: 32, withPad: " ", startingAt: 0)
                    + "released as  why")
            for entry in entries {
                let action = "\(entry.app).\(entry.actionType)"
                emitLine(
                    String(entry.seq).padding(toLength: 12, withPad: " ", startingAt: 0) + action.padding(toLength: 32, withPad: " ", startingAt: 0)
                        + (entry.releasedAs.map(String.init) ?? "-").padding(toLength: 13, withPad: " ", startingAt: 0) + entry.reason)
                if let payload = payloads[entry.seq] { emitLine("            payload: \(payload)") }
            }
        }
    }

    struct Release: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sequence a quarantined action again, as a new action (after its reducer was fixed); prints its new seq.",
            discussion: """
                Run it only once the stores run the fixed build: into the same reducer, the action crashes each of its \
                stores twice more (restarts that count toward [restart]'s intensity) and is quarantined again.
                """)
        @Argument(help: "The seq the action was quarantined at (zflux quarantine list).") var seq: UInt64
        @Option(help: ArgumentHelp("How long to wait for the dispatcher's answer.", valueName: "seconds")) var timeout: Double = 10
        @OptionGroup var runDir: RunDirOptions

        func validate() throws {
            guard seq >= 1 else { throw ValidationError("seq starts at 1") }
            guard timeout.isFinite && timeout > 0 && timeout <= 86_400 else {
                throw ValidationError("--timeout must be more than 0 and at most 86400 seconds")
            }
        }

        func run() throws {
            let (topology, security) = try runDir.cluster()
            // The nodes' credential, read as a node reads it: the run directory's token, or under CURVE
            // the server's key pair, which only the nodes' hosts hold.
            var nodeSecurity = security
            if let keys = topology.security {
                do {
                    nodeSecurity?.server = try KeyPair.load(keys.serverKeyFile, publicHalf: keys.serverPublicKey)
                } catch {
                    printError(
                        "releasing a quarantined action takes the nodes' credential, derived from the server key \(keys.serverKeyFile), which this host cannot read (\(error)): run it on a node's host"
                    )
                    throw ExitCode(1)
                }
            }
            let token = try runDir.effectToken(topology, security: nodeSecurity) ?? 0
            let connection = try DispatchConnection(intake: topology.dispatcher.intake, security: security)
            defer { connection.close() }
            connection.timeout = .milliseconds(Int(timeout * 1000))
            switch try connection.release(quarantined: seq, token: token) {
            case .acknowledged(let again):
                emitLine(String(again))
            case .rejected(let reason):
                printError("rejected: \(reason)")
                throw ExitCode(1)
            case .timedOut:
                printError("no answer from the dispatcher at \(topology.dispatcher.intake) within \(timeout) s; is the cluster up?")
                throw ExitCode(2)
            }
        }
    }
}

extension QuarantineCommand {
    /// The payloads of the actions at `seqs` as JSON, read from the cluster's journal on this host (a
    /// pair's: its members', the first that holds the seq); none for a seq no journal here holds.
    static func payloads(of seqs: [UInt64], runDir: RunDirOptions) -> [UInt64: String] {
        guard !seqs.isEmpty else { return [:] }
        let topology = try? Topology.load(runDirectory: runDir.path)
        let top = topology?.durability?.journalDirectory ?? runDir.path + "/journal"
        let members = ((try? FileManager.default.contentsOfDirectory(atPath: top)) ?? []).sorted().map { top + "/" + $0 }
        var found: [UInt64: String] = [:]
        for directory in [top] + members where found.count < seqs.count {
            guard let journal = try? Journal(directory: directory, repair: false) else { continue }
            for seq in seqs where found[seq] == nil {
                try? journal.forEach(from: seq, through: seq) { message in
                    guard message.header.seq == seq else { return }
                    let json = readablePayload(message, .current)
                    found[seq] =
                        (try? JSONSerialization.jsonObject(with: Data(json), options: .fragmentsAllowed)) != nil
                        ? String(decoding: json, as: UTF8.self) : nil
                }
            }
        }
        return found
    }
}

/// The dispatcher's STATUS, asked on its intake (what `quarantine list` and `schedules` read); exit 2
/// when it does not answer within 5 s.
func dispatcherStatus(_ runDir: RunDirOptions) throws -> NodeStatus {
    let (topology, security) = try runDir.cluster()
    guard
        let reply = try requestReply(
            endpoint: topology.dispatcher.intake, security: security, request: Message(header: Header(kind: .statusRequest)),
            expecting: .status, timeoutMilliseconds: 5000)
    else {
        printError("no answer from the dispatcher at \(topology.dispatcher.intake) within 5 s; is the cluster up?")
        throw ExitCode(2)
    }
    return try NodeStatus.decode(reply.payload)
}

/// `value` as one line of JSON with snake_case keys, sorted, as the STATUS payload writes them.
func emitSnakeCaseJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    emitLine(String(decoding: try encoder.encode(value), as: UTF8.self))
}
