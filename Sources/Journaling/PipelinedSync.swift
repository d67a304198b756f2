import NodeCores

/// A sync handed to a lane, and what it returned with (0, or an errno).
package typealias SyncOutcome = (ticket: Journal.SyncTicket, errno: Int32)

/// What runs the syncs of the pipelined group commit: the real loop's threads (`SyncThreads`), each
/// running its ticket's fdatasync, or the simulator's disk, whose syncs return when the simulation says.
/// The loop's thread alone calls these.
package protocol SyncLaneRunner: AnyObject {
    /// A lane with no sync in flight, if any.
    var idleLane: Int? { get }
    /// Hands `ticket` to its lane, which must be idle.
    func start(_ ticket: Journal.SyncTicket)
    /// The syncs that returned since the last call; their lanes are idle again.
    func takeReturned() -> [SyncOutcome]
    /// Waits until at least one sync has returned (one must be in flight), and gives the outcomes.
    func waitForOne() -> [SyncOutcome]
    /// Waits until every sync in flight has returned, and gives the outcomes.
    func waitForAll() -> [SyncOutcome]
}

/// The pipelined group commit carried out: the ``SyncPipeline``'s decisions against a journal that uses
/// sync lanes and a ``SyncLaneRunner``. `DispatcherLoop` and the simulator's dispatcher both run this,
/// so that every decision the simulator explores under faults is the one the real loop makes. A class:
/// what it tells the interpreter may write and hand out another sync at once (a nested ``sync(through:journal:lanes:interpreter:)``).
package final class PipelinedSync {
    /// The syncs in flight, what each will prove, what is proven and what the interpreter was told.
    package private(set) var pipeline: SyncPipeline

    /// Lanes of ``Journal/syncLaneCount``; the journal is durable through `durable` to begin with.
    package init(durable: UInt64) {
        pipeline = SyncPipeline(lanes: Journal.syncLaneCount, durable: durable)
    }

    /// The interpreter's `sync(through:)`: hands the sync to an idle lane and goes on (false: the
    /// interpreter hears of it once it returns, from ``reportDurable(_:journal:to:)``). With every lane
    /// busy it first waits for one to return: at most ``Journal/syncLaneCount`` syncs are in flight. When
    /// a checkpoint is due (it must cover the journal through the head exactly), syncs in place.
    package func sync(
        through seq: UInt64, journal: Journal, lanes: some SyncLaneRunner, interpreter: DispatcherInterpreter
    ) throws -> Bool {
        while true {
            switch pipeline.next(checkpointDue: journal.checkpointDue(head: journal.lastSeq)) {
            case .waitForAllThenSyncInPlace:
                try count(lanes.waitForAll(), journal: journal, interpreter: interpreter)
                try journal.commit()
                pipeline.syncedInPlace(through: seq)
                return true
            case .waitForOne:
                try count(lanes.waitForOne(), journal: journal, interpreter: interpreter)
            case .start(let lane):
                precondition(lanes.idleLane == lane, "the runner's idle lane is the pipeline's: \(lane)")
                if let ticket = try journal.takeSyncTicket(lane: lane) {
                    pipeline.started(lane: lane, covering: ticket.seq)
                    lanes.start(ticket)
                } else {
                    // Nothing unsynced: a segment's roll synced it all in place.
                    pipeline.provenInPlace(journal.lastSeq)
                }
                return false
            }
        }
    }

    /// Syncs that returned: the journal counts each and says what it proved durable. A failed one goes
    /// to the interpreter's rule for a failed sync (``DispatcherInterpreter/syncFailed(through:_:retry:)``,
    /// the same as for one in place): it is never trusted, the error goes on and the loop leaves with
    /// nothing more acknowledged.
    package func count(_ outcomes: [SyncOutcome], journal: Journal, interpreter: DispatcherInterpreter) throws {
        for outcome in outcomes {
            let proved: UInt64?
            do {
                proved = try journal.syncReturned(outcome.ticket, errno: outcome.errno)
            } catch {
                pipeline.returned(lane: outcome.ticket.lane, proved: nil)
                // (Only the canary `trusts-failed-fsync` comes back from this: it syncs again in place.)
                try interpreter.syncFailed(through: outcome.ticket.seq, error) {
                    try journal.commit()
                    return true
                }
                continue
            }
            pipeline.returned(lane: outcome.ticket.lane, proved: proved)
        }
    }

    /// Tells the interpreter how far the syncs that returned made the journal durable (it may write and
    /// hand out more syncs as it carries out what that releases).
    package func reportDurable(_ lanes: some SyncLaneRunner, journal: Journal, to interpreter: DispatcherInterpreter) throws {
        try count(lanes.takeReturned(), journal: journal, interpreter: interpreter)
        while let seq = pipeline.takeReport() { try interpreter.synced(through: seq) }
    }
}
