import FluxCore

/// The schedules a dispatcher holds pending, and what it counted of them.
///
/// Everything in it follows from the journal: a request (``Schedules/scheduleType``) adds a schedule
/// or replaces the one with its id, a cancel removes it, and a fired action (flag `scheduled`) removes
/// the schedule whose request it names. A dispatcher that opens its journal reads those records again
/// (``DispatcherBoot``) and holds the same book as the one that wrote them: a schedule fires once,
/// whichever dispatcher, before or after a restart or a failover, sequences its action.
///
/// Every operation the intake, a turn and a STATUS do is O(log n) at most: the firing order is a
/// binary heap of (due, request seq) that a cancel or a replacement updates in place (each schedule
/// knows its place in it), so the first page of the pending schedules is read off the heap's top
/// without sorting them all.
package struct ScheduleBook: Sendable {
    /// One pending schedule, with what firing it needs.
    package struct Entry: Sendable, Equatable, Codable {
        package var id: String
        package var app: String
        package var actionType: String
        package var payload: [UInt8]
        package var dueNanoseconds: Int64
        package var requestSeq: UInt64
        /// Made by an app's effect (its request carried the effect token; the journal's record is
        /// flagged ``Header/Flags/byEffect``): it counts in the effects' share.
        package var byEffect: Bool

        package init(
            id: String, app: String, actionType: String, payload: [UInt8], dueNanoseconds: Int64, requestSeq: UInt64, byEffect: Bool = false
        ) {
            (self.id, self.app, self.actionType, self.payload) = (id, app, actionType, payload)
            (self.dueNanoseconds, self.requestSeq, self.byEffect) = (dueNanoseconds, requestSeq, byEffect)
        }
    }

    /// The most schedules pending at once; a request past it is refused.
    package static let maxPending = 100_000
    /// The most payload bytes the pending schedules hold together unless the rules say otherwise (they
    /// live in the dispatcher's memory until they fire); a request past it is refused.
    package static let defaultMaxPendingBytes = 64 << 20
    /// The share of ``maxPending`` and of the payload bytes that schedules made by clients may not
    /// take (a tenth): what an app's effects schedule (a session's end) still fits when clients have
    /// filled the book. Effects may use the whole book.
    package static let effectsReservedFraction = 10
    /// A schedule fired more than this after it was due counts as late (a second, in nanoseconds).
    package static let lateAfterNanoseconds: Int64 = 1_000_000_000

    private var byKey: [String: Entry] = [:]
    /// The pending schedules' keys by their request's seq.
    private var bySeq: [UInt64: String] = [:]
    /// Firing order, a min-heap of (due, request seq) of the pending schedules alone.
    private var heap: [(due: Int64, seq: UInt64)] = []
    /// Where each pending schedule's request seq sits in `heap`.
    private var place: [UInt64: Int] = [:]

    /// The payload bytes the pending schedules hold.
    package private(set) var pendingBytes = 0
    /// Moves on with every schedule added or removed: a page read at one revision holds until the next.
    package private(set) var revision: UInt64 = 0
    /// How many of the pending schedules, and how many of their payload bytes, clients made.
    package private(set) var clientCount = 0
    package private(set) var clientBytes = 0
    package private(set) var fired: UInt64 = 0
    package private(set) var cancelled: UInt64 = 0
    package private(set) var late: UInt64 = 0

    /// The most payload bytes its schedules may hold together.
    package let maxPendingBytes: Int

    package init(maxPendingBytes: Int = ScheduleBook.defaultMaxPendingBytes) { self.maxPendingBytes = maxPendingBytes }

    /// The book a checkpoint kept (``DispatcherCheckpoint``): its pending schedules and its counts.
    package init(restoring entries: [Entry], fired: UInt64, cancelled: UInt64, late: UInt64, maxPendingBytes: Int) {
        self.maxPendingBytes = maxPendingBytes
        for entry in entries { add(entry) }
        (self.fired, self.cancelled, self.late) = (fired, cancelled, late)
        precondition(count == Set(entries.map { ScheduleBook.key($0.app, $0.id) }).count, "a checkpoint's schedules have distinct ids")
    }

    package var count: Int { byKey.count }
    package var isEmpty: Bool { byKey.isEmpty }
    package func contains(app: String, id: String) -> Bool { byKey[ScheduleBook.key(app, id)] != nil }
    /// `app`'s pending schedule `id`, if there is one.
    package func entry(app: String, id: String) -> Entry? { byKey[ScheduleBook.key(app, id)] }

    /// Ids are each app's own: the book keys them by both (an app's name has no '/').
    private static func key(_ app: String, _ id: String) -> String { app + "/" + id }

    /// When the next schedule is due (nanoseconds since the Unix epoch), if any: read every turn, so
    /// without a look-up.
    package var nextDue: Int64? { heap.first?.due }

    /// The next schedule due, if any.
    package var next: Entry? { heap.first.flatMap { bySeq[$0.seq] }.flatMap { byKey[$0] } }

    /// The pending schedules in firing order, at most `limit`: read off the heap's top (the smallest
    /// `limit` of a heap are among the children of the ones before them), in O(limit²), whatever
    /// the number pending. A STATUS lists the first ``NodeStatus/maxSchedulesListed``.
    package func pending(limit: Int = .max) -> [Entry] {
        // The whole book, or most of it (a journal's compaction, the simulator's checks): sorted.
        guard limit < min(count, 1024) else {
            return byKey.values.sorted { ($0.dueNanoseconds, $0.requestSeq) < ($1.dueNanoseconds, $1.requestSeq) }.prefix(limit).map { $0 }
        }
        var page: [Entry] = []
        var frontier: [Int] = heap.isEmpty ? [] : [0]
        while page.count < limit, let smallest = frontier.indices.min(by: { ScheduleBook.before(heap[frontier[$0]], heap[frontier[$1]]) }) {
            let index = frontier.remove(at: smallest)
            guard let key = bySeq[heap[index].seq], let entry = byKey[key] else { preconditionFailure("the heap holds pending schedules alone") }
            page.append(entry)
            for child in [2 * index + 1, 2 * index + 2] where child < heap.count { frontier.append(child) }
        }
        return page
    }

    /// Whether a schedule of `bytes` payload bytes may be added for `app`'s `id`, within
    /// ``maxPending`` and ``maxPendingBytes`` (a replacement frees what it replaces).
    /// A client's (`byEffect` false) must also fit within what clients may hold: all but the effects'
    /// reserved share (``effectsReservedFraction``).
    package func admits(app: String, id: String, bytes: Int, byEffect: Bool = false) -> Bool {
        let replaced = byKey[ScheduleBook.key(app, id)]
        let count = self.count - (replaced == nil ? 0 : 1)
        guard count < ScheduleBook.maxPending && pendingBytes - (replaced?.payload.count ?? 0) + bytes <= maxPendingBytes else { return false }
        guard !byEffect else { return true }
        let replacedClient = replaced.map { !$0.byEffect } ?? false
        let clients = clientCount - (replacedClient ? 1 : 0)
        let clientPayload = clientBytes - (replacedClient ? replaced?.payload.count ?? 0 : 0)
        return clients < ScheduleBook.maxPending - ScheduleBook.maxPending / ScheduleBook.effectsReservedFraction
            && clientPayload + bytes <= maxPendingBytes - maxPendingBytes / ScheduleBook.effectsReservedFraction
    }

    /// Adds `entry`, replacing a pending one with its id.
    package mutating func add(_ entry: Entry) {
        let key = ScheduleBook.key(entry.app, entry.id)
        remove(key: key)
        byKey[key] = entry
        bySeq[entry.requestSeq] = key
        revision &+= 1
        pendingBytes += entry.payload.count
        if !entry.byEffect {
            clientCount += 1
            clientBytes += entry.payload.count
        }
        push((entry.dueNanoseconds, entry.requestSeq))
        // The intake and the journal's reading ask `admits` first.
        assert(pendingBytes <= maxPendingBytes && count <= ScheduleBook.maxPending, "the book stays within its bounds")
        assert(heap.count == byKey.count && bySeq.count == byKey.count, "the heap and the index hold each pending schedule once")
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
        guard let key = bySeq[requestSeq], let entry = remove(key: key) else { return false }
        fired += 1
        let (lateness, overflow) = firedNanoseconds.subtractingReportingOverflow(entry.dueNanoseconds)
        if !overflow && lateness > ScheduleBook.lateAfterNanoseconds { late += 1 }
        return true
    }

    @discardableResult
    private mutating func remove(key: String) -> Entry? {
        guard let entry = byKey.removeValue(forKey: key) else { return nil }
        bySeq[entry.requestSeq] = nil
        revision &+= 1
        pendingBytes -= entry.payload.count
        if !entry.byEffect {
            clientCount -= 1
            clientBytes -= entry.payload.count
        }
        precondition(clientCount >= 0 && clientCount <= byKey.count && clientBytes <= pendingBytes, "clients' schedules are among the pending")
        guard let index = place[entry.requestSeq] else { preconditionFailure("a pending schedule has a place in the heap") }
        removeFromHeap(at: index)
        precondition(heap.count == byKey.count && place.count == byKey.count, "the heap holds each pending schedule once")
        return entry
    }

    // MARK: The heap

    private static func before(_ a: (due: Int64, seq: UInt64), _ b: (due: Int64, seq: UInt64)) -> Bool { (a.due, a.seq) < (b.due, b.seq) }

    private mutating func swapInHeap(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        place[heap[a].seq] = a
        place[heap[b].seq] = b
    }

    private mutating func push(_ element: (due: Int64, seq: UInt64)) {
        heap.append(element)
        place[element.seq] = heap.count - 1
        siftUp(heap.count - 1)
    }

    private mutating func removeFromHeap(at index: Int) {
        let last = heap.count - 1
        if index != last { swapInHeap(index, last) }
        place[heap.removeLast().seq] = nil
        guard index < heap.count else { return }
        siftDown(siftUp(index))
    }

    /// Moves the element at `index` up to its place; where it ends.
    @discardableResult
    private mutating func siftUp(_ index: Int) -> Int {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard ScheduleBook.before(heap[child], heap[parent]) else { break }
            swapInHeap(child, parent)
            child = parent
        }
        return child
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && ScheduleBook.before(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && ScheduleBook.before(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            swapInHeap(parent, smallest)
            parent = smallest
        }
    }

    // MARK: The journal

    /// Reads one journaled action into the book: a request, a cancel or a fire; anything else is left
    /// alone. A request the intake would refuse (it does not decode, or breaks a rule: a journal may
    /// come from a session file, or from anyone's disk) is skipped, as are requests past the book's
    /// bounds, which the intake refuses in the same order.
    package mutating func note(_ topic: some Collection<UInt8>, header: Header, payload: [UInt8]) {
        if header.flags.contains(.scheduled) {
            fired(requestSeq: header.clientSeq, at: header.timestamp)
            return
        }
        guard Schedules.isScheduling(topic: topic) else { return }
        switch header.actionType {
        case Schedules.scheduleType:
            let byEffect = header.flags.contains(.byEffect)
            guard let request = try? WireCodec().decode(ScheduleRequest.self, from: payload), ScheduleBook.isValid(request),
                admits(app: request.app, id: request.id, bytes: request.payload.count, byEffect: byEffect)
            else { return }
            let due = request.due(stampedAt: header.timestamp)
            guard due >= 0 else { return }
            add(
                Entry(
                    id: request.id, app: request.app, actionType: request.type, payload: request.payload, dueNanoseconds: due,
                    requestSeq: header.seq, byEffect: byEffect))
        case Schedules.cancelType:
            guard let request = try? WireCodec().decode(ScheduleCancel.self, from: payload) else { return }
            cancel(app: request.app, id: request.id)
        default:
            return
        }
    }

    /// What the intake checks of a request's names: an id of 1 to ``Schedules/maxIDBytes`` bytes, an
    /// app name, an action type a header can carry.
    package static func isValid(_ request: ScheduleRequest) -> Bool {
        !request.id.isEmpty && request.id.utf8.count <= Schedules.maxIDBytes && NodeName.isValid(request.app)
            && Header.isValidActionType(Array(request.type.utf8))
    }
}
