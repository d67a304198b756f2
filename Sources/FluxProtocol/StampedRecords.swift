/// Stamped actions held as the journal's records, back to back: the one encoding of an action on the
/// dispatcher's path.
///
/// The dispatcher writes each action it sequences here once, as a record (``JournalRecord``: length,
/// CRC-32, then the action as a replay entry). These bytes are what the journal writes, unchanged; the
/// ACTION-BATCHes on the PUB, the standby's REPLICA-APPENDs and the journal's replies to replays copy
/// their entries out of them, so no header is encoded twice and no `Message` is built per action.
package struct StampedRecords: Sendable, Equatable {
    /// Where one record sits in ``bytes``.
    package struct Record: Sendable, Equatable {
        package var seq: UInt64
        /// The record's first byte (its length field).
        package var offset: Int
        /// The whole record: ``JournalRecord/headerSize`` plus the entry.
        package var size: Int
        /// The length of the entry's topic (the app), which starts 4 bytes into the entry.
        package var topicLength: Int

        /// The entry's bytes: what a REPLAY-BATCH or ACTION-BATCH carries for this action.
        package var body: Range<Int> { (offset + JournalRecord.headerSize)..<(offset + size) }
        var topic: Range<Int> { (body.lowerBound + 4)..<(body.lowerBound + 4 + topicLength) }
    }

    /// The records, as the journal writes them.
    package private(set) var bytes: [UInt8] = []
    /// One per record, in seq order.
    package private(set) var records: [Record] = []

    package init() {}

    /// `actions` (stamped ACTIONs, in seq order) as records.
    package init(_ actions: some Collection<Message>) {
        bytes.reserveCapacity(actions.reduce(0) { $0 + JournalRecord.headerSize + ReplayBatch.entrySize($1) })
        for action in actions { append(topic: action.topic, header: action.header, payload: action.payload) }
    }

    package var count: Int { records.count }
    package var isEmpty: Bool { records.isEmpty }
    // By index rather than `first` and `last`: unspecialized, as in a debug build, those read the
    // element through a coroutine whose frame is allocated on the heap, and the commit pipeline asserts
    // `lastSeq` for every action it stamps (AllocationTests counts it).
    package var firstSeq: UInt64? { records.isEmpty ? nil : records[0].seq }
    package var lastSeq: UInt64? { records.isEmpty ? nil : records[records.count - 1].seq }

    /// Appends an action as one record: the header is encoded straight into the buffer, the checksum
    /// computed in place.
    package mutating func append(topic: [UInt8], header: Header, payload: [UInt8]) {
        append(topic: topic, topic.indices, header: header, payload: payload, payload.indices)
    }

    /// Appends an action whose topic and payload are the bytes in `topicRange` of `topic` and in
    /// `payloadRange` of `payload` (a batch's entry, copied once, into the record).
    package mutating func append(topic: [UInt8], _ topicRange: Range<Int>, header: Header, payload: [UInt8], _ payloadRange: Range<Int>) {
        let start = bytes.count
        bytes.appendLittleEndian(UInt64(0))  // the length and checksum, filled in below
        ReplayBatch.appendEntry(topic: topic, topicRange, header: header, payload: payload, payloadRange, to: &bytes)
        JournalRecord.seal(&bytes, recordAt: start)
        records.append(Record(seq: header.seq, offset: start, size: bytes.count - start, topicLength: topicRange.count))
    }

    /// Appends the entry in `range` of `batch` (a REPLAY-BATCH's, whose `entry` says where its parts
    /// lie) as one record: its bytes copied as they came, then sealed. A standby writes its leader's
    /// entries so.
    package mutating func append(entry: ReplayBatch.Entry, of batch: [UInt8]) {
        let start = bytes.count
        // The entry runs from its topic's length field to its payload's end.
        let body = (entry.topic.lowerBound - 4)..<entry.payload.upperBound
        bytes.appendLittleEndian(UInt64(0))  // the length and checksum, filled in below
        batch.withUnsafeBytes { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[body])) }
        JournalRecord.seal(&bytes, recordAt: start)
        records.append(Record(seq: entry.header.seq, offset: start, size: bytes.count - start, topicLength: entry.topic.count))
    }

    /// The records after `seq` are dropped (a journal append undone, or a truncation).
    package mutating func removeRecords(after seq: UInt64) {
        guard let keep = records.firstIndex(where: { $0.seq > seq }) else { return }
        bytes.removeSubrange(records[keep].offset...)
        records.removeSubrange(keep...)
    }

    /// The action of record `index`, decoded (for tests, tools and the simulator: the dispatcher's
    /// path never needs it).
    package func message(_ index: Int) throws(ProtocolError) -> Message {
        try ReplayBatch.decodeEntry(bytes[records[index].body])
    }

    /// Every action, decoded.
    package func messages() throws(ProtocolError) -> [Message] {
        var out: [Message] = []
        out.reserveCapacity(count)
        for index in records.indices { out.append(try message(index)) }
        return out
    }

    /// Whether two records are of the same app (their topics are the same bytes).
    private func sameTopic(_ a: Record, _ b: Record) -> Bool { bytes.equal(a.topic, b.topic) }

    /// A REPLAY-BATCH payload (`u32 count`, then the entries) of the records in `range`: one
    /// allocation, and a copy of their bytes.
    package func batchPayload(_ range: Range<Int>) -> [UInt8] {
        guard let first = range.first, let last = range.last else { return [0, 0, 0, 0] }
        var payload = [UInt8]()
        payload.reserveCapacity(4 + records[last].offset + records[last].size - records[first].offset)
        payload.appendLittleEndian(UInt32(range.count))
        bytes.withUnsafeBytes { raw in
            for index in range { payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[records[index].body])) }
        }
        return payload
    }

    /// The messages on the actions PUB for the records in `range` (ActionBatch's rule): each run of
    /// consecutive actions of one app as one ACTION-BATCH (at most ``ActionBatch/maxActions`` and about
    /// ``ActionBatch/maxBytes``), a run of one as its plain ACTION.
    package func publishMessages(_ range: Range<Int>, history: UInt64) throws(ProtocolError) -> [Message] {
        var out: [Message] = []
        var start = range.lowerBound
        while start < range.upperBound {
            var end = start + 1
            var runBytes = records[start].body.count
            while end < range.upperBound, end - start < ActionBatch.maxActions, runBytes < ActionBatch.maxBytes,
                sameTopic(records[start], records[end])
            {
                runBytes += records[end].body.count
                end += 1
            }
            if end - start == 1 {
                out.append(try message(start))
            } else {
                out.append(
                    Message(
                        topic: Array(bytes[records[start].topic]),
                        header: Header(kind: .actionBatch, seq: records[start].seq, ref: records[end - 1].seq, history: history),
                        payload: batchPayload(start..<end)))
            }
            start = end
        }
        return out
    }

    /// Ranges of `range` whose entries come to at most about `maxBytes` each (a larger record alone):
    /// how a burst is cut into REPLICA-APPENDs.
    package func parts(_ range: Range<Int>, maxBytes: Int) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = range.lowerBound
        while start < range.upperBound {
            var end = start + 1
            var size = records[start].size
            while end < range.upperBound && size + records[end].size <= maxBytes {
                size += records[end].size
                end += 1
            }
            out.append(start..<end)
            start = end
        }
        return out
    }
}
