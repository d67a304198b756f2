/// The payload of a REPLAY-BATCH: consecutive ACTION messages packed into one frame.
///
/// Layout (little-endian): `u32 count`, then per message `u32 topic length, topic, u32 header length,
/// header, u32 payload length, payload`.
public enum ReplayBatch {
    public static func encode(_ messages: [Message]) -> [UInt8] {
        var out = [UInt8]()
        // One allocation for the whole batch (reserving per entry would copy it once per entry).
        var size = 4
        for message in messages { size += entrySize(message) }
        out.reserveCapacity(size)
        out.appendLittleEndian(UInt32(messages.count))
        for message in messages { appendEntry(message, to: &out) }
        return out
    }

    /// The bytes ``appendEntry(_:to:)`` writes for `message` (a version-1 header would be 8 fewer).
    public static func entrySize(_ message: Message) -> Int {
        12 + message.topic.count + Header.fixedSize + message.header.actionType.utf8.count + message.payload.count
    }

    /// One message as `u32 topic length, topic, u32 header length, header, u32 payload length, payload`:
    /// the entry format of replay batches and of journal records.
    public static func appendEntry(_ message: Message, to out: inout [UInt8]) {
        appendEntry(topic: message.topic, message.topic.indices, header: message.header, payload: message.payload, message.payload.indices, to: &out)
    }

