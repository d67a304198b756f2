extension BinaryPayloadCodec {
    /// How deep ``isWellFormed(_:)`` follows containers; a deeper payload is not called well formed
    /// (the intake then decodes it, which says what is wrong with it, if anything).
    static let structureDepth = 64

    /// Whether `bytes` is one binary payload whose structure holds together, read in place and without
    /// allocating: known tags, varints that end, strings and keys of UTF-8 within the bytes, and each
    /// container's entries ending exactly where its length says, with nothing after the value.
    ///
    /// It says nothing of the types a decoder expects: a well-formed payload may still fail to decode
    /// as an app's action, which its stores then refuse, each the same way.
    package static func isWellFormed(_ bytes: [UInt8]) -> Bool {
        guard bytes.first == marker else { return false }
        return wellFormedEnd(bytes, at: 1, depth: 0) == bytes.count
    }

    /// The offset just past the well-formed value at `offset`, or nil.
    private static func wellFormedEnd(_ bytes: [UInt8], at offset: Int, depth: Int) -> Int? {
        guard offset < bytes.count, let tag = BinaryTag(rawValue: bytes[offset]) else { return nil }
        switch tag {
        case .null, .false, .true: return offset + 1
        case .int, .uint: return varintEnd(bytes, at: offset + 1)?.end
        case .double: return offset + 9 <= bytes.count ? offset + 9 : nil
        case .float: return offset + 5 <= bytes.count ? offset + 5 : nil
        case .string: return utf8RunEnd(bytes, at: offset + 1)
        case .array, .map:
            guard depth < structureDepth, offset + 9 <= bytes.count else { return nil }
            let length = u32(bytes, offset + 1), count = u32(bytes, offset + 5)
            let end = offset + 9 + length
            // Each entry takes a byte at least: a count past the length cannot be true.
            guard end <= bytes.count, count <= length else { return nil }
            var at = offset + 9
            for _ in 0..<count {
                if tag == .map {
                    guard let keyEnd = utf8RunEnd(bytes, at: at) else { return nil }
                    at = keyEnd
                }
                guard at < end, let next = wellFormedEnd(bytes, at: at, depth: depth + 1), next <= end else { return nil }
                at = next
            }
            return at == end ? end : nil
        }
    }

    private static func u32(_ bytes: [UInt8], _ at: Int) -> Int {
        Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }

    /// A varint at `offset`: its value and the offset after it, or nil when it does not end in 10 bytes.
    private static func varintEnd(_ bytes: [UInt8], at offset: Int) -> (value: UInt64, end: Int)? {
        var value: UInt64 = 0, shift: UInt64 = 0, at = offset
        while at < bytes.count, shift < 64 {
            let byte = bytes[at]
            value |= UInt64(byte & 0x7F) << shift
            at += 1
            if byte < 0x80 { return (value, at) }
            shift += 7
        }
        return nil
    }

    /// The end of a varint-prefixed run of UTF-8 bytes (a string or a key) at `offset`, or nil.
    private static func utf8RunEnd(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard let (length, start) = varintEnd(bytes, at: offset), length <= UInt64(bytes.count - start) else { return nil }
        let end = start + Int(length)
        do {
            try JSONText.validateUTF8(bytes, start, end)
        } catch {
            return nil
        }
        return end
    }
}
