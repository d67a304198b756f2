import FluxCore

/// Where the dispatcher keeps every sequenced action: in memory (tests, embedded clusters) or in a
/// durable `Journal`. Besides the actions, a log carries what the dispatcher starts from
/// (``DispatcherBoot``): the history this opening of it serves, its oldest seq and the secret that
/// scopes client ids.
public protocol ActionLog: AnyObject {
    /// The newest seq in the log (0 when empty).
    var lastSeq: UInt64 { get }
    /// The oldest seq the log holds (above 1 once older segments were removed).
    var firstSeq: UInt64 { get }
    /// The history this opening of the log serves: the cluster id kept with the log and an epoch later
    /// than any earlier opening's (``DispatcherBoot/history(cluster:previousEpoch:wallNanoseconds:newCluster:)``).
    var history: HistoryID { get }
    /// The secret that scopes client ids to authenticated keys (``ClientScope``), kept with the log:
    /// the scoped ids it holds must mean the same after a restart.
    var clientScope: ClientScope { get }
    /// Bytes the log takes on disk (0 for a log in memory).
    var sizeInBytes: Int { get }
    /// Adds the next actions (seqs `lastSeq + 1…`, in order). They are durable once `commit()` returns.
    func append(_ actions: [Message]) throws
    /// Makes everything appended durable under the log's policy.
    func commit() throws
    /// Up to `limit` consecutive actions from seq `from` on (fewer at the end of the log).
    func read(from: UInt64, limit: Int) throws -> [Message]
    /// A REPLAY-BATCH payload of at most `limit` actions from `from` on, closed once they pass
    /// `maxBytes` (a larger single action travels alone); nil past the end of the log.
    func replayBatch(from: UInt64, limit: Int, maxBytes: Int) throws -> ReplayPlan.Batch?
    /// The (client id, client seq, seq) of every action from `from` on: what the dispatcher's dedup
    /// table is rebuilt from when it starts.
    func forEachDispatch(from: UInt64, _ body: (_ clientID: UInt64, _ clientSeq: UInt64, _ seq: UInt64) -> Void) throws
    /// Every action from `from` on that makes, cancels or fires a schedule (``Schedules``), in order:
    /// what the dispatcher's schedules are rebuilt from when it starts.
    func forEachScheduling(from: UInt64, _ body: (Message) -> Void) throws
    /// The history stamp of the record at `seq` (nil: none there), for log matching with a standby.
    func stamp(at seq: UInt64) throws -> UInt64?
}

/// A log that writes the records the dispatcher stamped (``StampedRecords``) as they are: the journal.
package protocol RecordLog: ActionLog {
    func append(_ bursts: [StampedRecords]) throws
}

/// A log that keeps the dispatcher's checkpoints beside its records (``DispatcherCheckpoint``): the journal.
package protocol CheckpointedLog: ActionLog {
    /// The checkpoints kept, newest first: each one's seq, where it is (for messages) and its bytes.
    func checkpoints() -> [(seq: UInt64, name: String, bytes: [UInt8])]
    /// Whether one is due now that the log holds `head`, durable: the log rolled to a new segment since
    /// the last one, or ``checkpointEveryRecords`` records were added since.
    func checkpointDue(head: UInt64) -> Bool
    /// Keeps `bytes` as the checkpoint through `seq`, whole or not at all, and lets older ones go but one.
    func writeCheckpoint(seq: UInt64, bytes: [UInt8]) throws
    /// Each segment's seqs and size, oldest first (``JournalRetention``).
    func segmentSpans() -> [JournalRetention.Segment]
    /// Lets the `count` oldest segments go (never the newest).
    func removeOldestSegments(_ count: Int) throws
}

extension ActionLog {
    /// Adds the next actions as the records the dispatcher stamped them into: a ``RecordLog`` writes
    /// their bytes as they are; any other log is given them decoded.
    package func append(records bursts: [StampedRecords]) throws {
        if let log = self as? any RecordLog { return try log.append(bursts) }
        for burst in bursts { try append(try burst.messages()) }
    }

    /// Read and encoded; a journal builds the batch from its records' bytes instead.
    public func replayBatch(from: UInt64, limit: Int, maxBytes: Int) throws -> ReplayPlan.Batch? {
        ReplayPlan.batch(try read(from: from, limit: limit), maxBytes: maxBytes)
    }

    /// Read; a journal reads the record's header alone instead.
    public func stamp(at seq: UInt64) throws -> UInt64? {
        guard let record = try read(from: seq, limit: 1).first, record.header.seq == seq else { return nil }
        return record.header.history
    }

    /// Read in slices and filtered; a journal decodes only the records it concerns instead.
    public func forEachScheduling(from: UInt64, _ body: (Message) -> Void) throws {
        var next = max(from, firstSeq, 1)
        while next <= lastSeq {
            let slice = try read(from: next, limit: 4096)
            guard let last = slice.last else { return }
            precondition(last.header.seq >= next, "a log reads forward from where it is asked")
            for action in slice where action.header.flags.contains(.scheduled) || Schedules.isScheduling(topic: action.topic) { body(action) }
            next = last.header.seq + 1
        }
    }

    /// Read in slices; a journal reads the records' headers alone instead.
    public func forEachDispatch(from: UInt64, _ body: (_ clientID: UInt64, _ clientSeq: UInt64, _ seq: UInt64) -> Void) throws {
        var next = max(from, firstSeq, 1)
        while next <= lastSeq {
            let slice = try read(from: next, limit: 4096)
            guard let last = slice.last else { return }
            precondition(last.header.seq >= next, "a log reads forward from where it is asked")
            for action in slice { body(action.header.clientID, action.header.clientSeq, action.header.seq) }
            next = last.header.seq + 1
        }
    }
}

/// A log held in memory: fast, and gone with the process. It serves the history and client scope it
/// is made with (the shell makes them, from the clock and entropy the core never reads), from seq 1.
public final class MemoryLog: ActionLog {
    private var messages: [Message] = []
    public let history: HistoryID
    public let clientScope: ClientScope

    public init(history: HistoryID = HistoryID(rawValue: 0), clientScope: ClientScope = ClientScope(k0: 0, k1: 0)) {
        self.history = history
        self.clientScope = clientScope
    }

    public var lastSeq: UInt64 { UInt64(messages.count) }
    /// Nothing is ever removed from a log in memory.
    public var firstSeq: UInt64 { 1 }
    public var sizeInBytes: Int { 0 }
    public func append(_ actions: [Message]) { messages.append(contentsOf: actions) }
    public func commit() {}
    public func read(from: UInt64, limit: Int) -> [Message] {
        let start = Int(max(from, 1) - 1)
        guard start < messages.count else { return [] }
        return Array(messages[start..<min(messages.count, start + limit)])
    }
}
