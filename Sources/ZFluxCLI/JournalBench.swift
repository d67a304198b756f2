import ArgumentParser
import Bench
import Foundation

extension JournalCommand {
    struct Bench: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure the journal's append rate under each fsync policy, and how fast a store catches up.",
            discussion: """
                Appends run in a temporary directory on the disk of --dir, committing every --batch records \
                (1: a lone client, each action its own commit; larger: the group commit of a busy intake). \
                --catch-up N journals N actions, then starts a dispatcher and a counter store over ipc (no \
                snapshot) and times the store from start until it has applied all N.
                """)

        @Option(help: "Records appended per policy (always is capped at 20,000: each is an fdatasync).") var records = 200_000
        @Option(help: "Records per commit.") var batch = 64
        @Option(help: "Where to put the temporary journals.") var dir = NSTemporaryDirectory()
        @Option(help: "Also time a store catching up this many journaled actions (0: skip).") var catchUp = 0

        func run() async throws {
            try await JournalBenchmark(records: records, batch: batch, directory: dir, catchUp: catchUp).run(report: emitLine)
        }
    }
}
