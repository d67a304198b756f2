import FluxCore
import Logging

/// One replay answer: REPLAY-BATCHes of the journal from `from` through `through` (at most
/// `maxBatches` of `batchSize`), then REPLAY-END(seq = head, ref = the last seq sent). A store asks
/// again from where the answer ended.
public struct ReplayPlan: Equatable, Sendable {
    public var peer: [UInt8]
    public var from: UInt64
    public var through: UInt64
    public var head: UInt64
    public var batchSize: Int
    public var maxBatches: Int
    /// Stamped on the batches and the end: the history they are served from.
    public var history: HistoryID = HistoryID(rawValue: 0)

    /// A batch closes once its actions pass this many bytes (a larger single action travels alone):
    /// far below the 16 MiB receive limit, so a batch of large actions is never dropped on arrival.
    public static let maxBatchBytes = 1 << 20
    /// One answer stops once it passes this many bytes; the store asks again from where it ended.
    public static let maxReplyBytes = 8 << 20

    public init(
        peer: [UInt8], from: UInt64, through: UInt64, head: UInt64, batchSize: Int, maxBatches: Int, history: HistoryID = HistoryID(rawValue: 0)
    ) {
        self.peer = peer
        self.from = from
        self.through = through
        self.head = head
        self.batchSize = batchSize
        self.maxBatches = maxBatches
        self.history = history
    }

    /// Bytes of batches this answer has produced so far, and how many.
    public var sentBytes = 0
    public var sentBatches = 0

    /// The whole answer at once, reading the journal with `read(from, limit)`. A read that fails ends
    /// the answer early (the store asks again).
    public func replies(reading read: (UInt64, Int) throws -> [Message], logger: Logger) -> [Message] {
        var replies: [Message] = []
        var plan: ReplayPlan? = self
        while let current = plan {
            let (messages, rest) = current.serve(budget: .max, reading: read, logger: logger)
            replies += messages
            plan = rest
        }
        return replies
    }

    /// One REPLAY-BATCH payload read from a log: `count` actions from the seq asked for through `last`.
    public struct Batch {
        public var payload: [UInt8]
        public var count: Int
        public var last: UInt64
        public init(payload: [UInt8], count: Int, last: UInt64) {
            self.payload = payload
            self.count = count
            self.last = last
        }
    }

    /// The next part of the answer: batches until about `budget` bytes (at least one batch), then what
    /// remains of the answer, or nil once the part ends with REPLAY-END. Serving answers part by part
    /// lets the dispatcher interleave them with its intake, so a long replay never delays an ACK much.
    public func serve(budget: Int, reading read: (UInt64, Int) throws -> [Message], logger: Logger) -> ([Message], ReplayPlan?) {
        serve(budget: budget, batches: { from, limit, maxBytes in try ReplayPlan.batch(read(from, limit), maxBytes: maxBytes) }, logger: logger)
    }

    /// The same, reading whole batches with `batch(from, limit, maxBytes)`: at most `limit` actions from
    /// `from` on, closed once they pass `maxBytes` (a larger single action travels alone); nil at the
    /// end of the log. A journal builds them from its records' bytes, decoding nothing.
    public func serve(
        budget: Int, batches batch: (UInt64, Int, Int) throws -> Batch?, logger: Logger
    ) -> ([Message], ReplayPlan?) {
        var replies: [Message] = []
        var rest = self
        var spent = 0
        while rest.from <= through && rest.sentBatches < maxBatches && rest.sentBytes < ReplayPlan.maxReplyBytes {
            guard spent < budget else { return (replies, rest) }
            let next: Batch?
            do {
                next = try batch(rest.from, Int(min(UInt64(batchSize), through - rest.from + 1)), ReplayPlan.maxBatchBytes)
            } catch {
                logger.error("journal read failed", metadata: ["from": "\(rest.from)", "error": "\(error)"])
                break
            }
            guard let next, next.count > 0 else { break }
            precondition(next.last >= rest.from, "a batch read from \(rest.from) on ends there or after")
            replies.append(
                Message(header: Header(kind: .replayBatch, seq: rest.from, ref: next.last, history: history.rawValue), payload: next.payload))
            rest.sentBytes += next.payload.count
            rest.sentBatches += 1
            spent += next.payload.count
            rest.from = next.last + 1
        }
        replies.append(Message(header: Header(kind: .replayEnd, seq: head, ref: rest.from - 1, history: history.rawValue)))
        return (replies, nil)
    }

    /// The answer once `batch`, the REPLAY-BATCH its next part began with, has been delivered: what a
    /// part cut short by a full queue goes on from.
    public func advanced(past batch: Message) -> ReplayPlan {
        precondition(batch.kind == .replayBatch && batch.header.seq == from && batch.header.ref >= from, "the batch this answer served next")
        var rest = self
        rest.from = batch.header.ref + 1
        rest.sentBatches += 1
        rest.sentBytes += batch.payload.count
        return rest
    }

    /// The first batch of `slice`: its actions until they pass `maxBytes` (at least one). The
    /// dispatcher's journal builds its batches with it too.
    package static func batch(_ slice: [Message], maxBytes: Int) -> Batch? {
        guard !slice.isEmpty else { return nil }
        var end = 0
        var bytes = 0
        while end < slice.count && (end == 0 || bytes + entryBytes(slice[end]) <= maxBytes) {
            bytes += entryBytes(slice[end])
            end += 1
        }
        let batch = Array(slice[..<end])
        guard let last = batch.last else { return nil }
        return Batch(payload: ReplayBatch.encode(batch), count: batch.count, last: last.header.seq)
    }

    /// `batch` (read from `from` on) with every action quarantined in `quarantine` made a tombstone:
    /// its header, flagged ``Header/Flags/quarantined``, and no payload. `read(from, count)` reads the
    /// batch's actions again; a batch with none quarantined is returned as it is, unread.
    public static func tombstoned(
        _ batch: Batch, from: UInt64, quarantine: [UInt64: Quarantine], read: (UInt64, Int) throws -> [Message]
    ) rethrows -> Batch {
        guard !quarantine.isEmpty, quarantine.keys.contains(where: { (from...batch.last).contains($0) }) else { return batch }
        let actions = try read(from, batch.count).map { action -> Message in
            guard quarantine[action.header.seq] != nil else { return action }
            var tombstone = Message(topic: action.topic, header: action.header, payload: [])
            tombstone.header.flags.insert(.quarantined)
            return tombstone
        }
        return ReplayPlan.batch(actions, maxBytes: .max) ?? batch
    }

    /// About what one action adds to a batch: its topic and payload plus room for its header and lengths.
    static func entryBytes(_ message: Message) -> Int { message.topic.count + message.payload.count + message.header.actionType.utf8.count + 96 }
}
