/// One journal record: `u32 body length, u32 CRC-32 of the body, body` (little-endian), where the body
/// is an ACTION message as a replay entry. The journal and its tools read and write records only here.
public enum JournalRecord {
    public static let headerSize = 8

    /// Appends `message` as a record.
    public static func append(_ message: Message, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])
        ReplayBatch.appendEntry(message, to: &out)
        let length = out.count - start - headerSize
        let crc = out.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[(start + headerSize)...])) }
        withUnsafeBytes(of: UInt32(length).littleEndian) { out.replaceSubrange(start..<start + 4, with: $0) }
        withUnsafeBytes(of: crc.littleEndian) { out.replaceSubrange(start + 4..<start + 8, with: $0) }
    }

    /// The record at `offset`: its action and its size in bytes, or why it is not a whole, intact record.
    public static func read(_ bytes: [UInt8], at offset: Int) -> Result<(message: Message, size: Int), ProtocolError> {
        guard offset >= 0, bytes.count - offset >= headerSize else {
            return .failure(ProtocolError(.truncated, "record header cut short"))
        }
        let length = Int(bytes.readLittleEndian(UInt32.self, at: offset))
        let crc = bytes.readLittleEndian(UInt32.self, at: offset + 4)
        guard length <= bytes.count - offset - headerSize else {
            return .failure(ProtocolError(.truncated, "record of \(length) bytes cut short"))
        }
        let body = (offset + headerSize)..<(offset + headerSize + length)
        guard bytes.withUnsafeBytes({ CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[body])) }) == crc else {
            return .failure(ProtocolError(.malformedPayload, "record checksum mismatch"))
        }
        do {
            let message = try ReplayBatch.decodeEntry(bytes[body])
            guard message.kind == .action else {
                return .failure(ProtocolError(.unexpectedKind, "record does not hold an action"))
            }
            return .success((message, headerSize + length))
        } catch {
            return .failure(error)
        }
    }

    /// The record at `offset` checked without decoding it: its checksum, that it holds an action, and
    /// its seq and size. Opening a journal checks every record of its newest segment this way; a record
    /// that passes decodes (the journal wrote it whole, and the checksum says it is still whole).
    public static func check(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Result<(seq: UInt64, size: Int), ProtocolError> {
        guard offset >= 0, bytes.count - offset >= headerSize else {
            return .failure(ProtocolError(.truncated, "record header cut short"))
        }
        let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
        let crc = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
        guard length <= bytes.count - offset - headerSize else {
            return .failure(ProtocolError(.truncated, "record of \(length) bytes cut short"))
        }
        let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + headerSize)..<(offset + headerSize + length)])
        guard CRC32.checksum(body) == crc else {
            return .failure(ProtocolError(.malformedPayload, "record checksum mismatch"))
        }
        // The body: u32 topic length, topic, u32 header length, header (kind at 3, seq at 8), ...
        guard body.count >= 4 else { return .failure(ProtocolError(.truncated, "entry ends inside a length")) }
        let topicLength = Int(body.loadUnaligned(as: UInt32.self).littleEndian)
        let header = 4 + topicLength + 4
        guard topicLength <= body.count - 8, body.count - header >= Header.fixedSizeVersion1 else {
            return .failure(ProtocolError(.truncated, "entry ends inside its header"))
        }
        guard body[header] == Header.magic.0, body[header + 1] == Header.magic.1 else {
            return .failure(ProtocolError(.badMagic, "header magic is not 'ZF'"))
        }
        guard body[header + 3] == MessageKind.action.rawValue else {
            return .failure(ProtocolError(.unexpectedKind, "record does not hold an action"))
        }
        return .success((body.loadUnaligned(fromByteOffset: header + 8, as: UInt64.self).littleEndian, headerSize + length))
    }
}
