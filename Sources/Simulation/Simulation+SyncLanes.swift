@_spi(Simulation) import FluxCore
import Journaling
@_spi(Simulation) import NodeCores

/// The pipelined group commit in the simulation (`zflux simulate --sync-threads`, as
/// `ZFLUX_SYNC_THREADS=2` runs it): the leading dispatcher's journal hands its syncs to lanes, and
/// ``PipelinedSync``, which the real loop runs too, decides when one starts, when the loop waits for
/// one and what the interpreter hears. The lanes are the simulated disk's: a sync makes durable what
/// the file held when it began (``SimDisk/beginSync(_:)``), returns when the simulation schedules it
/// (two in flight return in either order), and may fail and lose what it covered.
extension Simulation {
    /// The lanes of one dispatcher process, as `SyncThreads` are the real loop's.
    final class SimSyncLanes: SyncLaneRunner {
        struct InFlight {
            let ticket: Journal.SyncTicket
            /// What the file held when the sync began: all it makes durable.
            let prefix: Int
            /// When it returns, unless the loop waits for it first.
            let due: UInt64
            /// Which scheduled return is this one's (a lane's earlier ones are stale).
            let token: UInt64
        }

        unowned let simulation: Simulation
        let index: Int
        let incarnation: UInt64
        private(set) var inFlight: [Int: InFlight] = [:]
        private var returned: [SyncOutcome] = []
        private var tokens: UInt64 = 0

        init(simulation: Simulation, index: Int, incarnation: UInt64) {
            self.simulation = simulation
            self.index = index
            self.incarnation = incarnation
        }

        var disk: SimDisk { simulation.dispatchers[index].disk }
        var idleLane: Int? { (0..<Journal.syncLaneCount).first { inFlight[$0] == nil } }

        /// The sync begins on the disk now; its return is scheduled, slow now and then under storage
        /// faults, as the syncs in place are.
        func start(_ ticket: Journal.SyncTicket) {
            precondition(inFlight[ticket.lane] == nil, "lane \(ticket.lane) has a sync in flight")
            tokens += 1
            simulation.result.lanes.syncs += 1
            let slow = simulation.options.storageFaults && simulation.rng.chance(0.03)
            let due = simulation.now + (slow ? simulation.rng.micros(20_000...400_000) : simulation.rng.micros(100...3_000))
            inFlight[ticket.lane] = InFlight(ticket: ticket, prefix: disk.beginSync(ticket.file), due: due, token: tokens)
            simulation.record(
                3, Node.dispatcher(index).code, ticket.seq,
                "\(simulation.name(of: .dispatcher(index)))'s lane \(ticket.lane) syncs through seq \(ticket.seq)")
            simulation.queue.schedule(.syncLaneReturns(dispatcher: index, incarnation: incarnation, lane: ticket.lane, token: tokens), at: due)
        }

        /// Whether `token` is the sync in flight on `lane` (not one the loop already waited for).
        func isInFlight(lane: Int, token: UInt64) -> Bool { inFlight[lane]?.token == token }

        /// The sync on `lane` returns: the disk writes what it covered, or fails it.
        func finish(lane: Int) {
            guard let sync = inFlight.removeValue(forKey: lane) else { preconditionFailure("lane \(lane) has no sync in flight") }
            let code = disk.finishSync(sync.ticket.file, prefix: sync.prefix)
            if inFlight.values.contains(where: { $0.ticket.seq < sync.ticket.seq }) { simulation.result.lanes.outOfOrder += 1 }
            if code != 0 && !inFlight.isEmpty { simulation.result.lanes.failedWhileOtherInFlight += 1 }
            simulation.record(
                2, Node.dispatcher(index).code, sync.ticket.seq,
                "\(simulation.name(of: .dispatcher(index)))'s lane \(lane) returns \(code == 0 ? "" : "errno \(code) ")through seq \(sync.ticket.seq)"
            )
            returned.append((sync.ticket, code))
        }

        func takeReturned() -> [SyncOutcome] {
            defer { returned = [] }
            return returned
        }

        /// The sync in flight due to return first (by lane between two due at once).
        private var dueFirst: InFlight? { inFlight.values.min { ($0.due, $0.ticket.lane) < ($1.due, $1.ticket.lane) } }

        /// The loop blocks until a sync returns: the one due first returns now (its scheduled return
        /// is then stale).
        func waitForOne() -> [SyncOutcome] {
            guard let first = dueFirst else { preconditionFailure("a sync is in flight to wait for") }
            simulation.result.lanes.waits += 1
            finish(lane: first.ticket.lane)
            return takeReturned()
        }

        func waitForAll() -> [SyncOutcome] {
            if !inFlight.isEmpty { simulation.result.lanes.waits += 1 }
            while let first = dueFirst { finish(lane: first.ticket.lane) }
            return takeReturned()
        }
    }

    /// Whether the leading dispatcher pipelines its syncs: asked for, and a journal synced in batches
    /// (as the real loop: `always` syncs each record in place, `none` never).
    var pipelinesSyncs: Bool { options.syncThreads && fsync == .batch }

    /// The journal of a dispatcher about to lead hands its syncs to lanes from now on, as the real loop
    /// sets them up before it serves. False when the journal could not open them: the process exits.
    func useSyncLanes(_ index: Int, journal: Journal, durable: UInt64) -> Bool {
        let process = dispatchers[index]
        process.syncLanes = nil
        process.pipelined = nil
        guard pipelinesSyncs else { return true }
        do {
            guard try journal.useSyncLanes() else { preconditionFailure("the simulated disk has syncs in flight") }
        } catch {
            startAgainLater(index, "its journal's sync lanes could not open: \(error)")
            return false
        }
        process.syncLanes = SimSyncLanes(simulation: self, index: index, incarnation: process.incarnation)
        process.pipelined = PipelinedSync(durable: durable)
        return true
    }

    /// A lane's sync returns (when the loop did not wait for it first): the real loop hears it on the
    /// threads' eventfd and tells the interpreter at once.
    func syncLaneReturns(_ index: Int, incarnation: UInt64, lane: Int, token: UInt64) {
        let process = dispatchers[index]
        guard process.incarnation == incarnation, let lanes = process.syncLanes, lanes.isInFlight(lane: lane, token: token) else { return }
        if process.frozenUntil > now {
            // The process (and its threads) runs again before the sync is heard of.
            queue.schedule(.syncLaneReturns(dispatcher: index, incarnation: incarnation, lane: lane, token: token), at: process.frozenUntil)
            return
        }
        lanes.finish(lane: lane)
        guard reportSyncs(index) else { return }
        carryOutDispatcher(index)
    }

    /// What the real loop does first in each turn: the syncs that returned are counted, and the
    /// interpreter hears how far they made the journal durable. False when that stopped the process.
    func reportSyncs(_ index: Int) -> Bool {
        let process = dispatchers[index]
        guard let pipelined = process.pipelined, let lanes = process.syncLanes, let journal = process.journal,
            let interpreter = process.interpreter
        else { return true }
        leaseCheck(index)
        do {
            try pipelined.reportDurable(lanes, journal: journal, to: interpreter)
        } catch let error as JournalError {
            startAgainLater(index, "its journal failed: \(error.message)")
            return false
        } catch {
            fail("dispatcher", "\(name(of: .dispatcher(index))) could not carry out its core's commands: \(error)")
            return false
        }
        return true
    }
}
