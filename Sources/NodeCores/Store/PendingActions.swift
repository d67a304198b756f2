import FluxCore

/// Live actions that arrived ahead of a gap, by seq, waiting for the gap to be repaired.
///
/// Bounded by count and by payload bytes: past either bound the newest are dropped, and the replay
/// brings them later.
struct PendingActions {
    let maxCount: Int
    let maxBytes: Int
    private var bySeq: [UInt64: Message] = [:]
    /// Payload bytes held.
    private(set) var bytes = 0

    init(maxCount: Int, maxBytes: Int) {
        precondition(maxCount > 0 && maxBytes > 0, "a gap can hold something")
        self.maxCount = maxCount
        self.maxBytes = maxBytes
    }

    var count: Int { bySeq.count }
    var isEmpty: Bool { bySeq.isEmpty }

    /// Keeps `message`, within both bounds; a seq held already is kept as it was.
    mutating func hold(_ message: Message) {
        guard bySeq.count < maxCount, bytes + message.payload.count <= maxBytes, bySeq[message.header.seq] == nil else { return }
        precondition(message.header.seq > 0, "a held action has a seq")
        bySeq[message.header.seq] = message
        bytes += message.payload.count
        assert(bySeq.count <= maxCount && bytes <= maxBytes, "the held actions stay within both bounds")
    }

    /// The action held at `seq`, no longer held.
    mutating func take(_ seq: UInt64) -> Message? {
        guard let message = bySeq.removeValue(forKey: seq) else { return nil }
        bytes -= message.payload.count
        precondition(bytes >= 0, "the bytes held are those of the actions held")
        return message
    }

    /// Keeps only the actions `keep` accepts.
    mutating func retain(where keep: (Message) -> Bool) {
        bySeq = bySeq.filter { keep($0.value) }
        bytes = bySeq.values.reduce(0) { $0 + $1.payload.count }
    }

    /// Forgets everything.
    mutating func removeAll() { retain { _ in false } }

    /// Forgets the actions at or below `version`: applied meanwhile, from the replay.
    mutating func drop(through version: UInt64) {
        guard let lowest = bySeq.keys.min(), lowest <= version else { return }
        retain { $0.header.seq > version }
        assert(bySeq.keys.allSatisfy { $0 > version }, "nothing at or below the version is held")
    }

    /// Whether the action at `seq` is held.
    func holds(_ seq: UInt64) -> Bool { bySeq[seq] != nil }
}
