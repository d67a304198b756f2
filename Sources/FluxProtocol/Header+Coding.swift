extension Header {
    /// The header's wire bytes.
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Header.fixedSize + actionType.utf8.count)
        encode(into: &out)
        return out
    }

    /// Appends the header's wire bytes to `out` (a record or batch being written: no array of its own).
    package func encode(into out: inout [UInt8]) {
        let typeLength = actionType.utf8.count
        precondition(typeLength <= Header.maxActionTypeLength, "action type longer than 255 bytes")
        let start = out.count
        out.append(Header.magic.0)
        out.append(Header.magic.1)
        out.append(kind.protocolVersion)
        out.append(kind.rawValue)
        out.appendLittleEndian(flags.rawValue)
        out.appendLittleEndian(UInt16(typeLength))
        out.appendLittleEndian(seq)
        out.appendLittleEndian(ref)
        out.appendLittleEndian(clientID)
        out.appendLittleEndian(clientSeq)
        out.appendLittleEndian(UInt64(bitPattern: timestamp))
        out.appendLittleEndian(history)
        assert(out.count - start == Header.fixedSize, "the fields written are the layout's")
        out.append(contentsOf: actionType.utf8)
    }

    /// Decodes a header, or throws a `ProtocolError` naming the first thing that is wrong.
    public init(decoding bytes: [UInt8]) throws(ProtocolError) { try self.init(decoding: bytes, in: 0..<bytes.count) }

    /// Decodes the header that fills `range` of `bytes` (a batch's entry, read in place).
    package init(decoding bytes: [UInt8], in range: Range<Int>) throws(ProtocolError) {
        // Plain reads, no helper closures: a debug build allocates a context for each call of one.
        let base = range.lowerBound, count = range.count
        guard count >= Header.fixedSizeVersion1 else {
            throw ProtocolError(.truncated, "header is \(count) bytes, needs at least \(Header.fixedSizeVersion1)")
        }
        guard bytes[base + Offset.magic] == Header.magic.0, bytes[base + Offset.magic + 1] == Header.magic.1 else {
            throw ProtocolError(.badMagic, "header magic is not 'ZF'")
        }
        let version = bytes[base + Offset.version]
        guard (1...Header.protocolVersion).contains(version) else {
            throw ProtocolError(.unsupportedVersion, "protocol version \(version) is not supported (this node speaks 1 to 3)")
        }
        let fixedSize = version == 1 ? Header.fixedSizeVersion1 : Header.fixedSize
        guard count >= fixedSize else {
            throw ProtocolError(.truncated, "header is \(count) bytes, needs at least \(fixedSize)")
        }
        guard let kind = MessageKind(rawValue: bytes[base + Offset.kind]) else {
            throw ProtocolError(.unknownKind, "message kind \(bytes[base + Offset.kind]) is unknown")
        }
        let typeLength = Int(bytes.readLittleEndian(UInt16.self, at: base + Offset.actionTypeLength))
        guard count == fixedSize + typeLength else {
            throw ProtocolError(.truncated, "header says the action type is \(typeLength) bytes but \(count - fixedSize) follow")
        }
        let type = (base + fixedSize)..<range.upperBound
        if typeLength > 0 && !Header.isValidActionType(bytes, in: type) {
            throw ProtocolError(.badActionType, "action type is not a name of letters, digits and '_'")
        }
        self.init(
            kind: kind,
            flags: Flags(rawValue: bytes.readLittleEndian(UInt16.self, at: base + Offset.flags)),
            seq: bytes.readLittleEndian(UInt64.self, at: base + Offset.seq),
            ref: bytes.readLittleEndian(UInt64.self, at: base + Offset.ref),
            clientID: bytes.readLittleEndian(UInt64.self, at: base + Offset.clientID),
            clientSeq: bytes.readLittleEndian(UInt64.self, at: base + Offset.clientSeq),
            timestamp: Int64(bitPattern: bytes.readLittleEndian(UInt64.self, at: base + Offset.timestamp)),
            actionType: String(decoding: bytes[type], as: UTF8.self),
            history: fixedSize == Header.fixedSize ? bytes.readLittleEndian(UInt64.self, at: base + Offset.history) : 0
        )
    }
}
