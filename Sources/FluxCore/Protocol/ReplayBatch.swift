/// The payload of a REPLAY-BATCH: consecutive ACTION messages packed into one frame.
///
/// Layout (little-endian): `u32 count`, then per message `u32 topic length, topic, u32 header length,
/// header, u32 payload length, payload`.
public enum ReplayBatch {
    public static func encode(_ messages: [Message]) -> [UInt8] {
        var out = [UInt8]()
        out.appendLittleEndian(UInt32(messages.count))
        for message in messages {
            for part in [message.topic, message.header.encoded(), message.payload] {
                out.appendLittleEndian(UInt32(part.count))
                out.append(contentsOf: part)
            }
        }
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws(ProtocolError) -> [Message] {
        var offset = 0
        func readLength() throws(ProtocolError) -> Int {
            guard bytes.count - offset >= 4 else { throw ProtocolError(.truncated, "replay batch ends inside a length") }
            let value = Int(bytes.readLittleEndian(UInt32.self, at: offset))
            offset += 4
            return value
        }
        func readPart() throws(ProtocolError) -> [UInt8] {
            let length = try readLength()
            guard bytes.count - offset >= length else {
                throw ProtocolError(.truncated, "replay batch ends inside a \(length)-byte part")
            }
            defer { offset += length }
            return Array(bytes[offset..<offset + length])
        }
        let count = try readLength()
        // Each entry takes at least 12 bytes of lengths: a larger count cannot be honest.
        guard count <= (bytes.count - offset) / 12 else {
            throw ProtocolError(.malformedPayload, "replay batch claims \(count) actions in \(bytes.count) bytes")
        }
        var messages: [Message] = []
        messages.reserveCapacity(count)
        for _ in 0..<count {
            let topic = try readPart()
            let header = try Header(decoding: try readPart())
            guard header.kind == .action else {
                throw ProtocolError(.unexpectedKind, "replay batch holds a \(header.kind) message, expected ACTION")
            }
            messages.append(Message(topic: topic, header: header, payload: try readPart()))
        }
        guard offset == bytes.count else {
            throw ProtocolError(.malformedPayload, "replay batch has \(bytes.count - offset) bytes after its last action")
        }
        return messages
    }
}
