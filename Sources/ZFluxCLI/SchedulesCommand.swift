import ArgumentParser
import Dispatcher
import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport

struct SchedulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedules",
        abstract: "List the scheduled actions the dispatcher holds pending, soonest first.",
        discussion: """
            An app's effect schedules an action with `.schedule(action, after: delay, id:)` (docs/GUIDE.md, \
            "Scheduled actions"). The dispatcher journals the request and sequences the action when it is due, \
            once, even across restarts and failovers; this lists those still to fire (the first 100), with how \
            many fired, how many of those late (more than a second after their time, as after a stop) and how \
            many were cancelled.
              zflux schedules
              zflux schedules --json
            When no cluster runs in the run directory, or its dispatcher does not answer, the schedules are \
            read from the journal on this host (marked "read from disk, not live"; in JSON "live": false), as \
            the dispatcher rebuilds them when it opens it; exit 2 when the dispatcher did not answer.
            """)

    @Flag(
        help:
            "One JSON document: {pending, fired, late, cancelled, schedules: [{id, app, action_type, due_nanoseconds, request_seq}]}, with live: false and journal when read from disk."
    )
    var json = false
    @OptionGroup var runDir: RunDirOptions

    func run() throws {
        var listing: Listing
        var answered = true
        if let (topology, security) = try? runDir.cluster() {
            if let reply = try requestReply(
                endpoint: topology.dispatcher.intake, security: security, request: Message(header: Header(kind: .statusRequest)),
                expecting: .status, timeoutMilliseconds: 5000)
            {
                let status = try NodeStatus.decode(reply.payload)
                listing = Listing(
                    pending: status.schedulesPending ?? 0, fired: status.schedulesFired ?? 0, late: status.schedulesLate ?? 0,
                    cancelled: status.schedulesCancelled ?? 0, schedules: status.schedules ?? [])
                try emit(listing)
                return
            }
            answered = false
            printError("no answer from the dispatcher at \(topology.dispatcher.intake) within 5 s; is the cluster up?")
        }
        // No cluster runs here (stopped), or its dispatcher does not answer: the schedules its journal
        // leaves pending, as the dispatcher rebuilds them when it opens it, marked as read from disk.
        guard let journal = try? journalOnDisk() else {
            if answered { _ = try runDir.cluster() }  // says why there is no cluster
            throw ExitCode(2)
        }
        // From the newest checkpoint, as the dispatcher does: with retention, the requests of schedules
        // still pending may be in segments gone since.
        let book = try DispatcherBoot.schedules(of: journal, logger: Logger(label: "zflux.schedules") { _ in SwiftLogNoOpLogHandler() }).book
        listing = Listing(
            pending: book.count, fired: book.fired, late: book.late, cancelled: book.cancelled,
            schedules: book.pending(limit: 100).map {
                PendingSchedule(id: $0.id, app: $0.app, actionType: $0.actionType, dueNanoseconds: $0.dueNanoseconds, requestSeq: $0.requestSeq)
            })
        listing.live = false
        listing.journal = journal.directory
        if !json {
            printError(
                "\(answered ? "no cluster runs in \(runDir.path)" : "no answer"): read from the journal on disk (\(journal.directory), through seq \(journal.lastSeq)), not live"
            )
        }
        try emit(listing)
        if !answered { throw ExitCode(2) }
    }

    private func emit(_ listing: Listing) throws {
        if json {
            try emitSnakeCaseJSON(listing)
            return
        }
        for line in listing.lines(now: Date()) { emitLine(line) }
    }

    /// The cluster's journal here, read-only: the running or last-run cluster's (a pair's: refused).
    private func journalOnDisk() throws -> Journal {
        let topology = try runDir.recordedTopology()
        guard let directory = topology.durability?.journalDirectory, FileManager.default.fileExists(atPath: directory) else {
            throw CLIError("no journal")
        }
        try refusePairJournal(directory)
        return try Journal(directory: directory, repair: false)
    }

    /// What the command reports: the dispatcher's counts and its first pending schedules.
    struct Listing: Codable {
        var pending: Int
        var fired: UInt64
        var late: UInt64
        var cancelled: UInt64
        var schedules: [PendingSchedule]
        /// False when read from the journal on disk, no dispatcher answering; absent when live.
        var live: Bool?
        /// The journal read, when not live.
        var journal: String?

        /// The table, with each due time in UTC and how far from `now` it is.
        func lines(now: Date) -> [String] {
            var lines = [
                "\(pending) pending · \(fired) fired (\(late) late) · \(cancelled) cancelled" + (live == false ? " · read from disk, not live" : "")
            ]
            guard !schedules.isEmpty else { return lines }
            let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            func column(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count + 2), withPad: " ", startingAt: 0) }
            lines.append(column("due (UTC)", 26) + column("in", 10) + column("action", 34) + column("id", 24) + "request seq")
            for schedule in schedules {
                let due = Date(timeIntervalSince1970: Double(schedule.dueNanoseconds) / 1e9)
                let seconds = due.timeIntervalSince(now)
                let away = seconds >= 0 ? String(format: "%.1fs", seconds) : String(format: "due %.1fs ago", -seconds)
                lines.append(
                    column(due.formatted(format), 26) + column(away, 10) + column("\(schedule.app).\(schedule.actionType)", 34)
                        + column(schedule.id, 24) + "\(schedule.requestSeq)")
            }
            if pending > schedules.count { lines.append("… and \(pending - schedules.count) more") }
            return lines
        }
    }
}
