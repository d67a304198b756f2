/// A message too large for one frame travels as consecutive parts.
///
/// Nodes accept frames of at most 16 MiB, and a whole state (a STATE with `fullState`, a SNAPSHOT
/// reply) can be larger. Such a message is sent as `count` messages with the same topic and header
/// plus the flag `part`, each payload being `u32 index, u32 count` (little-endian) and the next
/// slice of the original payload. A receiver puts them back together with ``MessageAssembler``; a
/// part lost or out of order drops the whole message, which the receiver then repairs as it repairs
/// any lost update (a view asks for a snapshot).
public enum MessageParts {
    /// Slices of this size keep every part far below the 16 MiB receive limit.
    public static let defaultPartBytes = 4 << 20
    /// The most parts one message may have: 1,024 parts of 4 MiB is 4 GiB, the snapshot format's limit.
    public static let maxParts = 1024

    /// Parts of a SNAPSHOT sent per grant of credit: a store sends this many, then waits for the
    /// receiver to ask for more (the zguide's credit-based flow control), so a peer that stops reading
    /// never has more than this many parts of a state queued for it.
    public static let credit = 4

    /// The request for the next parts of a SNAPSHOT, when `part` is the last one of a grant and more
    /// are to come: SNAPSHOT-REQUEST with the flag `part`, `seq` = the snapshot's version, `ref` = the
    /// index of the next part wanted. Nil for any other message.
    public static func continuation(after part: Message) -> Message? {
        guard part.kind == .snapshot, part.header.flags.contains(.part), part.payload.count >= 8 else { return nil }
        let index = Int(part.payload.readLittleEndian(UInt32.self, at: 0))
        let count = Int(part.payload.readLittleEndian(UInt32.self, at: 4))
        guard (index + 1) % credit == 0, index + 1 < count else { return nil }
        return Message(header: Header(kind: .snapshotRequest, flags: .part, seq: part.header.seq, ref: UInt64(index + 1)))
    }

    /// `message` itself when its payload fits one part, else its parts in order.
    public static func split(_ message: Message, partBytes: Int = defaultPartBytes) -> [Message] {
        let size = max(partBytes, 1)
        guard message.payload.count > size else { return [message] }
        let count = (message.payload.count + size - 1) / size
        var header = message.header
        header.flags.insert(.part)
        return (0..<count).map { index in
            var payload: [UInt8] = []
            let slice = message.payload[(index * size)..<min(message.payload.count, (index + 1) * size)]
            payload.reserveCapacity(8 + slice.count)
            payload.appendLittleEndian(UInt32(index))
            payload.appendLittleEndian(UInt32(count))
            payload.append(contentsOf: slice)
            return Message(topic: message.topic, header: header, payload: payload)
        }
    }
}

/// Puts parts (``MessageParts``) back together, one message at a time, for one stream of messages
/// from one sender (a subscription to one store, a DEALER asking one store).
public struct MessageAssembler: Sendable {
    private struct Pending: Sendable {
        var topic: [UInt8]
        var header: Header
        var count: Int
        var next: Int
        var payload: [UInt8]
    }
    private var pending: Pending?
    /// Messages dropped because a part was missing, out of order or malformed.
    public private(set) var dropped = 0

    public init() {}

    /// The message `message` completes or is (itself, when it is not a part); nil while parts are
    /// still missing, and for a part that does not follow the one before it.
    public mutating func accept(_ message: Message) -> Message? {
        guard message.header.flags.contains(.part) else { return message }
        guard message.payload.count >= 8 else { return drop() }
        let index = Int(message.payload.readLittleEndian(UInt32.self, at: 0))
        let count = Int(message.payload.readLittleEndian(UInt32.self, at: 4))
        guard count >= 2, count <= MessageParts.maxParts, index < count else { return drop() }
        let slice = message.payload[8...]
        if index == 0 {
            if pending != nil { dropped += 1 }
            pending = Pending(topic: message.topic, header: message.header, count: count, next: 1, payload: Array(slice))
        } else {
            guard var current = pending, current.next == index, current.count == count, current.header == message.header,
                current.topic == message.topic
            else { return drop() }
            pending = nil  // the buffer is uniquely referenced while it grows
            current.payload.append(contentsOf: slice)
            current.next += 1
            pending = current
        }
        guard let done = pending, done.next == done.count else { return nil }
        pending = nil
        var header = done.header
        header.flags.remove(.part)
        return Message(topic: done.topic, header: header, payload: done.payload)
    }

    private mutating func drop() -> Message? {
        pending = nil
        dropped += 1
        return nil
    }
}
