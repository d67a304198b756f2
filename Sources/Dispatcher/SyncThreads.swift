import Foundation
import Journaling
import NodeCores
import NodeSupport
import Synchronization
import ZeroMQ

/// The threads that run the journal's syncs for the dispatcher's loop (pipelined group commit): one
/// per lane (``Journal/syncLaneCount``), each waiting for a ticket, running its fdatasync and posting
/// the outcome, which wakes the loop through ``done``. The loop's thread keeps reading, sequencing and
/// writing meanwhile; what a sync covered is acknowledged only once the loop hears it returned.
final class SyncThreads: SyncLaneRunner, Sendable {
    /// Signalled after each sync returns: the loop polls it.
    let done: EventFD
    private let lanes: [Lane]
    private let returned = Mutex<[SyncOutcome]>([])
    /// How long the lanes' syncs took (the dispatcher's status reads it).
    private let times = Mutex(SyncTimes())
    var syncTimes: SyncTimes { times.withLock { $0 } }

    private final class Lane: Sendable {
        let go = DispatchSemaphore(value: 0)
        let exited = DispatchSemaphore(value: 0)
        /// The ticket handed over, and whether the thread should stop.
        let slot = Mutex<(ticket: Journal.SyncTicket?, stop: Bool)>((nil, false))
        /// Only the loop's thread reads or writes it: true from `start` to the loop taking the outcome.
        let busy = Atomic<Bool>(false)
    }

    init() throws {
        done = try EventFD()
        lanes = (0..<Journal.syncLaneCount).map { _ in Lane() }
        for (number, lane) in lanes.enumerated() {
            let thread = Thread { [self] in
                while true {
                    lane.go.wait()
                    let (ticket, stop) = lane.slot.withLock { slot in
                        defer { slot.ticket = nil }
                        return slot
                    }
                    if let ticket {
                        let start = MonotonicClock.nowNanoseconds()
                        let code = ticket.run()
                        let took = MonotonicClock.nowNanoseconds() &- start
                        times.withLock { $0.record(nanoseconds: took) }
                        returned.withLock { $0.append((ticket, code)) }
                        done.signal()
                    }
                    if stop { break }
                }
                lane.exited.signal()
            }
            thread.name = "zflux-sync-\(number)"
            thread.start()
        }
    }

    /// A lane with no sync in flight, if any.
    var idleLane: Int? { lanes.firstIndex { !$0.busy.load(ordering: .relaxed) } }
    /// True when no sync is in flight.
    var isIdle: Bool { lanes.allSatisfy { !$0.busy.load(ordering: .relaxed) } }

    /// Hands `ticket` to its lane's thread, which must be idle.
    func start(_ ticket: Journal.SyncTicket) {
        let lane = lanes[ticket.lane]
        precondition(!lane.busy.load(ordering: .relaxed), "lane \(ticket.lane) has a sync in flight")
        lane.busy.store(true, ordering: .relaxed)
        lane.slot.withLock { $0.ticket = ticket }
        lane.go.signal()
    }

    /// The syncs that returned since the last call; their lanes are idle again.
    func takeReturned() -> [SyncOutcome] {
        done.drain()
        let outcomes = returned.withLock { returned in
            defer { returned.removeAll(keepingCapacity: true) }
            return returned
        }
        for outcome in outcomes { lanes[outcome.ticket.lane].busy.store(false, ordering: .relaxed) }
        return outcomes
    }

    /// Waits until every sync in flight has returned, and gives their outcomes (with any that had
    /// returned already).
    func waitForAll() -> [SyncOutcome] {
        var outcomes = takeReturned()
        while !isIdle { outcomes += waitForOne() }
        return outcomes
    }

    /// Waits until at least one sync has returned (one must be in flight), and gives the outcomes.
    func waitForOne() -> [SyncOutcome] {
        precondition(!isIdle, "a sync is in flight to wait for")
        var outcomes = takeReturned()
        while outcomes.isEmpty {
            var descriptor = pollfd(fd: done.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 1000)
            outcomes = takeReturned()
        }
        return outcomes
    }

    /// Stops the threads once the syncs in flight have returned, and gives the outcomes the loop has
    /// not taken.
    func stop() -> [SyncOutcome] {
        for lane in lanes {
            lane.slot.withLock { $0.stop = true }
            lane.go.signal()
        }
        for lane in lanes { lane.exited.wait() }
        return takeReturned()
    }
}
