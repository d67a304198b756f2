import ArgumentParser
import FluxCore
import Foundation
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
            """)

    @Flag(help: "One JSON document: {pending, fired, late, cancelled, schedules: [{id, app, action_type, due_nanoseconds, request_seq}]}.")
    var json = false
    @OptionGroup var runDir: RunDirOptions

    func run() throws {
        let status = try dispatcherStatus(runDir)
        let listing = Listing(
            pending: status.schedulesPending ?? 0, fired: status.schedulesFired ?? 0, late: status.schedulesLate ?? 0,
            cancelled: status.schedulesCancelled ?? 0, schedules: status.schedules ?? [])
        if json {
            try emitSnakeCaseJSON(listing)
            return
        }
        for line in listing.lines(now: Date()) { emitLine(line) }
    }

    /// What the command reports: the dispatcher's counts and its first pending schedules.
    struct Listing: Codable {
        var pending: Int
        var fired: UInt64
        var late: UInt64
        var cancelled: UInt64
        var schedules: [PendingSchedule]

        /// The table, with each due time in UTC and how far from `now` it is.
        func lines(now: Date) -> [String] {
            var lines = ["\(pending) pending · \(fired) fired (\(late) late) · \(cancelled) cancelled"]
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
