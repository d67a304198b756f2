/// The compact wire codec: any `Codable` value as tagged binary, several times cheaper than Foundation's
/// JSON on Linux (BENCHMARKS.md has the figures).
///
/// A payload is the marker byte `0xB1` followed by one value:
/// ```
/// 0x00 nil      0x01 false   0x02 true
/// 0x03 int      zigzag LEB128 varint
/// 0x04 uint     LEB128 varint
/// 0x05 double   8 bytes, IEEE 754 little-endian
/// 0x06 float    4 bytes
/// 0x07 string   varint byte count, UTF-8
/// 0x08 array    u32 content length, u32 count, then `count` values
/// 0x09 map      u32 content length, u32 count, then `count` × (varint key length, UTF-8 key, value)
/// ```
/// Containers carry their length, so a reader skips any value in constant time. JSON never starts with
/// `0xB1` (it is not even valid UTF-8 as a first byte), so a reader tells the two codecs apart by the first
/// byte: see `WireCodec`.
///
/// Values are written in the order `encode(to:)` writes them; an `encode(to:)` that keeps two containers
/// open and interleaves writes between them is not supported (synthesized conformances never do).
public struct BinaryPayloadCodec: PayloadCodec {
    public static let marker: UInt8 = 0xB1

    public init() {}
    public var name: String { "binary" }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let writer = BinaryWriter()
        writer.bytes.append(Self.marker)
        try writer.encodeValue(value, depth: 0, codingPath: [])
        writer.closeContainers(deeperThan: -1)
        return writer.bytes
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        guard bytes.first == Self.marker else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a binary payload"))
        }
        let reader = BinaryReader(bytes)
        let end = try reader.valueEnd(at: 1, codingPath: [])
        guard end == bytes.count else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(bytes.count - end) trailing bytes"))
        }
        return try reader.decodeValue(type, at: 1, codingPath: [])
    }

    /// True when `bytes` is a binary map whose first key is `key` (an action's case name), read without
    /// decoding anything else.
    public static func firstKey(of bytes: [UInt8], is key: String) -> Bool {
        let utf8 = Array(key.utf8)
        guard utf8.count < 128, bytes.count >= 11 + utf8.count, bytes[0] == marker, bytes[1] == BinaryTag.map.rawValue,
            bytes[10] == UInt8(utf8.count)
        else { return false }
        return bytes[11..<(11 + utf8.count)].elementsEqual(utf8)
    }
}

/// Reads either codec (by the first byte) and writes the one chosen for the cluster.
public struct WireCodec: PayloadCodec {
    public enum Format: String, Sendable, CaseIterable, Codable {
        case binary, json
    }

    public var format: Format
    public init(_ format: Format = .binary) { self.format = format }
    public var name: String { format.rawValue }

    public static func isBinary(_ bytes: [UInt8]) -> Bool { bytes.first == BinaryPayloadCodec.marker }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        switch format {
        case .binary: try BinaryPayloadCodec().encode(value)
        case .json: try JSONPayloadCodec().encode(value)
        }
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if Self.isBinary(bytes) { return try BinaryPayloadCodec().decode(type, from: bytes) }
        return try JSONPayloadCodec().decode(type, from: bytes)
    }
}

// MARK: - Tags

enum BinaryTag: UInt8 {
    case null = 0, `false`, `true`, int, uint, double, float, string, array, map
}

// MARK: - Writing

final class BinaryWriter {
    var bytes: [UInt8] = []
    /// Containers whose length is not yet final: (offset of the length field, depth), innermost last.
    /// A container is complete once anything at its own depth or shallower is written next.
    private var open: [(lengthAt: Int, depth: Int)] = []

    init() { bytes.reserveCapacity(64) }

    func closeContainers(deeperThan depth: Int) {
        while let last = open.last, last.depth > depth {
            open.removeLast()
            let length = UInt32(truncatingIfNeeded: bytes.count - last.lengthAt - 8)
            patch(length, at: last.lengthAt)
        }
    }

