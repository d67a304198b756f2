import FluxCore
import Logging

/// What a standby's interpreter needs of the world it runs in: its connection to the leader and its
/// journal. The real pair member (`PairLoop`) gives it a DEALER and the journal on disk; the simulator
/// its network and its disk, whose fsync returns later.
package protocol StandbyIO: AnyObject {
    func time() -> NodeTime
    /// Sends to the leader (the replication DEALER).
    func sendToLeader(_ message: Message)
    /// Appends the leader's records to the journal as they came.
    func append(_ records: StampedRecords) throws -> StandbyAppend
    /// Makes what the journal holds durable. True when it is on return; false when the sync is under
    /// way, and the host calls ``StandbyInterpreter/synced(through:)`` once it has returned.
    func sync(through seq: UInt64) throws -> Bool
    /// The first seq of the run of records (one history stamp) that ends at `seq`.
    func firstSeqOfRun(endingAt seq: UInt64) throws -> UInt64
    /// The history stamp of the journal's record at `seq` (nil: none there).
    func stamp(at seq: UInt64) throws -> UInt64?
    /// Drops every record after `seq`, synced; says what the journal then ends with.
    func truncate(after seq: UInt64) throws -> (lastSeq: UInt64, lastStamp: UInt64)
    /// Takes the leader's cluster id and client-scope secret for the journal.
    func adopt(cluster: UInt32, clientScope: ClientScope) throws
    /// Drops the connection to the leader and makes a new one (to whoever leads now).
    func reconnect() throws
    /// Keeps the leader's quarantine list beside the journal, durably.
    func keepQuarantine(_ entries: [Quarantine]) throws
    /// What the cluster's stores need of the journal, as ``DispatcherIO/storeNeeds()`` says for a
    /// leader: a standby that leads serves them. Nil when that cannot be known here, and then
    /// retention removes nothing.
    func storeNeeds() -> [JournalRetention.Need]?
}

extension StandbyIO {
    /// A host that cannot tell what its stores need (the simulator's): retention removes nothing.
    package func storeNeeds() -> [JournalRetention.Need]? { nil }
}

/// What became of a standby's append.
package enum StandbyAppend {
    case written
    /// Not written: the journal is refusing appends until the host follows again from its end.
    case skipped
    /// The disk has no room: the append is undone whole, and the rest of the commands are dropped (the
    /// host follows again later, from what the journal holds).
    case noRoom
}

