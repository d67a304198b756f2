final class BinaryReader {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func corrupted(_ what: String, _ codingPath: [any CodingKey]) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: what))
    }

    func tag(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> BinaryTag {
        guard offset < bytes.count else { throw corrupted("truncated", codingPath()) }
        guard let tag = BinaryTag(rawValue: bytes[offset]) else { throw corrupted("unknown tag \(bytes[offset])", codingPath()) }
        return tag
    }

    /// Reads a varint at `offset`: (value, offset after it).
    func varint(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (UInt64, Int) {
        var value: UInt64 = 0, shift: UInt64 = 0, i = offset
        while true {
            guard i < bytes.count, shift < 64 else { throw corrupted("bad varint", codingPath()) }
            let byte = bytes[i]
            value |= UInt64(byte & 0x7F) << shift
            i += 1
            if byte < 0x80 { return (value, i) }
            shift += 7
        }
    }

    func u32(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Int {
        guard offset + 4 <= bytes.count else { throw corrupted("truncated", codingPath()) }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
    }

    /// A length-prefixed run of bytes (string or key): (start, end).
    func run(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Int, Int) {
        let (length, start) = try varint(at: offset, codingPath())
        guard length <= UInt64(bytes.count - start) else { throw corrupted("truncated string", codingPath()) }
        return (start, start + Int(length))
    }

    /// The offset just past the value at `offset`, without decoding it.
    func valueEnd(at offset: Int, codingPath: @autoclosure () -> [any CodingKey]) throws -> Int {
        switch try tag(at: offset, codingPath()) {
        case .null, .false, .true: return offset + 1
        case .int, .uint: return try varint(at: offset + 1, codingPath()).1
        case .double: return try checked(offset + 9, codingPath())
        case .float: return try checked(offset + 5, codingPath())
        case .string: return try run(at: offset + 1, codingPath()).1
        case .array, .map:
            let length = try u32(at: offset + 1, codingPath())
            return try checked(offset + 9 + length, codingPath())
        }
    }

    private func checked(_ end: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Int {
        guard end <= bytes.count else { throw corrupted("truncated", codingPath()) }
        return end
    }

    /// A container at `offset`: (first entry offset, count, end).
    func container(_ expected: BinaryTag, at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Int, Int, Int) {
        let found = try tag(at: offset, codingPath())
        guard found == expected else {
            throw DecodingError.typeMismatch(
                expected == .map ? [String: Int].self : [Int].self,
                .init(
                    codingPath: codingPath(), debugDescription: "expected \(expected == .map ? "an object" : "an array"), found \(found)"))
        }
        let length = try u32(at: offset + 1, codingPath())
        let count = try u32(at: offset + 5, codingPath())
        let end = try checked(offset + 9 + length, codingPath())
        // Every entry takes at least one byte: a count larger than the content is a lie.
        guard count <= length else { throw corrupted("bad count", codingPath()) }
        return (offset + 9, count, end)
    }

    func decodeValue<T: Decodable>(_ type: T.Type, at offset: Int, codingPath: @autoclosure () -> [any CodingKey]) throws -> T {
        // swift-format-ignore: NeverForceUnwrap
        // (each case's cast is to the type its `case is` just matched T against)
        switch type {
        case is String.Type: return try string(at: offset, codingPath()) as! T
        case is Int.Type: return try integer(Int.self, at: offset, codingPath()) as! T
        case is UInt64.Type: return try integer(UInt64.self, at: offset, codingPath()) as! T
        case is Bool.Type: return try bool(at: offset, codingPath()) as! T
        case is Double.Type: return try double(at: offset, codingPath()) as! T
        default: return try T(from: _BinaryDecoder(reader: self, offset: offset, codingPath: codingPath()))
        }
    }

    func isNil(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool { try tag(at: offset, codingPath()) == .null }

    func bool(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        switch try tag(at: offset, codingPath()) {
        case .true: return true
        case .false: return false
        case let other: throw mismatch(Bool.self, other, codingPath())
        }
    }

    func string(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
        let found = try tag(at: offset, codingPath())
        guard found == .string else { throw mismatch(String.self, found, codingPath()) }
        let (start, end) = try run(at: offset + 1, codingPath())
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    func integer<I: FixedWidthInteger>(_ type: I.Type, at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> I {
        let found = try tag(at: offset, codingPath())
        switch found {
        case .int:
            let raw = try varint(at: offset + 1, codingPath()).0
            let value = Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
            guard let result = I(exactly: value) else { throw corrupted("\(value) does not fit \(I.self)", codingPath()) }
            return result
        case .uint:
            let value = try varint(at: offset + 1, codingPath()).0
            guard let result = I(exactly: value) else { throw corrupted("\(value) does not fit \(I.self)", codingPath()) }
            return result
        default:
            throw mismatch(I.self, found, codingPath())
        }
    }

    func double(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Double {
        let found = try tag(at: offset, codingPath())
        switch found {
        case .double:
            _ = try checked(offset + 9, codingPath())
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(bytes[offset + 1 + i]) << (8 * UInt64(i)) }
            return Double(bitPattern: bits)
        case .float:
            return Double(try float(at: offset, codingPath()))
        case .int: return Double(try integer(Int64.self, at: offset, codingPath()))
        case .uint: return Double(try integer(UInt64.self, at: offset, codingPath()))
        default: throw mismatch(Double.self, found, codingPath())
        }
    }

    func float(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Float {
        let found = try tag(at: offset, codingPath())
        guard found == .float else { return Float(try double(at: offset, codingPath())) }
        _ = try checked(offset + 5, codingPath())
        var bits: UInt32 = 0
        for i in 0..<4 { bits |= UInt32(bytes[offset + 1 + i]) << (8 * UInt32(i)) }
        return Float(bitPattern: bits)
    }

    func mismatch(_ type: Any.Type, _ found: BinaryTag, _ codingPath: @autoclosure () -> [any CodingKey]) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath(), debugDescription: "expected \(type), found \(found)"))
    }

    /// True when the key stored at `offset` equals `key`.
    func keyEquals(at offset: Int, _ key: String, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Bool, Int) {
        let (start, end) = try run(at: offset, codingPath())
        var key = key
        let equal = key.withUTF8 { utf8 in
            utf8.count == end - start
                && bytes.withUnsafeBufferPointer { all in
                    memcmpEqual(all.baseAddress?.advanced(by: start), utf8.baseAddress, utf8.count)
                }
        }
        return (equal, end)
    }
}

@inline(__always)
private func memcmpEqual(_ a: UnsafePointer<UInt8>?, _ b: UnsafePointer<UInt8>?, _ count: Int) -> Bool {
    guard count > 0 else { return true }
    guard let a, let b else { return false }
    for i in 0..<count where a[i] != b[i] { return false }
    return true
}