    func patch(_ value: UInt32, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value >> 24)
    }

    /// Starts a container value at `depth`; returns the offset of its count field.
    func beginContainer(_ tag: BinaryTag, depth: Int) -> Int {
        closeContainers(deeperThan: depth)
        bytes.append(tag.rawValue)
        let lengthAt = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])
        open.append((lengthAt, depth))
        return lengthAt + 4
    }

    func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    func key(_ key: String) {
        var key = key
        key.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    func string(_ value: String) {
        bytes.append(BinaryTag.string.rawValue)
        key(value)
    }

    func int(_ value: Int64) {
        bytes.append(BinaryTag.int.rawValue)
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    func uint(_ value: UInt64) {
        bytes.append(BinaryTag.uint.rawValue)
        varint(value)
    }

    func double(_ value: Double) {
        bytes.append(BinaryTag.double.rawValue)
        var bits = value.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { bytes.append(contentsOf: $0) }
    }

    func float(_ value: Float) {
        bytes.append(BinaryTag.float.rawValue)
        var bits = value.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { bytes.append(contentsOf: $0) }
    }

    func bool(_ value: Bool) { bytes.append(value ? BinaryTag.true.rawValue : BinaryTag.false.rawValue) }
    func null() { bytes.append(BinaryTag.null.rawValue) }

    /// Writes one value at `depth`, with fast paths for the common scalars.
    func encodeValue<T: Encodable>(_ value: T, depth: Int, codingPath: [any CodingKey]) throws {
        closeContainers(deeperThan: depth)
        switch T.self {
        case is String.Type: string(value as! String)
        case is Int.Type: int(Int64(value as! Int))
        case is UInt64.Type: uint(value as! UInt64)
        case is Bool.Type: bool(value as! Bool)
        case is Double.Type: double(value as! Double)
        default:
            let start = bytes.count
            try value.encode(to: _BinaryEncoder(writer: self, depth: depth, codingPath: codingPath))
            // A value that wrote nothing (a custom encode(to:) that is empty) still takes one slot.
            if bytes.count == start { _ = beginContainer(.map, depth: depth) }
        }
    }
}

struct _BinaryEncoder: Encoder {
    let writer: BinaryWriter
    let depth: Int
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let countAt = writer.beginContainer(.map, depth: depth)
        return KeyedEncodingContainer(BinaryKeyedEncoder<Key>(writer: writer, depth: depth, countAt: countAt, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let countAt = writer.beginContainer(.array, depth: depth)
        return BinaryUnkeyedEncoder(writer: writer, depth: depth, countAt: countAt, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncoder(writer: writer, depth: depth, codingPath: codingPath)
    }
}

struct BinaryKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: BinaryWriter
    let depth: Int
    let countAt: Int
    var count: UInt32 = 0
    var codingPath: [any CodingKey]

    init(writer: BinaryWriter, depth: Int, countAt: Int, codingPath: [any CodingKey]) {
        self.writer = writer
        self.depth = depth
        self.countAt = countAt
        self.codingPath = codingPath
    }

    /// Writes the key of a new entry (children sit one level deeper than the container).
    private mutating func entry(_ key: Key) { entry(named: key.stringValue) }

    private mutating func entry(named name: String) {
        writer.closeContainers(deeperThan: depth)
        count += 1
        writer.patch(count, at: countAt)
        writer.key(name)
    }

    mutating func encodeNil(forKey key: Key) throws { entry(key); writer.null() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { entry(key); writer.bool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { entry(key); writer.string(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { entry(key); writer.double(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { entry(key); writer.float(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { entry(key); writer.int(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { entry(key); writer.uint(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        entry(key)
        try writer.encodeValue(value, depth: depth + 1, codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        entry(key)
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        entry(key)
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        // Under the key "super", as Foundation's encoders do; `Key` itself need not have that case.
        entry(named: "super")
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        // The caller must write exactly one value through the returned encoder.
        entry(key)
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath)
    }
}

struct BinaryUnkeyedEncoder: UnkeyedEncodingContainer {
    let writer: BinaryWriter
    let depth: Int
    let countAt: Int
    var count: Int = 0
    var codingPath: [any CodingKey]

    init(writer: BinaryWriter, depth: Int, countAt: Int, codingPath: [any CodingKey]) {
        self.writer = writer
        self.depth = depth
        self.countAt = countAt
        self.codingPath = codingPath
    }

    private mutating func element() {
        writer.closeContainers(deeperThan: depth)
        count += 1
        writer.patch(UInt32(truncatingIfNeeded: count), at: countAt)
    }

    mutating func encodeNil() throws { element(); writer.null() }
    mutating func encode(_ value: Bool) throws { element(); writer.bool(value) }
    mutating func encode(_ value: String) throws { element(); writer.string(value) }
    mutating func encode(_ value: Double) throws { element(); writer.double(value) }
    mutating func encode(_ value: Float) throws { element(); writer.float(value) }
    mutating func encode(_ value: Int) throws { element(); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { element(); writer.int(value) }
    mutating func encode(_ value: UInt64) throws { element(); writer.uint(value) }
    mutating func encode(_ value: UInt8) throws { element(); writer.uint(UInt64(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        element()
        try writer.encodeValue(value, depth: depth + 1, codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        element()
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        element()
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        element()
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath)
    }
}

struct BinarySingleValueEncoder: SingleValueEncodingContainer {
    let writer: BinaryWriter
    let depth: Int
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { writer.closeContainers(deeperThan: depth); writer.null() }
    mutating func encode(_ value: Bool) throws { writer.closeContainers(deeperThan: depth); writer.bool(value) }
    mutating func encode(_ value: String) throws { writer.closeContainers(deeperThan: depth); writer.string(value) }
    mutating func encode(_ value: Double) throws { writer.closeContainers(deeperThan: depth); writer.double(value) }
    mutating func encode(_ value: Float) throws { writer.closeContainers(deeperThan: depth); writer.float(value) }
    mutating func encode(_ value: Int) throws { writer.closeContainers(deeperThan: depth); writer.int(Int64(value)) }
    mutating func encode(_ value: Int8) throws { writer.closeContainers(deeperThan: depth); writer.int(Int64(value)) }
    mutating func encode(_ value: Int16) throws { writer.closeContainers(deeperThan: depth); writer.int(Int64(value)) }
    mutating func encode(_ value: Int32) throws { writer.closeContainers(deeperThan: depth); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { writer.closeContainers(deeperThan: depth); writer.int(value) }
    mutating func encode(_ value: UInt) throws { writer.closeContainers(deeperThan: depth); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { writer.closeContainers(deeperThan: depth); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { writer.closeContainers(deeperThan: depth); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { writer.closeContainers(deeperThan: depth); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { writer.closeContainers(deeperThan: depth); writer.uint(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try writer.encodeValue(value, depth: depth, codingPath: codingPath) }
}

// MARK: - Reading

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
                    memcmpEqual(all.baseAddress! + start, utf8.baseAddress, utf8.count)
                }
        }
        return (equal, end)
    }
}

@inline(__always)
private func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>?, _ count: Int) -> Bool {
    guard count > 0, let b else { return true }
    for i in 0..<count where a[i] != b[i] { return false }
    return true
}

struct _BinaryDecoder: Decoder {
    let reader: BinaryReader
    let offset: Int
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let (first, count, end) = try reader.container(.map, at: offset, codingPath)
        return KeyedDecodingContainer(BinaryKeyedDecoder<Key>(reader: reader, first: first, count: count, end: end, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (first, count, _) = try reader.container(.array, at: offset, codingPath)
        return BinaryUnkeyedDecoder(reader: reader, cursor: first, count: count, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecoder(reader: reader, offset: offset, codingPath: codingPath)
    }
}

/// Looks keys up starting where the previous one was found, so fields read in the order they were
/// written (as synthesized conformances do) cost one comparison each.
final class BinaryKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let reader: BinaryReader
    let first: Int
    let count: Int
    let end: Int
    var codingPath: [any CodingKey]
    /// The next entry to look at, and its index.
    private var cursor: Int
    private var cursorIndex = 0

    init(reader: BinaryReader, first: Int, count: Int, end: Int, codingPath: [any CodingKey]) {
        self.reader = reader
        self.first = first
        self.count = count
        self.end = end
        self.codingPath = codingPath
        self.cursor = first
    }

    /// Synthesized enum decoding asks for every key twice (to count them, then to switch on the
    /// first): they are read once.
    private var keysRead: [Key]? = nil

    var allKeys: [Key] {
        if let keysRead { return keysRead }
        let keys = readKeys()
        keysRead = keys
        return keys
    }

    private func readKeys() -> [Key] {
        var keys: [Key] = []
        var offset = first
        for _ in 0..<count {
            guard let (start, keyEnd) = try? reader.run(at: offset, codingPath),
                let next = try? reader.valueEnd(at: keyEnd, codingPath: codingPath)
            else { break }
            if let key = Key(stringValue: String(decoding: reader.bytes[start..<keyEnd], as: UTF8.self)) { keys.append(key) }
            offset = next
        }
        return keys
    }

    /// The offset of the value stored under `key`, or nil.
    private func find(_ key: Key) throws -> Int? {
        guard count > 0 else { return nil }
        let name = key.stringValue
        var offset = cursor, index = cursorIndex
        for _ in 0..<count {
            if index == count { offset = first; index = 0 }
            let (equal, valueAt) = try reader.keyEquals(at: offset, name, codingPath)
            let next = try reader.valueEnd(at: valueAt, codingPath: codingPath)
            guard next <= end else { throw reader.corrupted("entry past its container", codingPath) }
            index += 1
            if equal {
                cursor = next
                cursorIndex = index
                return valueAt
            }
            offset = next
        }
        return nil
    }

    private func value(_ key: Key) throws -> Int {
        guard let offset = try find(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for '\(key.stringValue)'"))
        }
        return offset
    }

    func contains(_ key: Key) -> Bool {
        let (savedCursor, savedIndex) = (cursor, cursorIndex)
        defer { (cursor, cursorIndex) = (savedCursor, savedIndex) }
        return (try? find(key)) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let (savedCursor, savedIndex) = (cursor, cursorIndex)
        guard let offset = try find(key) else { return true }
        let isNil = try reader.isNil(at: offset, codingPath)
        // A non-nil value is about to be decoded: look it up again from the same place.
        if !isNil { (cursor, cursorIndex) = (savedCursor, savedIndex) }
        return isNil
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try reader.bool(at: value(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try reader.string(at: value(key), codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try reader.double(at: value(key), codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try reader.float(at: value(key), codingPath + [key]) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try reader.integer(type, at: value(key), codingPath + [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try reader.integer(type, at: value(key), codingPath + [key]) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try reader.decodeValue(type, at: value(key), codingPath: codingPath)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try _BinaryDecoder(reader: reader, offset: value(key), codingPath: codingPath).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try _BinaryDecoder(reader: reader, offset: value(key), codingPath: codingPath).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let key = Key(stringValue: "super") else {
            // `Key` has no "super" case: find the entry by name all the same.
            var offset = first
            for _ in 0..<count {
                let (equal, valueAt) = try reader.keyEquals(at: offset, "super", codingPath)
                if equal { return _BinaryDecoder(reader: reader, offset: valueAt, codingPath: codingPath) }
                offset = try reader.valueEnd(at: valueAt, codingPath: codingPath)
            }
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "no value for 'super'"))
        }
        return try superDecoder(forKey: key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        _BinaryDecoder(reader: reader, offset: try value(key), codingPath: codingPath)
    }
}

struct BinaryUnkeyedDecoder: UnkeyedDecodingContainer {
    let reader: BinaryReader
    var cursor: Int
    let total: Int
    var codingPath: [any CodingKey]
    var currentIndex = 0

    init(reader: BinaryReader, cursor: Int, count: Int, codingPath: [any CodingKey]) {
        self.reader = reader
        self.cursor = cursor
        self.total = count
        self.codingPath = codingPath
    }

    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    /// The offset of the next element, advancing past it.
    private mutating func next() throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "array is at its end"))
        }
        let offset = cursor
        cursor = try reader.valueEnd(at: offset, codingPath: codingPath)
        currentIndex += 1
        return offset
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, try reader.isNil(at: cursor, codingPath) else { return false }
        _ = try next()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try reader.bool(at: next(), codingPath) }
    mutating func decode(_ type: String.Type) throws -> String { try reader.string(at: next(), codingPath) }
    mutating func decode(_ type: Double.Type) throws -> Double { try reader.double(at: next(), codingPath) }
    mutating func decode(_ type: Float.Type) throws -> Float { try reader.float(at: next(), codingPath) }
    mutating func decode(_ type: Int.Type) throws -> Int { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try reader.integer(type, at: next(), codingPath) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let index = currentIndex
        do { return try reader.decodeValue(type, at: next(), codingPath: []) } catch let error as DecodingError {
            throw error.prepending(IndexKey(intValue: index))
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try _BinaryDecoder(reader: reader, offset: next(), codingPath: codingPath).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try _BinaryDecoder(reader: reader, offset: next(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        _BinaryDecoder(reader: reader, offset: try next(), codingPath: codingPath)
    }
}

struct BinarySingleValueDecoder: SingleValueDecodingContainer {
    let reader: BinaryReader
    let offset: Int
    var codingPath: [any CodingKey]

    func decodeNil() -> Bool { (try? reader.isNil(at: offset, codingPath)) ?? false }
    func decode(_ type: Bool.Type) throws -> Bool { try reader.bool(at: offset, codingPath) }
    func decode(_ type: String.Type) throws -> String { try reader.string(at: offset, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try reader.double(at: offset, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try reader.float(at: offset, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try reader.integer(type, at: offset, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try reader.decodeValue(type, at: offset, codingPath: codingPath) }
}

struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

extension DecodingError {
    /// The same error one level up: `key` in front of its coding path.
    func prepending(_ key: any CodingKey) -> DecodingError {
        func lift(_ c: Context) -> Context {
            Context(codingPath: [key] + c.codingPath, debugDescription: c.debugDescription, underlyingError: c.underlyingError)
        }
        switch self {
        case .typeMismatch(let type, let c): return .typeMismatch(type, lift(c))
        case .valueNotFound(let type, let c): return .valueNotFound(type, lift(c))
        case .keyNotFound(let k, let c): return .keyNotFound(k, lift(c))
        case .dataCorrupted(let c): return .dataCorrupted(lift(c))
        @unknown default: return self
        }
    }
}
