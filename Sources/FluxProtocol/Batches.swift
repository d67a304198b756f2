/// ACTION-BATCH: the actions one drained burst sequenced, as few messages on the actions PUB as their
/// order allows (protocol 3).
///
/// A burst becomes one message per run of consecutive actions of one app: a lone action stays a
/// plain ACTION, two or more become an ACTION-BATCH whose topic is the app (so a subscriber's app
/// filter still works) and whose payload has the REPLAY-BATCH layout. The runs go out in seq order,
/// so a reader that unpacks each batch where it arrives sees exactly the ACTION stream it replaces.
public enum ActionBatch {
    /// Most actions in one batch, and the bytes past which a batch closes (as replay batches).
    public static let maxActions = 512
    public static let maxBytes = 1 << 20

    /// The messages that carry `actions` (stamped ACTIONs, in seq order) on the actions PUB. The
    /// dispatcher builds them from its records (``StampedRecords/publishMessages(_:history:)``).
    public static func messages(for actions: some Collection<Message>, history: UInt64) -> [Message] {
        let records = StampedRecords(actions)
        // Records it wrote itself decode.
        return (try? records.publishMessages(0..<records.count, history: history)) ?? []
    }

    /// The actions of an ACTION-BATCH, checked against its header: every entry an ACTION of the
    /// batch's topic, seqs strictly increasing from `seq` to `ref`.
    public static func actions(of batch: Message) throws(ProtocolError) -> [Message] {
        let bytes = batch.payload
        return try entries(of: batch).map { Message(topic: batch.topic, header: $0.header, payload: Array(bytes[$0.payload])) }
    }

    /// The entries of an ACTION-BATCH, read in place in its payload and checked as
    /// ``actions(of:)`` checks them: a store applies them from the batch's bytes.
    package static func entries(of batch: Message) throws(ProtocolError) -> [ReplayBatch.Entry] {
        guard batch.kind == .actionBatch else { throw ProtocolError(.unexpectedKind, "expected ACTION-BATCH, got \(batch.kind)") }
        let bytes = batch.payload
        let entries = try ReplayBatch.entries(bytes, holding: .action)
        guard let first = entries.first, let last = entries.last else {
            throw ProtocolError(.malformedPayload, "an ACTION-BATCH holds no action")
        }
        guard first.header.seq == batch.header.seq, last.header.seq == batch.header.ref else {
            throw ProtocolError(
                .malformedPayload,
                "ACTION-BATCH says seqs \(batch.header.seq)...\(batch.header.ref), holds \(first.header.seq)...\(last.header.seq)")
        }
        var previous: UInt64 = 0
        for entry in entries {
            guard bytes.equal(entry.topic, to: batch.topic) else { throw ProtocolError(.malformedPayload, "an ACTION-BATCH mixes apps") }
            guard entry.header.seq > previous else { throw ProtocolError(.malformedPayload, "ACTION-BATCH seqs do not increase") }
            previous = entry.header.seq
        }
        return entries
    }

    /// What arrived on the actions PUB as the ACTIONs it stands for: a batch unpacked, anything else
    /// as it is.
    public static func unpack(_ message: Message) throws(ProtocolError) -> [Message] {
        message.kind == .actionBatch ? try actions(of: message) : [message]
    }
}

/// ACK-BATCH: the ACKs one burst released for one client, in one message (protocol 3). Sent only to
/// a client whose DISPATCH carried the ``Header/Flags/batchReplies`` flag; others get one ACK each.
///
/// Header: `seq` = the number of entries, `history` = the history serving them. Payload: `u32 count`,
/// then per entry `u64 seq, u64 client id, u64 client seq, i64 timestamp` (little-endian), each what
/// the ACK it stands for would have carried in those header fields.
public struct AckBatch: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        public var seq: UInt64
        public var clientID: UInt64
        public var clientSeq: UInt64
        public var timestamp: Int64

        public init(seq: UInt64, clientID: UInt64, clientSeq: UInt64, timestamp: Int64) {
            (self.seq, self.clientID, self.clientSeq, self.timestamp) = (seq, clientID, clientSeq, timestamp)
        }

        /// The entry an ACK stands for.
        public init(_ ack: Header) { self.init(seq: ack.seq, clientID: ack.clientID, clientSeq: ack.clientSeq, timestamp: ack.timestamp) }
    }

    public var entries: [Entry]
    public var history: UInt64

    public init(entries: [Entry], history: UInt64) { (self.entries, self.history) = (entries, history) }

    public static let entryBytes = 32

    public var message: Message {
        var payload = [UInt8]()
        payload.reserveCapacity(4 + entries.count * AckBatch.entryBytes)
        payload.appendLittleEndian(UInt32(entries.count))
        for entry in entries {
            payload.appendLittleEndian(entry.seq)
            payload.appendLittleEndian(entry.clientID)
            payload.appendLittleEndian(entry.clientSeq)
            payload.appendLittleEndian(UInt64(bitPattern: entry.timestamp))
        }
        return Message(header: Header(kind: .ackBatch, seq: UInt64(entries.count), history: history), payload: payload)
    }

    public init(_ message: Message) throws(ProtocolError) {
        guard message.kind == .ackBatch else { throw ProtocolError(.unexpectedKind, "expected ACK-BATCH, got \(message.kind)") }
        let bytes = message.payload
        guard bytes.count >= 4 else { throw ProtocolError(.truncated, "ACK-BATCH ends inside its count") }
        let count = Int(bytes.readLittleEndian(UInt32.self, at: 0))
        guard bytes.count == 4 + count * AckBatch.entryBytes, UInt64(count) == message.header.seq else {
            throw ProtocolError(.malformedPayload, "ACK-BATCH says \(count) entries (header \(message.header.seq)) in \(bytes.count) bytes")
        }
        entries = (0..<count).map { index in
            let at = 4 + index * AckBatch.entryBytes
            return Entry(
                seq: bytes.readLittleEndian(UInt64.self, at: at), clientID: bytes.readLittleEndian(UInt64.self, at: at + 8),
                clientSeq: bytes.readLittleEndian(UInt64.self, at: at + 16),
                timestamp: Int64(bitPattern: bytes.readLittleEndian(UInt64.self, at: at + 24)))
        }
        history = message.header.history
    }

    /// The ACK each entry stands for, as a client that reads single ACKs would have received it.
    public var acks: [Message] {
        entries.map { entry in
            Message(
                header: Header(
                    kind: .ack, seq: entry.seq, clientID: entry.clientID, clientSeq: entry.clientSeq, timestamp: entry.timestamp, history: history))
        }
    }

    /// What arrived on the intake as the replies it stands for: a batch as its ACKs, anything else as
    /// it is.
    public static func unpack(_ message: Message) throws(ProtocolError) -> [Message] {
        message.kind == .ackBatch ? try AckBatch(message).acks : [message]
    }
}

