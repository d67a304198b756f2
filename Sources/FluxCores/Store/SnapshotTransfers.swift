import FluxCore

/// SNAPSHOT answers in parts, sent ``MessageParts/credit`` parts at a time: the rest of each answer
/// waits here until its peer asks for more. Bounded: at most `maxTransfers` answers wait (the oldest
/// is forgotten first; its peer times out and asks again), and peers asking for the same version share
/// one copy of its parts.
public struct SnapshotTransfers {
    public static let maxTransfers = 16
    private var waiting: [(peer: [UInt8], parts: [Message], next: Int)] = []
    /// The last answer split, by what identifies it: a selection's answer (its own topic) never
    /// shares the whole state's parts.
    private var lastSplit: (key: SplitKey, parts: [Message])? = nil

    struct SplitKey: Equatable {
        var kind: MessageKind, topic: [UInt8], seq: UInt64, history: UInt64, bytes: Int
    }

    public init() {}

    /// How many answers wait for their peers to ask for more.
    public var count: Int { waiting.count }

    /// The parts of `answer` to send to `peer` now; the rest wait for ``next(for:from:version:)``.
    public mutating func start(_ answer: Message, to peer: [UInt8]) -> [Message] {
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
        if waiting.count >= SnapshotTransfers.maxTransfers { waiting.removeFirst() }
        waiting.append((peer, parts, MessageParts.credit))
        return Array(parts.prefix(MessageParts.credit))
    }

    /// The next parts for `peer`, which asked for parts from index `from` of the snapshot at `version`;
    /// none when that is not where its answer stands (a late or repeated request).
    public mutating func next(for peer: [UInt8], from: UInt64, version: UInt64) -> [Message] {
        guard let index = waiting.firstIndex(where: { $0.peer == peer }), waiting[index].next == Int(from),
            waiting[index].parts.first?.header.seq == version
        else { return [] }
        let transfer = waiting[index]
        let end = min(transfer.next + MessageParts.credit, transfer.parts.count)
        if end == transfer.parts.count { waiting.remove(at: index) } else { waiting[index].next = end }
        return Array(transfer.parts[transfer.next..<end])
    }
}