/// Carries out a ``StandbyCore``'s commands, in the order the core gave them, against a ``StandbyIO``,
/// until the core has none left (carrying one out may queue another: an append queues its ACK, which
/// must go now, not when the leader next sends something). The real pair member and the simulator both
/// run it.
package final class StandbyInterpreter {
    package let core: StandbyCore
    unowned let io: any StandbyIO
    let logger: Logger

    /// The journal, when it keeps checkpoints (``CheckpointedLog``): the standby keeps the schedule
    /// book live from the records it appends and checkpoints it as a leader does, so that once it leads
    /// it starts from a checkpoint and its own tail, never from the whole journal.
    let checkpoints: (any CheckpointedLog)?
    /// The schedule book as the journal stands through ``bookThrough``; nil until it is first needed,
    /// and again after records were dropped (it is then read again from a checkpoint and the journal).
    private var book: ScheduleBook?
    private var bookThrough: UInt64 = 0
    /// `[journal] retain_mb` in bytes (``DispatcherRules/retainBytes``): past it, the journal's oldest
    /// segments go after each checkpoint, as on the leader (``JournalRetention/run(on:budget:stores:others:logger:)``).
    let retainBytes: Int?
    /// What retention last did or held back: nil until it first ran.
    package private(set) var retention: String?

    package init(
        core: StandbyCore, io: any StandbyIO, logger: Logger, checkpoints: (any CheckpointedLog)? = nil, retainBytes: Int? = nil
    ) {
        precondition(retainBytes.map { $0 > 0 } ?? true, "a retention budget is positive")
        self.core = core
        self.io = io
        self.logger = logger
        self.checkpoints = checkpoints
        self.retainBytes = retainBytes
    }

    /// Carries out what the core has decided, and what that leads it to decide, until nothing is left.
    package func carryOut() throws {
        var commands = core.takeCommands()
        while !commands.isEmpty {
            try carryOut(commands)
            commands = core.takeCommands()
        }
    }

    /// Carries out one batch: an append that finds no room drops the rest of it.
    private func carryOut(_ commands: [StandbyCore.Command]) throws {
        for command in commands {
            switch command {
            case .send(let message): io.sendToLeader(message)
            case .append(let records):
                switch try io.append(records) {
                case .written: break
                case .skipped: continue
                case .noRoom: return
                }
                keepBook(records)
                if let last = records.lastSeq, try io.sync(through: last) {
                    core.durable(through: last)
                    checkpointIfDue()
                }
            case .dropRun(let seq):
                try drop(after: try io.firstSeqOfRun(endingAt: seq) - 1)
            case .truncate(let seq):
                // The leader found where the logs part: drop what follows, keep what it holds too.
                try drop(after: seq)
            case .adopt(let cluster, let scope): try io.adopt(cluster: cluster, clientScope: scope)
            case .reconnect: try io.reconnect()
            case .keepQuarantine(let entries, let digest):
                // The leader's list, kept as it keeps its own: this member skips (and can release) the
                // same actions once it leads. Not written (a full disk): the leader sends it again.
                do {
                    try io.keepQuarantine(entries)
                    core.quarantineKept(digest: digest)
                    logger.info("keeping the leader's quarantine list", metadata: ["entries": "\(entries.count)"])
                } catch {
                    logger.error("the leader's quarantine list could not be kept", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// The journal's sync has returned: what it holds through `seq` is durable.
    package func synced(through seq: UInt64) throws {
        core.durable(through: seq)
        checkpointIfDue()
        try carryOut()
    }

    /// Notes the schedule records of an append in the live book (only those: a filter on the record's
    /// bytes, no decode, for the rest).
    private func keepBook(_ records: StampedRecords) {
        guard checkpoints != nil, book != nil else { return }
        guard let first = records.firstSeq, first == bookThrough + 1, let last = records.lastSeq else {
            book = nil
            return
        }
        for index in 0..<records.count {
            let body = records.records[index].body
            guard records.bytes.withUnsafeBytes({ Schedules.concernsSchedules(recordBody: UnsafeRawBufferPointer(rebasing: $0[body])) }),
                let action = try? records.message(index)
            else { continue }
            book?.note(action.topic, header: action.header, payload: action.payload)
        }
        bookThrough = last
    }

    /// Checkpoints the live book when the journal asks for one, everything appended being durable.
    private func checkpointIfDue() {
        guard let log = checkpoints, log.lastSeq > 0, core.durableSeq == log.lastSeq, log.checkpointDue(head: log.lastSeq) else { return }
        let head = log.lastSeq
        do {
            if book == nil || bookThrough != head {
                // Read once (at start, or after a truncation), as a start reads it.
                (book, bookThrough) = (try DispatcherBoot.schedules(of: log, logger: logger).book, head)
            }
            guard let book, let record = try log.read(from: head, limit: 1).first, record.header.seq == head else {
                preconditionFailure("the journal holds its newest seq, \(head), and the book follows it")
            }
            try log.writeCheckpoint(seq: head, bytes: DispatcherCheckpoint(seq: head, anchor: .init(record.header), book: book).encoded())
            // After the checkpoint, as the leader does: the schedules of the records that go are in it.
            // It needs nothing for another member: the leader holds at least what it holds.
            if let budget = retainBytes {
                let note = try JournalRetention.run(on: log, budget: budget, stores: io.storeNeeds(), logger: logger)
                retention = note
                // The standby answers no STATUS: its ACKs tell the leader, whose status and `top` show it.
                core.retained(RetentionReport(journalFirstSeq: log.firstSeq, note: note))
            }
        } catch {
            logger.warning(
                "a checkpoint could not be written: a start as the leader reads more of the journal",
                metadata: ["seq": "\(head)", "error": "\(error)"])
        }
    }

    private func drop(after seq: UInt64) throws {
        book = nil
        // What was acknowledged is never dropped: the member stops instead (the core decides).
        if let refusal = core.refusalToDrop(after: seq, stampAfter: seq < core.lastSeq ? try io.stamp(at: seq + 1) : nil) {
            throw StandbyCore.RefusedToDrop(description: refusal)
        }
        let end = try io.truncate(after: seq)
        logger.warning("dropped records the leader does not hold", metadata: ["after": "\(seq)"])
        core.truncated(lastSeq: end.lastSeq, lastStamp: end.lastStamp, now: io.time())
        // The cut is synced: all the journal kept is on the disk.
        core.durable(through: end.lastSeq)
    }
}
