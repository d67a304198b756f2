@_spi(Simulation) import FluxCore
import Journaling
@_spi(Simulation) import NodeCores

/// What a standby's interpreter reaches in the simulation: its replication connection on the network,
/// to the dispatcher it follows, and its journal on the simulated disk, whose fsync returns later.
final class StandbyHost: SimulatedHost, StandbyIO {
    var node: Simulation.Node { .dispatcher(index) }
    var process: Simulation.DispatcherProcess { simulation.dispatchers[index] }

    /// A step the simulated journal cannot take: the simulation has already failed, saying why.
    struct Refused: Error {}

    func time() -> NodeTime { simulation.time(node) }

    func sendToLeader(_ message: Message) {
        simulation.send(
            .replication(peer: Simulation.peerID(node, process.connection), message), from: node, to: .dispatcher(process.following))
    }

    /// The simulated disk keeps messages; the records are the leader's entries, and decode.
    /// As `PairLoop` does: a full disk undoes the append whole, and for a second nothing is written
    /// (the core believes it holds records the journal lacks); then the core follows again from the
    /// journal's end.
    func append(_ records: StampedRecords) throws -> StandbyAppend {
        guard let journal = process.journal else { throw JournalError("the journal is closed") }
        guard !process.standbyDiskFull else { return .skipped }
        do {
            try journal.append([records])
        } catch let error as JournalError where error.isOutOfSpace {
            simulation.note("\(simulation.name(of: node))'s journal has no room; it follows again in a second")
            process.standbyDiskFull = true
            simulation.queue.schedule(.standbyFollowsAgain(index, incarnation: process.incarnation), at: simulation.now + 1_000_000)
            return .noRoom
        }
        return .written
    }

    func sync(through seq: UInt64) throws -> Bool {
        if simulation.fsync == .none { return true }
        simulation.startFsyncIfNeeded(index)
        return false
    }

    func firstSeqOfRun(endingAt seq: UInt64) throws -> UInt64 {
        guard let journal = process.journal, seq >= journal.firstSeq, seq <= journal.lastSeq else {
            simulation.fail(
                "standby", "\(simulation.name(of: node)) was told to drop the run ending at \(seq), which its journal does not hold")
            throw Refused()
        }
        return try journal.firstSeqOfRun(endingAt: seq)
    }

    func stamp(at seq: UInt64) throws -> UInt64? { try process.journal?.history(at: seq) }

    /// Synced, as `Journal.truncate` is: all it keeps is on the disk.
    func truncate(after seq: UInt64) throws -> (lastSeq: UInt64, lastStamp: UInt64) {
        guard let journal = process.journal else { throw JournalError("the journal is closed") }
        simulation.note("\(simulation.name(of: node)) drops seqs \(seq + 1)…\(journal.lastSeq): the leader does not hold them")
        // What a leader acknowledged is never dropped (the core refuses, and the member stops).
        for (acked, action) in simulation.acksSent where acked > seq && acked <= journal.lastSeq {
            guard let held = try journal.read(from: acked, limit: 1).first, held.header.seq == acked,
                held.header.clientID == action.client && held.header.clientSeq == action.clientSeq
            else { continue }
            simulation.fail("ACKs survive failover", "\(simulation.name(of: node)) drops seq \(acked), acknowledged, at its leader's word")
            throw Refused()
        }
        process.cuts += 1
        try journal.truncate(after: seq)
        return (journal.lastSeq, try journal.history(at: journal.lastSeq) ?? 0)
    }

    func adopt(cluster: UInt32, clientScope: ClientScope) throws {
        guard let journal = process.journal else { throw JournalError("the journal is closed") }
        do {
            try journal.adopt(cluster: cluster, clientScope: clientScope)
        } catch let error as JournalError where error.code != nil {
            // The disk failed it (the member exits and starts again), not the rule.
            throw error
        } catch {
            simulation.fail(
                "standby", "\(simulation.name(of: node)) holds records of another cluster and cannot adopt \(String(cluster, radix: 16))")
            throw Refused()
        }
    }

    func reconnect() throws { simulation.connect(index) }

    /// Written whole and synced, as `Journal.keepQuarantine` does.
    func keepQuarantine(_ entries: [Quarantine]) throws {
        guard let journal = process.journal else { throw JournalError("the journal is closed") }
        try journal.keepQuarantine(entries)
    }
}
