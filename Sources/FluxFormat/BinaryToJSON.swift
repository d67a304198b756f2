/// Walks a binary payload's tags and writes JSON as it goes. Objects are written in key order: their
/// entries are collected (keys and value offsets only), sorted, then written by jumping to each value,
/// which the containers' lengths make cheap.
struct BinaryToJSON {
    /// One entry of an object being written: its key's bytes and its value's offset in `input`.
    struct Entry: KeyedEntry {
        var keyStart: Int
        var keyEnd: Int
        var value: Int
        var position: Int { value }
    }

    /// The binary format's reader, over the payload: the transcoder reads every piece through it.
    let reader: WireReader
    var input: [UInt8] { reader.bytes }
    var out: [UInt8] = []
    /// The entries of every object being written, innermost last (one buffer for all levels).
    var entries: [Entry] = []

    init(input: [UInt8]) {
        reader = WireReader(input)
        out.reserveCapacity(input.count + input.count / 2)
    }

    mutating func run() throws(GenericJSONError) {
        let end = try value(at: 1, limit: input.count, depth: 0)
        guard end == input.count else { throw GenericJSONError(.malformed, at: end, "\(input.count - end) trailing bytes after the value") }
    }

    /// Writes the value at `offset`, which must end by `limit`; returns the offset just past it.
    mutating func value(at offset: Int, limit: Int, depth: Int) throws(GenericJSONError) -> Int {
        switch try tag(at: offset, limit: limit) {
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
            try JSONText.appendDouble(Double(bitPattern: try number(at: offset, width: 8, limit: limit)), at: offset, to: &out)
            return offset + 9
        case .float:
            try JSONText.appendFloat(Float(bitPattern: UInt32(try number(at: offset, width: 4, limit: limit))), at: offset, to: &out)
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
        out.append(ASCII.openBrace)
        for (written, index) in JSONText.keyOrder(&entries, from: base, keys: input).enumerated() {
            if written > 0 { out.append(ASCII.comma) }
            let entry = entries[index]
            // Keys were checked for UTF-8 above.
            try JSONText.appendString(input, entry.keyStart, entry.keyEnd, validating: false, to: &out)
            out.append(ASCII.colon)
            _ = try value(at: entry.value, limit: end, depth: depth + 1)
        }
        out.append(ASCII.closeBrace)
    }

    // The reader's pieces, their faults worded as the transcoder's errors.

    func tag(at offset: Int, limit: Int) throws(GenericJSONError) -> BinaryTag {
        do { return try reader.tag(at: offset, limit: limit) } catch { throw error.jsonError }
    }

    /// The offset just past the value at `offset` (within `limit`), without writing it.
    func skip(at offset: Int, limit: Int) throws(GenericJSONError) -> Int {
        do { return try reader.valueEnd(at: offset, limit: limit) } catch { throw error.jsonError }
    }

    /// A container's header: (first entry, count, end), no deeper than JSON may nest.
    func container(at offset: Int, limit: Int, depth: Int) throws(GenericJSONError) -> (Int, Int, Int) {
        guard depth < GenericJSON.maximumDepth else {
            throw GenericJSONError(.tooDeep, at: offset, "arrays and objects nested deeper than \(GenericJSON.maximumDepth)")
        }
        do { return try reader.header(at: offset, limit: limit) } catch { throw error.jsonError }
    }

    func varint(at offset: Int, limit: Int) throws(GenericJSONError) -> (UInt64, Int) {
        do { return try reader.varint(at: offset, limit: limit) } catch { throw error.jsonError }
    }

    /// A length-prefixed run of bytes (a string or a key): (start, end).
    func run(at offset: Int, limit: Int) throws(GenericJSONError) -> (Int, Int) {
        do { return try reader.run(at: offset, limit: limit) } catch { throw error.jsonError }
    }

    func number(at offset: Int, width: Int, limit: Int) throws(GenericJSONError) -> UInt64 {
        do { return try reader.number(at: offset, width: width, limit: limit) } catch { throw error.jsonError }
    }

    func lengthMismatch(_ offset: Int, _ cursor: Int, _ end: Int) -> GenericJSONError {
        GenericJSONError(.malformed, at: offset, "a container's values end at byte \(cursor), its length says \(end)")
    }
}

extension BinaryFault {
    /// The fault as the JSON transcoder (and the intake's structure check) reports it.
    var jsonError: GenericJSONError {
        switch kind {
        case .missing: GenericJSONError(.truncated, at: offset, "a value is missing")
        case .unknownTag(let byte): GenericJSONError(.malformed, at: offset, "unknown tag 0x\(String(byte, radix: 16))")
        case .shortVarint: GenericJSONError(.truncated, at: offset, "a number runs past its end")
        case .wideVarint: GenericJSONError(.malformed, at: offset, "a number wider than 64 bits")
        case .shortNumber(let width): GenericJSONError(.truncated, at: offset, "a \(width == 8 ? "double" : "float") needs \(width) bytes")
        case .shortString(let length): GenericJSONError(.truncated, at: offset, "a string of \(length) bytes runs past its end")
        case .shortHeader: GenericJSONError(.truncated, at: offset, "a container header needs 8 bytes")
        case .shortContainer(let length): GenericJSONError(.truncated, at: offset, "a container of \(length) bytes runs past its end")
        case .badCount(let length, let count):
            GenericJSONError(.malformed, at: offset, "a container of \(length) bytes cannot hold \(count) values")
        }
    }
}
