import FluxCore

/// Where the dispatcher keeps every sequenced action: in memory (tests, embedded clusters) or in a
/// durable `Journal`.
public protocol ActionLog: AnyObject {
    /// The newest seq in the log (0 when empty).
    var lastSeq: UInt64 { get }
    /// Adds the next actions (seqs `lastSeq + 1…`, in order). They are durable once `commit()` returns.
    func append(_ actions: [Message]) throws
    /// Makes everything appended durable under the log's policy.
    func commit() throws
    /// Up to `limit` consecutive actions from seq `from` on (fewer at the end of the log).
    func read(from: UInt64, limit: Int) throws -> [Message]
    /// A REPLAY-BATCH payload of at most `limit` actions from `from` on, closed once they pass
    /// `maxBytes` (a larger single action travels alone); nil past the end of the log.
    func replayBatch(from: UInt64, limit: Int, maxBytes: Int) throws -> ReplayPlan.Batch?
}

extension ActionLog {
    /// Read and encoded; a journal builds the batch from its records' bytes instead.
    public func replayBatch(from: UInt64, limit: Int, maxBytes: Int) throws -> ReplayPlan.Batch? {
        ReplayPlan.batch(try read(from: from, limit: limit), maxBytes: maxBytes)
    }
}

/// A log held in memory: fast, and gone with the process.
public final class MemoryLog: ActionLog {
    private var messages: [Message] = []
    public init() {}
    public var lastSeq: UInt64 { UInt64(messages.count) }
    public func append(_ actions: [Message]) { messages.append(contentsOf: actions) }
    public func commit() {}
    public func read(from: UInt64, limit: Int) -> [Message] {
        let start = Int(max(from, 1) - 1)
        guard start < messages.count else { return [] }
        return Array(messages[start..<min(messages.count, start + limit)])
    }
}