    /// One entry whose topic and payload are the bytes in `topicRange` of `topic` and in `payloadRange`
    /// of `payload` (a batch's entry, read in place), its header encoded straight into `out`.
    package static func appendEntry(
        topic: [UInt8], _ topicRange: Range<Int>, header: Header, payload: [UInt8], _ payloadRange: Range<Int>, to out: inout [UInt8]
    ) {
        out.appendLittleEndian(UInt32(topicRange.count))
        topic.withUnsafeBytes { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[topicRange])) }
        let headerLength = out.count
        out.appendLittleEndian(UInt32(0))  // filled in once the header is written
        header.encode(into: &out)
        let length = UInt32(out.count - headerLength - 4)
        out.writeLittleEndian(length, at: headerLength)
        out.appendLittleEndian(UInt32(payloadRange.count))
        payload.withUnsafeBytes { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[payloadRange])) }
    }

    /// Decodes one entry that fills `bytes` exactly.
    public static func decodeEntry(_ bytes: ArraySlice<UInt8>) throws(ProtocolError) -> Message {
        let array = Array(bytes)
        var offset = 0
        func readPart() throws(ProtocolError) -> [UInt8] {
            guard array.count - offset >= 4 else { throw ProtocolError(.truncated, "entry ends inside a length") }
            let length = Int(array.readLittleEndian(UInt32.self, at: offset))
            offset += 4
            guard array.count - offset >= length else { throw ProtocolError(.truncated, "entry ends inside a \(length)-byte part") }
            defer { offset += length }
            return Array(array[offset..<offset + length])
        }
        let topic = try readPart()
        let header = try Header(decoding: try readPart())
        let payload = try readPart()
        guard offset == array.count else { throw ProtocolError(.malformedPayload, "entry has \(array.count - offset) trailing bytes") }
        return Message(topic: topic, header: header, payload: payload)
    }

    public static func decode(_ bytes: [UInt8]) throws(ProtocolError) -> [Message] {
        try decode(bytes, holding: .action)
    }

    /// The messages of a batch in this layout whose every entry must be of `kind` (ACTION in replay and
    /// ACTION-BATCH, DISPATCH in a DISPATCH-BATCH).
    public static func decode(_ bytes: [UInt8], holding kind: MessageKind) throws(ProtocolError) -> [Message] {
        messages(of: try entries(bytes, holding: kind), in: bytes)
    }

    /// `entries` of the batch `bytes` as messages, each with copies of its parts.
    package static func messages(of entries: [Entry], in bytes: [UInt8]) -> [Message] {
        var messages: [Message] = []
        messages.reserveCapacity(entries.count)
        // Entries of a batch are mostly of one app: an entry whose topic is the one before's shares
        // its array (one allocation fewer per action).
        var previous: (range: Range<Int>, array: [UInt8])? = nil
        for entry in entries {
            if previous.map({ !bytes.equal($0.range, entry.topic) }) ?? true {
                previous = (entry.topic, Array(bytes[entry.topic]))
            }
            messages.append(Message(topic: previous?.array ?? [], header: entry.header, payload: Array(bytes[entry.payload])))
        }
        return messages
    }

    /// One entry of a batch, read in place: where its topic and payload lie in the batch's bytes, and
    /// its header, decoded.
    package struct Entry {
        package var topic: Range<Int>
        package var header: Header
        package var payload: Range<Int>
    }

    /// The entries of a batch in this layout, each of `kind`, without copying their parts: the
    /// dispatcher admits a DISPATCH-BATCH's entries from the batch's own bytes. The checks are
    /// ``decode(_:holding:)``'s, which reads through this.
    package static func entries(_ bytes: [UInt8], holding kind: MessageKind) throws(ProtocolError) -> [Entry] {
        // A cursor of its own, not a variable captured by nested functions: a captured variable is
        // boxed, and every use of it checked for overlapping access at run time.
        var cursor = Cursor(bytes: bytes)
        let count = try cursor.readLength()
        // Each entry takes at least 12 bytes of lengths: a larger count cannot be honest.
        guard count <= (bytes.count - cursor.offset) / 12 else {
            throw ProtocolError(.malformedPayload, "a batch of \(kind) messages claims \(count) entries in \(bytes.count) bytes")
        }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let topic = try cursor.readPart()
            let headerRange = try cursor.readPart()
            let header = try Header(decoding: bytes, in: headerRange)
            guard header.kind == kind else {
                throw ProtocolError(.unexpectedKind, "a batch of \(kind) messages holds one of kind \(header.kind)")
            }
            entries.append(Entry(topic: topic, header: header, payload: try cursor.readPart()))
        }
        guard cursor.offset == bytes.count else {
            throw ProtocolError(.malformedPayload, "a batch of \(kind) messages has \(bytes.count - cursor.offset) bytes after its last entry")
        }
        return entries
    }

    /// Reads a batch's lengths and the parts they measure, in order.
    private struct Cursor {
        let bytes: [UInt8]
        var offset = 0

        mutating func readLength() throws(ProtocolError) -> Int {
            guard bytes.count - offset >= 4 else { throw ProtocolError(.truncated, "replay batch ends inside a length") }
            let value = Int(bytes.readLittleEndian(UInt32.self, at: offset))
            offset += 4
            return value
        }

        mutating func readPart() throws(ProtocolError) -> Range<Int> {
            let length = try readLength()
            guard bytes.count - offset >= length else {
                throw ProtocolError(.truncated, "replay batch ends inside a \(length)-byte part")
            }
            defer { offset += length }
            return offset..<offset + length
        }
    }
}

extension Array where Element == UInt8 {
    /// Whether the bytes in `a` and in `b` are the same, compared in place.
    package func equal(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        withUnsafeBytes { Self.same(UnsafeRawBufferPointer(rebasing: $0[a]), UnsafeRawBufferPointer(rebasing: $0[b])) }
    }

    /// Whether the bytes in `range` are `other`'s, compared in place.
    package func equal(_ range: Range<Int>, to other: [UInt8]) -> Bool {
        withUnsafeBytes { raw in other.withUnsafeBytes { Self.same(UnsafeRawBufferPointer(rebasing: raw[range]), $0) } }
    }

    /// The one comparison both use: a plain loop, which allocates nothing even in a debug build.
    private static func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var i = 0
        while i < a.count {
            guard a[i] == b[i] else { return false }
            i += 1
        }
        return true
    }
}
