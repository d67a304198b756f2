import ArgumentParser
import Dispatcher
import FluxCore
import Foundation
import NodeSupport

extension JournalCommand {
    struct Fill: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a journal of many copies of one action, as a dispatcher would have: to measure a start or a failover with it.",
            discussion: """
                Writes --records copies of one action (--app, --action, --payload, as `zflux dispatch` takes \
                them) at seqs 1…N, one client's dispatches, at the speed of the disk: into --journal DIR, or \
                into the journal of the cluster whose topology --run-dir holds (each member's, for a \
                dispatcher pair: the same records under one cluster id, as a standby holds them once it has \
                followed its leader). The records go in as a running dispatcher writes them: segments of the \
                cluster's segment_mb, an index file for each segment rolled past, and a checkpoint after each \
                roll (at the end of the batch of 4,096 records that rolled, as a dispatcher writes one at \
                its first commit after a roll) and every million records. Each journal directory must be \
                missing or empty. Then start \
                the cluster on it. A line on stderr says how far it has come.

                  zflux journal fill --records 10000000 --app counter --action incrementTapped --run-dir DIR
                """)

        @Option(help: "How many actions to journal.") var records: UInt64
        @Option(help: ArgumentHelp("The app of the action.", valueName: "app")) var app: String
        @Option(help: ArgumentHelp("The action's name.", valueName: "type")) var action: String
        @Option(help: ArgumentHelp("The action's arguments as a JSON object (default: {}).", valueName: "json")) var payload: String?
        @Option(help: ArgumentHelp("The journal directory to fill. Default: the cluster's, or each pair member's.", valueName: "dir"))
        var journal: String?
        @OptionGroup var runDir: RunDirOptions

        func validate() throws {
            guard records >= 1 else { throw ValidationError("--records must be at least 1") }
        }

        func run() throws {
            // A config named is read, or its error stops the fill; a run directory's recorded topology
            // (of a cluster running or stopped) is read when there is one.
            let recorded = ["cluster.json", "cluster.last.json"].contains { FileManager.default.fileExists(atPath: runDir.path + "/" + $0) }
            let topology = runDir.configPath != nil || recorded ? try runDir.recordedTopology() : nil
            let directories =
                journal.map { [$0] } ?? topology?.ha?.dispatchers.map(\.journalDirectory)
                ?? [topology?.durability?.journalDirectory ?? runDir.path + "/journal"]
            let host = ZFluxCLI.Host.current.client(app)
            let bytes: [UInt8]
            do {
                bytes = try host.wirePayload(
                    type: action, argumentsJSON: Array((payload ?? "").utf8), format: Settings.Cluster.codec.value(topology?.codec))
            } catch {
                throw CLIError("\(app) \(action): \(error.reason)")
            }
            let started = MonotonicClock.nowMilliseconds()
            var reported = started
            let filled = try Journal.fill(
                directories: directories, count: records, topic: Array(app.utf8), actionType: action, payload: bytes,
                segmentBytes: topology?.durability?.segmentBytes ?? Defaults.segmentBytes
            ) { head in
                let now = MonotonicClock.nowMilliseconds()
                guard now - reported >= 1000 || head == records else { return }
                reported = now
                let rate = Double(head) / max(Double(now - started) / 1000, 0.001)
                StandardOutput.error(String(format: "journaled %llu of %llu actions (%.0f/s)\n", head, records, rate))
            }
            let seconds = Double(MonotonicClock.nowMilliseconds() - started) / 1000
            for directory in directories {
                emitLine(
                    "\(directory): \(filled.lastSeq) actions at seqs 1…\(filled.lastSeq) in \(filled.segments) segments, history \(filled.history), "
                        + (filled.checkpoints.isEmpty
                            ? "no checkpoint (no segment rolled)"
                            : "checkpoints at seq \(filled.checkpoints.map(String.init).joined(separator: ", "))"))
            }
            emitLine(String(format: "written in %.1f s", seconds))
        }
    }
}
