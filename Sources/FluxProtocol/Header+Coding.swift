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
        guard bytes[base] == Header.magic.0, bytes[base + 1] == Header.magic.1 else {
            throw ProtocolError(.badMagic, "header magic is not 'ZF'")
        }
        guard (1...Header.protocolVersion).contains(bytes[base + 2]) else {
            throw ProtocolError(.unsupportedVersion, "protocol version \(bytes[base + 2]) is not supported (this node speaks 1 to 3)")
        }
        let fixedSize = bytes[base + 2] == 1 ? Header.fixedSizeVersion1 : Header.fixedSize
        guard count >= fixedSize else {
            throw ProtocolError(.truncated, "header is \(count) bytes, needs at least \(fixedSize)")
        }
        guard let kind = MessageKind(rawValue: bytes[base + 3]) else {
            throw ProtocolError(.unknownKind, "message kind \(bytes[base + 3]) is unknown")
        }
        let typeLength = Int(bytes.readLittleEndian(UInt16.self, at: base + 6))
        guard count == fixedSize + typeLength else {
            throw ProtocolError(.truncated, "header says the action type is \(typeLength) bytes but \(count - fixedSize) follow")
        }
        let type = (base + fixedSize)..<range.upperBound
        if typeLength > 0 && !Header.isValidActionType(bytes, in: type) {
            throw ProtocolError(.badActionType, "action type is not a name of letters, digits and '_'")
        }
        self.init(
            kind: kind,
            flags: Flags(rawValue: bytes.readLittleEndian(UInt16.self, at: base + 4)),
            seq: bytes.readLittleEndian(UInt64.self, at: base + 8),
            ref: bytes.readLittleEndian(UInt64.self, at: base + 16),
            clientID: bytes.readLittleEndian(UInt64.self, at: base + 24),
            clientSeq: bytes.readLittleEndian(UInt64.self, at: base + 32),
            timestamp: Int64(bitPattern: bytes.readLittleEndian(UInt64.self, at: base + 40)),
            actionType: String(decoding: bytes[type], as: UTF8.self),
            history: fixedSize == Header.fixedSize ? bytes.readLittleEndian(UInt64.self, at: base + 48) : 0
        )
    }
}

extension Array where Element == UInt8 {
    @inlinable
    public mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        var v = value.littleEndian
        Swift.withUnsafeBytes(of: &v) { append(contentsOf: $0) }
    }

    /// Reads a little-endian integer; the caller has checked the bounds.
    @inlinable
    public func readLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count, "read past the end")
        return withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}
