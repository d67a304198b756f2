/// Walks a binary payload's tags and writes JSON as it goes. Objects are written in key order: their
/// entries are collected (keys and value offsets only), sorted, then written by jumping to each value,
/// which the containers' lengths make cheap.
struct BinaryToJSON {
    /// One entry of an object being written: its key's bytes and its value's offset in `input`.
    struct Entry {
        var keyStart: Int
        var keyEnd: Int
        var value: Int
    }

    let input: [UInt8]
    var out: [UInt8] = []
    /// The entries of every object being written, innermost last (one buffer for all levels).
    var entries: [Entry] = []

    init(input: [UInt8]) {
        self.input = input
        out.reserveCapacity(input.count + input.count / 2)
    }

    mutating func run() throws(GenericJSONError) {
        let end = try value(at: 1, limit: input.count, depth: 0)
        guard end == input.count else { throw GenericJSONError(.malformed, at: end, "\(input.count - end) trailing bytes after the value") }
    }

    /// Writes the value at `offset`, which must end by `limit`; returns the offset just past it.
    mutating func value(at offset: Int, limit: Int, depth: Int) throws(GenericJSONError) -> Int {
        guard offset < limit else { throw GenericJSONError(.truncated, at: offset, "a value is missing") }
        guard let tag = BinaryTag(rawValue: input[offset]) else {
            throw GenericJSONError(.malformed, at: offset, "unknown tag 0x\(String(input[offset], radix: 16))")
        }
        switch tag {
        case .null:
            out.append(contentsOf: JSONText.null)
            return offset + 1
        case .false:
            out.append(contentsOf: JSONText.false)
            return offset + 1
        case .true:
            out.append(contentsOf: JSONText.true)
            return offset + 1
        case .int:
            let (raw, end) = try varint(at: offset + 1, limit: limit)
            // Zigzag: the low bit is the sign; a negative value's magnitude is (raw >> 1) + 1.
            if raw & 1 == 0 {
                JSONText.appendInteger(raw >> 1, negative: false, to: &out)
            } else {
                JSONText.appendInteger((raw >> 1) + 1, negative: true, to: &out)
            }
            return end
        case .uint:
            let (raw, end) = try varint(at: offset + 1, limit: limit)
            JSONText.appendInteger(raw, negative: false, to: &out)
            return end
        case .double:
            guard limit - offset >= 9 else { throw GenericJSONError(.truncated, at: offset, "a double needs 8 bytes") }
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(input[offset + 1 + i]) << (8 * UInt64(i)) }
            try JSONText.appendDouble(Double(bitPattern: bits), at: offset, to: &out)
            return offset + 9
        case .float:
            guard limit - offset >= 5 else { throw GenericJSONError(.truncated, at: offset, "a float needs 4 bytes") }
            var bits: UInt32 = 0
            for i in 0..<4 { bits |= UInt32(input[offset + 1 + i]) << (8 * UInt32(i)) }
            try JSONText.appendFloat(Float(bitPattern: bits), at: offset, to: &out)
            return offset + 5
        case .string:
            let (start, end) = try run(at: offset + 1, limit: limit)
            try JSONText.appendString(input, start, end, validating: true, to: &out)
            return end
        case .array:
            let (first, count, end) = try container(at: offset, limit: limit, depth: depth)
            out.append(ASCII.openBracket)
            var cursor = first
            for index in 0..<count {
                if index > 0 { out.append(ASCII.comma) }
                cursor = try value(at: cursor, limit: end, depth: depth + 1)
            }
            guard cursor == end else { throw lengthMismatch(offset, cursor, end) }
            out.append(ASCII.closeBracket)
            return end
        case .map:
            let (first, count, end) = try container(at: offset, limit: limit, depth: depth)
            try object(first: first, count: count, end: end, at: offset, depth: depth)
            return end
        }
    }

    /// Writes an object: its entries sorted by key, the last of equal keys winning.
    mutating func object(first: Int, count: Int, end: Int, at offset: Int, depth: Int) throws(GenericJSONError) {
        let base = entries.count
        defer { entries.removeSubrange(base...) }
        var cursor = first
        for _ in 0..<count {
            let (keyStart, keyEnd) = try run(at: cursor, limit: end)
            try JSONText.validateUTF8(input, keyStart, keyEnd)
            entries.append(Entry(keyStart: keyStart, keyEnd: keyEnd, value: keyEnd))
            cursor = try skip(at: keyEnd, limit: end)
        }
        guard cursor == end else { throw lengthMismatch(offset, cursor, end) }
        let input = input
        if count > 1 {
            entries[base...].sort { a, b in
                let order = JSONText.compare(input, a.keyStart, a.keyEnd, b.keyStart, b.keyEnd)
                return order != 0 ? order < 0 : a.value < b.value
            }
        }
        out.append(ASCII.openBrace)
        var first = true
        for index in base..<entries.count {
            let entry = entries[index]
            if index + 1 < entries.count {
                let next = entries[index + 1]
                if JSONText.compare(input, entry.keyStart, entry.keyEnd, next.keyStart, next.keyEnd) == 0 { continue }
            }
            if !first { out.append(ASCII.comma) }
            first = false
            // Keys were checked for UTF-8 above.
            try JSONText.appendString(input, entry.keyStart, entry.keyEnd, validating: false, to: &out)
            out.append(ASCII.colon)
            _ = try value(at: entry.value, limit: end, depth: depth + 1)
        }
        out.append(ASCII.closeBrace)
    }

    /// The offset just past the value at `offset` (within `limit`), without writing it.
    func skip(at offset: Int, limit: Int) throws(GenericJSONError) -> Int {
        guard offset < limit else { throw GenericJSONError(.truncated, at: offset, "a value is missing") }
        guard let tag = BinaryTag(rawValue: input[offset]) else {
            throw GenericJSONError(.malformed, at: offset, "unknown tag 0x\(String(input[offset], radix: 16))")
        }
        switch tag {
        case .null, .false, .true: return offset + 1
        case .int, .uint: return try varint(at: offset + 1, limit: limit).1
        case .double, .float:
            let end = offset + (tag == .double ? 9 : 5)
            guard end <= limit else { throw GenericJSONError(.truncated, at: offset, "a number runs past its end") }
            return end
        case .string: return try run(at: offset + 1, limit: limit).1
        case .array, .map: return try container(at: offset, limit: limit, depth: 0).2
        }
    }

    /// A container's header: (first entry, count, end).
    func container(at offset: Int, limit: Int, depth: Int) throws(GenericJSONError) -> (Int, Int, Int) {
        guard depth < GenericJSON.maximumDepth else {
            throw GenericJSONError(.tooDeep, at: offset, "arrays and objects nested deeper than \(GenericJSON.maximumDepth)")
        }
        guard limit - offset >= 9 else { throw GenericJSONError(.truncated, at: offset, "a container header needs 8 bytes") }
        let length = u32(at: offset + 1), count = u32(at: offset + 5)
        guard length <= limit - offset - 9 else {
            throw GenericJSONError(.truncated, at: offset, "a container of \(length) bytes runs past its end")
        }
        // Every entry takes at least one byte: a count larger than the content is a lie.
        guard count <= length else { throw GenericJSONError(.malformed, at: offset, "a container of \(length) bytes cannot hold \(count) values") }
        return (offset + 9, count, offset + 9 + length)
    }

    func lengthMismatch(_ offset: Int, _ cursor: Int, _ end: Int) -> GenericJSONError {
        GenericJSONError(.malformed, at: offset, "a container's values end at byte \(cursor), its length says \(end)")
    }

    func u32(at offset: Int) -> Int {
        Int(input[offset]) | Int(input[offset + 1]) << 8 | Int(input[offset + 2]) << 16 | Int(input[offset + 3]) << 24
    }

    /// A LEB128 varint: (value, offset past it). More than 64 bits is malformed.
    func varint(at offset: Int, limit: Int) throws(GenericJSONError) -> (UInt64, Int) {
        var value: UInt64 = 0, shift: UInt64 = 0, i = offset
        while true {
            guard i < limit else { throw GenericJSONError(.truncated, at: offset, "a number runs past its end") }
            let byte = input[i]
            guard shift < 63 || (shift == 63 && byte <= 1) else { throw GenericJSONError(.malformed, at: offset, "a number wider than 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            i += 1
            if byte < 0x80 { return (value, i) }
            shift += 7
        }
    }

    /// A length-prefixed run of bytes (a string or a key): (start, end).
    func run(at offset: Int, limit: Int) throws(GenericJSONError) -> (Int, Int) {
        let (length, start) = try varint(at: offset, limit: limit)
        guard length <= UInt64(limit - start) else { throw GenericJSONError(.truncated, at: offset, "a string of \(length) bytes runs past its end") }
        return (start, start + Int(length))
    }
}
