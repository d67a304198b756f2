/// One journal record: `u32 body length, u32 CRC-32 of the body, body` (little-endian), where the body
/// is an ACTION message as a replay entry. The journal and its tools read and write records only here.
public enum JournalRecord {
    public static let headerSize = 8

    /// Appends `message` as a record.
    public static func append(_ message: Message, to out: inout [UInt8]) {
        let start = out.count
        out.appendLittleEndian(UInt64(0))  // the length and checksum, filled in below
        ReplayBatch.appendEntry(message, to: &out)
        seal(&out, recordAt: start)
    }

    /// Fills in the length and checksum of the record that starts at `start` and runs to the end of
    /// `out` (its first 8 bytes reserved for them).
    package static func seal(_ out: inout [UInt8], recordAt start: Int) {
        let length = out.count - start - headerSize
        out.withUnsafeMutableBytes { raw in
            let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[(start + headerSize)...]))
            raw.writeLittleEndian(UInt32(length), at: start)
            raw.writeLittleEndian(crc, at: start + 4)
        }
    }

    /// The record at `offset`: its action and its size in bytes, or why it is not a whole, intact record.
    public static func read(_ bytes: [UInt8], at offset: Int) -> Result<(message: Message, size: Int), ProtocolError> {
        switch bytes.withUnsafeBytes({ check($0, at: offset) }) {
        case .failure(let error):
            return .failure(error)
        case .success(let checked):
            do {
                let body = (offset + headerSize)..<(offset + checked.size)
                return .success((try ReplayBatch.decodeEntry(bytes[body]), checked.size))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The record at `offset` checked without decoding it: its checksum, that it holds an action, and
    /// its seq and size. Opening a journal checks every record of its newest segment this way; a record
    /// that passes decodes (the journal wrote it whole, and the checksum says it is still whole).
    public static func check(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Result<(seq: UInt64, size: Int), ProtocolError> {
        guard offset >= 0, bytes.count - offset >= headerSize else {
            return .failure(ProtocolError(.truncated, "record header cut short"))
        }
        let length = Int(bytes.readLittleEndian(UInt32.self, at: offset))
        let crc = bytes.readLittleEndian(UInt32.self, at: offset + 4)
        guard length <= bytes.count - offset - headerSize else {
            return .failure(ProtocolError(.truncated, "record of \(length) bytes cut short"))
        }
        let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + headerSize)..<(offset + headerSize + length)])
        guard CRC32.checksum(body) == crc else {
            return .failure(ProtocolError(.malformedPayload, "record checksum mismatch"))
        }
        guard body.count >= 4 else { return .failure(ProtocolError(.truncated, "entry ends inside a length")) }
        guard let header = headerOffset(inBody: body) else {
            return .failure(ProtocolError(.truncated, "entry ends inside its header"))
        }
        guard body[header + Header.Offset.magic] == Header.magic.0, body[header + Header.Offset.magic + 1] == Header.magic.1 else {
            return .failure(ProtocolError(.badMagic, "header magic is not 'ZF'"))
        }
        guard body[header + Header.Offset.kind] == MessageKind.action.rawValue else {
            return .failure(ProtocolError(.unexpectedKind, "record does not hold an action"))
        }
        return .success((body.readLittleEndian(UInt64.self, at: header + Header.Offset.seq), headerSize + length))
    }

    /// Checks a file's records in order from `firstSeq` (``check(_:at:)``), each holding the seq due
    /// there, telling `record` each one's seq and offset: where the good records end, the seq due there,
    /// and what is wrong there (nil when every byte belongs to a good record). What follows the good
    /// records is a torn or corrupt tail. The journal opens its segments with it, and the simulator
    /// its simulated disk.
    public static func checkRecords(
        _ bytes: [UInt8], firstSeq: UInt64, _ record: (UInt64, Int) -> Void
    ) -> (end: Int, expected: UInt64, problem: String?) {
        var offset = 0
        var expected = firstSeq
        var problem: String? = nil
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                switch check(raw, at: offset) {
                case .success(let checked) where checked.seq == expected:
                    record(expected, offset)
                    expected += 1
                    offset += checked.size
                case .success(let checked):
                    problem = "record seq \(checked.seq) where \(expected) was due"
                    return
                case .failure(let error):
                    problem = error.message
                    return
                }
            }
        }
        return (offset, expected, problem)
    }

    /// The first intact record after `offset` whose seq is above `seq`, found by trying every byte
    /// offset: what tells corruption from a torn tail. A write torn by a power cut can only damage the
    /// end of what was being written, so nothing intact follows it; a record that fails its check with an
    /// intact later record after it was damaged after it was written (a flipped bit, a misdirected write),
    /// and the records after it may have been acknowledged. Only a candidate whose header looks like an
    /// action's (magic, kind, a later seq) has its checksum computed, so random bytes cost a few loads
    /// per offset, never a checksum of the rest of the file at each.
    public static func nextIntact(_ bytes: [UInt8], after offset: Int, seqAbove seq: UInt64) -> (offset: Int, seq: UInt64)? {
        precondition(offset >= 0, "a record offset is never negative")
        return bytes.withUnsafeBytes { raw -> (offset: Int, seq: UInt64)? in
            var candidate = offset + 1
            while raw.count - candidate >= headerSize + 8 + Header.fixedSizeVersion1 {
                defer { candidate += 1 }
                let length = Int(raw.readLittleEndian(UInt32.self, at: candidate))
                guard length <= raw.count - candidate - headerSize else { continue }
                let body = candidate + headerSize
                let topicLength = Int(raw.readLittleEndian(UInt32.self, at: body))
                guard topicLength <= length - 8, length - (topicLength + 8) >= Header.fixedSizeVersion1 else { continue }
                let header = body + topicLength + 8
                guard raw[header + Header.Offset.magic] == Header.magic.0, raw[header + Header.Offset.magic + 1] == Header.magic.1,
                    raw[header + Header.Offset.kind] == MessageKind.action.rawValue,
                    raw.readLittleEndian(UInt64.self, at: header + Header.Offset.seq) > seq
                else { continue }
                if case .success(let checked) = check(raw, at: candidate), checked.seq > seq {
                    return (candidate, checked.seq)
                }
            }
            return nil
        }
    }

    /// Where the header starts in a record's body (`u32 topic length, topic, u32 header length, header,
    /// …`), when the body holds at least a version-1 header's fixed part there.
    public static func headerOffset(inBody body: UnsafeRawBufferPointer) -> Int? {
        guard body.count >= 8 else { return nil }
        let topicLength = Int(body.readLittleEndian(UInt32.self, at: 0))
        guard topicLength <= body.count - 8, body.count - (topicLength + 8) >= Header.fixedSizeVersion1 else { return nil }
        return topicLength + 8
    }

    /// The history stamp (``Header/history``) of the action in a checked record's body, read from its
    /// header alone; 0 for a version-1 header, which has none.
    public static func history(inBody body: UnsafeRawBufferPointer) -> UInt64? {
        guard let header = headerOffset(inBody: body) else { return nil }
        guard body[header + Header.Offset.version] >= 2 else { return 0 }
        guard body.count - header >= Header.fixedSize else { return nil }
        return body.readLittleEndian(UInt64.self, at: header + Header.Offset.history)
    }

    /// The client id and client seq of the action in a checked record's body, read from its header
    /// alone.
    public static func dispatch(inBody body: UnsafeRawBufferPointer) -> (clientID: UInt64, clientSeq: UInt64)? {
        guard let header = headerOffset(inBody: body) else { return nil }
        return (
            body.readLittleEndian(UInt64.self, at: header + Header.Offset.clientID),
            body.readLittleEndian(UInt64.self, at: header + Header.Offset.clientSeq)
        )
    }
}
