import FluxCore
import Logging

/// What a dispatcher counts of what it was asked, and the STATUS it answers with: one of the
/// ``DispatcherCore``'s machines. It takes the other machines' state as it is at the time of the
/// request, and decides nothing: it only reports.
struct DispatcherCounters {
    /// Dispatches sequenced, and requests refused (NACKed or dropped as bad input).
    private(set) var accepted: UInt64 = 0
    private(set) var rejected: UInt64 = 0
    /// What the apps' `count` middleware counted, by key.
    private(set) var middlewareCounts: [String: UInt64] = [:]
    let startedAtMs: UInt64
    /// The first pending schedules a STATUS lists, read off the book once per change to it.
    private var listed: (revision: UInt64, page: [PendingSchedule])?

    init(startedAtMs: UInt64) { self.startedAtMs = startedAtMs }

    mutating func sequenced() { accepted += 1 }

    mutating func refused() { rejected += 1 }

    mutating func counted(_ key: String) { middlewareCounts[key, default: 0] += 1 }

    /// The book changed whole (rebuilt from the log): the listed page goes with it.
    mutating func forgetListed() { listed = nil }

    private mutating func listedSchedules(_ schedules: ScheduleBook) -> [PendingSchedule] {
        if let listed, listed.revision == schedules.revision { return listed.page }
        let page = schedules.pending(limit: NodeStatus.maxSchedulesListed).map {
            PendingSchedule(id: $0.id, app: $0.app, actionType: $0.actionType, dueNanoseconds: $0.dueNanoseconds, requestSeq: $0.requestSeq)
        }
        assert(page.count <= min(schedules.count, NodeStatus.maxSchedulesListed), "a STATUS lists at most the pending schedules, up to its page")
        listed = (schedules.revision, page)
        return page
    }

    /// The dispatcher's status from its machines' state; the journal's size and the subscriber count
    /// are the shell's to add.
    mutating func status(
        now: NodeTime, pid: Int, subscribers: Int, journalBytes: Int, journal: String, head: UInt64, journalProblem: String?,
        quarantine: [UInt64: Quarantine], history: HistoryID, schedules: ScheduleBook
    ) -> NodeStatus {
        var status = NodeStatus(role: .dispatcher, pid: pid, uptimeMs: now.elapsed(since: startedAtMs), subscribers: subscribers, rejected: rejected)
        status.head = head
        status.accepted = accepted
        status.journal = journal
        status.journalBytes = journalBytes
        status.journalWritable = journalProblem == nil
        if !quarantine.isEmpty { status.quarantined = quarantine.values.sorted { $0.seq < $1.seq } }
        if let journalProblem { status.problem = "the journal cannot be written: \(journalProblem)" }
        status.history = history.description
        if !schedules.isEmpty || schedules.fired > 0 || schedules.cancelled > 0 {
            status.schedulesPending = schedules.count
            status.schedulesFired = schedules.fired
            status.schedulesCancelled = schedules.cancelled
            status.schedulesLate = schedules.late
            status.schedules = listedSchedules(schedules)
        }
        if !middlewareCounts.isEmpty {
            status.middlewareCounts = middlewareCounts.sorted { $0.key < $1.key }.map { MiddlewareCount(key: $0.key, count: $0.value) }
        }
        return status
    }
}

extension DispatcherCore {
    /// The dispatcher's status; the journal's size and the subscriber count are the shell's to add.
    public func status(now: NodeTime, pid: Int, subscribers: Int, journalBytes: Int) -> NodeStatus {
        counters.status(
            now: now, pid: pid, subscribers: subscribers, journalBytes: journalBytes, journal: rules.journalDescription, head: durableHead,
            journalProblem: journalProblem, quarantine: quarantine, history: history, schedules: schedules)
    }
}

extension DispatcherCore: MiddlewareHost {
    public func middlewareLog(_ message: String, step: String, app: String, client: UInt64) {
        logger.info("\(message)", metadata: ["app": "\(app)", "middleware": "\(step)", "client": "\(client)"])
    }

    public func middlewareCount(_ key: String) { counters.counted(key) }
}
