import FluxCore

/// The schedules a dispatcher holds pending, and what it counted of them.
///
/// Everything in it follows from the journal: a request (``Schedules/scheduleType``) adds a schedule
/// or replaces the one with its id, a cancel removes it, and a fired action (flag `scheduled`) removes
/// the schedule whose request it names. A dispatcher that opens its journal reads those records again
/// (``DispatcherBoot``) and holds the same book as the one that wrote them: a schedule fires once,
/// whichever dispatcher, before or after a restart or a failover, sequences its action.
package struct ScheduleBook: Sendable {
    /// One pending schedule, with what firing it needs.
    package struct Entry: Sendable, Equatable {
        package var id: String
        package var app: String
        package var actionType: String
        package var payload: [UInt8]
        package var dueNanoseconds: Int64
        package var requestSeq: UInt64
    }

    /// The most schedules pending at once; a request past it is refused.
    package static let maxPending = 100_000
    /// A schedule fired more than this after it was due counts as late (a second, in nanoseconds).
    package static let lateAfterNanoseconds: Int64 = 1_000_000_000

    private var byID: [String: Entry] = [:]
    /// The pending schedules' ids in firing order: due time, then request seq.
    private var order: [(due: Int64, seq: UInt64, key: String)] = []

    package private(set) var fired: UInt64 = 0
    package private(set) var cancelled: UInt64 = 0
    package private(set) var late: UInt64 = 0

    package init() {}

    package var count: Int { byID.count }
    package var isEmpty: Bool { byID.isEmpty }
    package func contains(app: String, id: String) -> Bool { byID[ScheduleBook.key(app, id)] != nil }

    /// Ids are each app's own: the book keys them by both (an app's name has no '/').
    private static func key(_ app: String, _ id: String) -> String { app + "/" + id }

    /// When the next schedule is due (nanoseconds since the Unix epoch), if any: read every turn, so
    /// without a look-up.
    package var nextDue: Int64? { order.first?.due }

    /// The next schedule due, if any.
    package var next: Entry? { order.first.flatMap { byID[$0.key] } }

    /// The pending schedules in firing order, at most `limit`.
    package func pending(limit: Int = .max) -> [Entry] { order.prefix(limit).compactMap { byID[$0.key] } }

    /// Adds `entry`, replacing a pending one with its id.
    package mutating func add(_ entry: Entry) {
        let key = ScheduleBook.key(entry.app, entry.id)
        remove(key: key)
        byID[key] = entry
        let place = (entry.dueNanoseconds, entry.requestSeq)
        let at = order.partitioningIndex { ($0.due, $0.seq) > place }
        order.insert((entry.dueNanoseconds, entry.requestSeq, key), at: at)
    }

    /// Removes `app`'s schedule `id` (a cancel); whether one was pending.
    @discardableResult
    package mutating func cancel(app: String, id: String) -> Bool {
        guard remove(key: ScheduleBook.key(app, id)) != nil else { return false }
        cancelled += 1
        return true
    }

    /// The schedule made by the request at `requestSeq` fired at `firedNanoseconds`: it is no longer
    /// pending. Whether it was (an older request's fire, replaced since, finds nothing).
    @discardableResult
    package mutating func fired(requestSeq: UInt64, at firedNanoseconds: Int64) -> Bool {
        guard let index = order.firstIndex(where: { $0.seq == requestSeq }) else { return false }
        let entry = remove(key: order[index].key)
        fired += 1
        if let entry, firedNanoseconds - entry.dueNanoseconds > ScheduleBook.lateAfterNanoseconds { late += 1 }
        return true
    }

    @discardableResult
    private mutating func remove(key: String) -> Entry? {
        guard let entry = byID.removeValue(forKey: key) else { return nil }
        if let index = order.firstIndex(where: { $0.key == key }) { order.remove(at: index) }
        return entry
    }

    /// Reads one journaled action into the book: a request, a cancel or a fire; anything else is left
    /// alone. A request that does not decode (the intake checked it before it was journaled) is skipped.
    package mutating func note(_ topic: some Collection<UInt8>, header: Header, payload: [UInt8]) {
        if header.flags.contains(.scheduled) {
            fired(requestSeq: header.clientSeq, at: header.timestamp)
            return
        }
        guard Schedules.isScheduling(topic: topic) else { return }
        switch header.actionType {
        case Schedules.scheduleType:
            guard let request = try? WireCodec().decode(ScheduleRequest.self, from: payload) else { return }
            add(
                Entry(
                    id: request.id, app: request.app, actionType: request.type, payload: request.payload,
                    dueNanoseconds: request.due(stampedAt: header.timestamp), requestSeq: header.seq))
        case Schedules.cancelType:
            guard let request = try? WireCodec().decode(ScheduleCancel.self, from: payload) else { return }
            cancel(app: request.app, id: request.id)
        default:
            return
        }
    }
}

extension Array {
    /// The first index whose element satisfies `belongsAfter`, for an array partitioned by it.
    fileprivate func partitioningIndex(where belongsAfter: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if belongsAfter(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
