import FluxCore

/// SNAPSHOT answers in parts, sent ``MessageParts/credit`` parts at a time: the rest of each answer
/// waits here until its peer asks for more. Bounded: at most `maxTransfers` answers and `maxBytes` of
/// parts wait (the oldest is forgotten first; its peer times out and asks again), an answer whose peer
/// has not asked for more within `creditTimeoutMs` is dropped (a peer that left), and peers asking for
/// the same version share one copy of its parts. Every number from the wire is checked before use.
public struct SnapshotTransfers {
    public static let maxTransfers = 16
    public static let maxBytes = 64 << 20
    public static let creditTimeoutMs: UInt64 = 10_000
    private var waiting: [(peer: [UInt8], key: SplitKey, parts: [Message], next: Int, bytes: Int, lastMs: UInt64)] = []
    /// The last answer split, by what identifies it: a selection's answer (its own topic) never
    /// shares the whole state's parts.
    private var lastSplit: (key: SplitKey, parts: [Message])? = nil

    struct SplitKey: Equatable {
        var kind: MessageKind, topic: [UInt8], seq: UInt64, history: UInt64, bytes: Int
    }

    public init() {}

    /// How many answers wait for their peers to ask for more.
    public var count: Int { waiting.count }

    /// Bytes of parts the waiting answers hold; answers that share their parts count once.
    public var bytes: Int {
        var seen: [SplitKey] = []
        return waiting.reduce(0) { total, transfer in
            if seen.contains(transfer.key) { return total }
            seen.append(transfer.key)
            return total + transfer.bytes
        }
    }

    /// The parts of `answer` to send to `peer` now (`now` in ms); the rest wait for
    /// ``next(for:from:version:now:)``.
    public mutating func start(_ answer: Message, to peer: [UInt8], now: UInt64) -> [Message] {
        let key = SplitKey(
            kind: answer.kind, topic: answer.topic, seq: answer.header.seq, history: answer.header.history, bytes: answer.payload.count)
        let parts: [Message]
        if let lastSplit, lastSplit.key == key, answer.kind == .snapshot {
            parts = lastSplit.parts
        } else {
            parts = MessageParts.split(answer)
            if parts.count > MessageParts.credit { lastSplit = (key, parts) }
        }
        waiting.removeAll { $0.peer == peer }
        guard parts.count > MessageParts.credit else { return parts }
        let size = answer.payload.count
        // Parts another waiting answer shares take no more memory.
        func added() -> Int { waiting.contains { $0.key == key } ? 0 : size }
        while !waiting.isEmpty && (waiting.count >= SnapshotTransfers.maxTransfers || bytes + added() > SnapshotTransfers.maxBytes) {
            waiting.removeFirst()
        }
        waiting.append((peer, key, parts, MessageParts.credit, size, now))
        assert(waiting.count <= SnapshotTransfers.maxTransfers, "at most maxTransfers answers wait")
        return Array(parts.prefix(MessageParts.credit))
    }

    /// The next parts for `peer`, which asked for parts from index `from` of the snapshot at `version`;
    /// none when that is not where its answer stands (a late, repeated or forged request).
    public mutating func next(for peer: [UInt8], from: UInt64, version: UInt64, now: UInt64) -> [Message] {
        guard let index = waiting.firstIndex(where: { $0.peer == peer }), UInt64(waiting[index].next) == from,
            waiting[index].parts.first?.header.seq == version
        else { return [] }
        let transfer = waiting[index]
        let end = min(transfer.next + MessageParts.credit, transfer.parts.count)
        // An answer whose parts have all gone waits no more: one that waits has parts left.
        precondition(end > transfer.next, "a request for more gets at least one part")
        if end == transfer.parts.count {
            waiting.remove(at: index)
        } else {
            waiting[index].next = end
            waiting[index].lastMs = now
        }
        return Array(transfer.parts[transfer.next..<end])
    }

    /// Drops answers whose peers stopped asking for more (they left, or stalled), and the shared copy
    /// of parts once nothing waits: the memory goes with the peers.
    public mutating func expire(now: UInt64) {
        waiting.removeAll { now >= $0.lastMs && now - $0.lastMs > SnapshotTransfers.creditTimeoutMs }
        if waiting.isEmpty { lastSplit = nil }
    }
}
