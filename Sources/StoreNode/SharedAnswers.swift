import FluxCore
import NodeCores
import ZeroMQ

/// The snapshot answers libzmq holds for a store's peers, one shared copy per distinct answer (or
/// part of one): made when the first peer is sent it, found again for the next while any queue still
/// holds it, freed when the last lets go. Their bytes, all peers together, stay within
/// ``SnapshotBudget``.
struct SharedAnswers {
    let ledger = SharedFrame.Ledger()
    private var live: [Key: Entry] = [:]
    /// How many entries `live` may reach before the copies libzmq let go of are forgotten: twice
    /// what was left the last time, so a flood of small answers costs a lookup each, not a sweep.
    private var sweepAt = 256

    /// What identifies an answer's bytes, as ``SnapshotTransfers`` does: the same kind, topic,
    /// version and history hold the same state; a part adds its index, the first bytes of its payload.
    private struct Key: Hashable {
        var kind: UInt8, flags: UInt16, topic: [UInt8], seq: UInt64, history: UInt64, count: Int, prefix: [UInt8]

        init(_ message: Message) {
            kind = message.kind.rawValue
            flags = message.header.flags.rawValue
            topic = message.topic
            seq = message.header.seq
            history = message.header.history
            count = message.payload.count
            prefix = Array(message.payload.prefix(8))
        }
    }

    private struct Entry {
        weak var frame: SharedFrame?
    }

    /// Bytes the answers hold now, all peers together.
    var bytes: Int { ledger.bytes }

    /// The shared copy of `message`'s payload to queue: the one queued already, or a new one when the
    /// budget has room for it; nil when it has not (the answer is refused).
    mutating func frame(for message: Message) -> SharedFrame? {
        precondition(!message.payload.isEmpty, "an empty payload is sent as it is")
        let key = Key(message)
        if let frame = live[key]?.frame { return frame }
        if live.count >= sweepAt {
            live = live.filter { $0.value.frame != nil }
            sweepAt = max(256, live.count * 2)
        }
        guard SnapshotBudget.admits(message.payload.count, held: ledger.bytes) else { return nil }
        let frame = SharedFrame(copying: message.payload, ledger: ledger)
        live[key] = Entry(frame: frame)
        return frame
    }
}