/// DISPATCH-BATCH: what a client has queued when its loop turns, as one message (protocol 3).
///
/// Header: `seq` = the number of DISPATCHes, flag ``Header/Flags/batchReplies``, every other field 0;
/// the topic is empty (the entries may be of several apps). Payload: the REPLAY-BATCH layout, each
/// entry a whole DISPATCH (its app as topic, its header, its payload). The dispatcher takes each entry
/// as if it had arrived alone, in order, and answers each as it would have: an ACK (several of one
/// client's together as ACK-BATCH) or a NACK naming that entry's client id and client seq. One entry
/// refused does not refuse the others. A client that sends single DISPATCHes never needs this kind.
public enum DispatchBatch {
    /// The most DISPATCHes one batch may hold (a client sends more as several batches).
    public static let maxDispatches = 1024
    /// The bytes past which a sender closes a batch (as ACTION-BATCH does): far below the 16 MiB a
    /// node receives, however large the payloads. A DISPATCH larger than this goes alone.
    public static let maxBytes = 1 << 20

    /// `dispatches` as few messages as the limits allow, in order: runs of at most ``maxDispatches``
    /// and about ``maxBytes`` as DISPATCH-BATCHes, a run of one as its plain DISPATCH.
    public static func messages(for dispatches: [Message]) -> [Message] {
        var out: [Message] = []
        var start = 0
        while start < dispatches.count {
            var end = start, bytes = 0
            while end < dispatches.count, end - start < maxDispatches {
                let size = ReplayBatch.entrySize(dispatches[end])
                if end > start && bytes + size > maxBytes { break }
                bytes += size
                end += 1
            }
            out.append(end - start == 1 ? dispatches[start] : message(Array(dispatches[start..<end])))
            start = end
        }
        return out
    }

    /// `dispatches` (DISPATCH messages, at most ``maxDispatches``) as one DISPATCH-BATCH.
    public static func message(_ dispatches: [Message]) -> Message {
        precondition(dispatches.count <= maxDispatches, "a DISPATCH-BATCH holds at most \(maxDispatches) DISPATCHes")
        return Message(
            header: Header(kind: .dispatchBatch, flags: .batchReplies, seq: UInt64(dispatches.count)), payload: ReplayBatch.encode(dispatches))
    }

    /// The DISPATCHes of a DISPATCH-BATCH, checked against its header: as many as it says, at most
    /// ``maxDispatches``, each a DISPATCH.
    public static func dispatches(of batch: Message) throws(ProtocolError) -> [Message] {
        ReplayBatch.messages(of: try entries(of: batch), in: batch.payload)
    }

    /// ``dispatches(of:)`` read in place: where each DISPATCH's topic and payload lie in the batch's
    /// payload, and its header. The same checks.
    package static func entries(of batch: Message) throws(ProtocolError) -> [ReplayBatch.Entry] {
        try checkCount(of: batch)
        let entries = try ReplayBatch.entries(batch.payload, holding: .dispatch)
        guard entries.count == Int(batch.header.seq) else {
            throw ProtocolError(.malformedPayload, "DISPATCH-BATCH says \(batch.header.seq) DISPATCHes, holds \(entries.count)")
        }
        return entries
    }

    /// The kind and the count a batch claims, before anything is decoded: a batch that says 1 and
    /// holds a million is refused without building them.
    private static func checkCount(of batch: Message) throws(ProtocolError) {
        guard batch.kind == .dispatchBatch else { throw ProtocolError(.unexpectedKind, "expected DISPATCH-BATCH, got \(batch.kind)") }
        guard batch.header.seq >= 1, batch.header.seq <= UInt64(maxDispatches) else {
            throw ProtocolError(.malformedPayload, "a DISPATCH-BATCH holds 1 to \(maxDispatches) DISPATCHes, not \(batch.header.seq)")
        }
        guard batch.payload.count >= 4, UInt64(batch.payload.readLittleEndian(UInt32.self, at: 0)) == batch.header.seq else {
            throw ProtocolError(.malformedPayload, "DISPATCH-BATCH says \(batch.header.seq) DISPATCHes; its payload does not")
        }
    }
}
