import Foundation

/// What keeps bytes from being a value of the binary format, and where. The format has one reader
/// (``WireReader``) and it reports faults this way; each of its users words them in its own error
/// type: the decoders as `DecodingError`s, the JSON transcoder as ``GenericJSONError``s.
struct BinaryFault: Error, Sendable {
    enum Kind: Sendable {
        /// No byte where a value should start.
        case missing
        case unknownTag(UInt8)
        /// A varint that runs past the end.
        case shortVarint
        /// A varint holding more than 64 bits.
        case wideVarint
        /// A double or float without its `width` bytes.
        case shortNumber(width: Int)
        /// A string or key of `length` bytes that runs past the end.
        case shortString(length: UInt64)
        /// A container without its whole 8-byte header.
        case shortHeader
        /// A container of `length` bytes that runs past the end.
        case shortContainer(length: Int)
        /// A container claiming more entries than it has bytes (each entry takes at least one).
        case badCount(length: Int, count: Int)
    }

    let kind: Kind
    /// Where the piece at fault starts: a value's tag, or a varint's first byte.
    let offset: Int

    init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// The fault as both decoders (generated and `Codable`) throw it.
    func decodingError(_ codingPath: [any CodingKey]) -> DecodingError {
        let what: String
        switch kind {
        case .missing, .shortNumber, .shortHeader, .shortContainer: what = "truncated"
        case .unknownTag(let byte): what = "unknown tag \(byte)"
        case .shortVarint, .wideVarint: what = "bad varint"
        case .shortString: what = "truncated string"
        case .badCount: what = "bad count"
        }
        return .dataCorrupted(.init(codingPath: codingPath, debugDescription: what))
    }
}

/// The binary format's one reader (BinaryCodec.swift documents the format). It works at two levels:
/// - at any offset, without moving: the pieces of the format (tags, varints, strings, container headers,
///   a value's end), which throw a ``BinaryFault`` and stay within a given limit, and typed values with
///   the `DecodingError`s the decoders throw. The `Codable` decoder and the JSON transcoder read this way;
/// - as a cursor at `offset`, which generated code (`@WireCodable`) drives: each read moves past what it
///   read.
///
/// Every read checks its bounds and throws rather than trapping.
public struct WireReader {
    public let bytes: [UInt8]
    public var offset: Int
    /// Containers entered and not yet left: a recursive type's payload may nest no deeper than
    /// ``maximumDepth``, so a hostile one cannot exhaust the thread's stack.
    private var depth = 0
    /// As deep as the generic JSON reader goes (``GenericJSON``).
    public static let maximumDepth = 512

    public init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// A container being read: its entry count and where it ends.
    public struct Container {
        public let count: Int
        public let end: Int
    }

    /// A map entry's key: where its UTF-8 bytes are.
    public struct Key {
        @usableFromInline let start: Int
        @usableFromInline let end: Int
    }

    // MARK: - The format's pieces, at any offset and within `limit`

    @inline(__always)
    func tag(at offset: Int, limit: Int) throws(BinaryFault) -> BinaryTag {
        guard offset < limit else { throw BinaryFault(.missing, at: offset) }
        guard let tag = BinaryTag(rawValue: bytes[offset]) else { throw BinaryFault(.unknownTag(bytes[offset]), at: offset) }
        return tag
    }

    /// A LEB128 varint: (value, offset past it). One of more than 64 bits is a fault.
    @inline(__always)
    func varint(at offset: Int, limit: Int) throws(BinaryFault) -> (UInt64, Int) {
        // Most varints (key and string lengths, small numbers) are one byte.
        if offset < limit, bytes[offset] < 0x80 { return (UInt64(bytes[offset]), offset + 1) }
        var value: UInt64 = 0, shift: UInt64 = 0, i = offset
        while true {
            guard i < limit else { throw BinaryFault(.shortVarint, at: offset) }
            let byte = bytes[i]
            guard shift < 63 || (shift == 63 && byte <= 1) else { throw BinaryFault(.wideVarint, at: offset) }
            value |= UInt64(byte & 0x7F) << shift
            i += 1
            if byte < 0x80 { return (value, i) }
            shift += 7
        }
    }

    /// A length-prefixed run of bytes (a string or a key) at `offset`: (start, end).
    @inline(__always)
    func run(at offset: Int, limit: Int) throws(BinaryFault) -> (Int, Int) {
        let (length, start) = try varint(at: offset, limit: limit)
        guard length <= UInt64(limit - start) else { throw BinaryFault(.shortString(length: length), at: offset) }
        return (start, start + Int(length))
    }

    /// The `width` little-endian bytes of the double (8) or float (4) whose tag is at `offset`.
    func number(at offset: Int, width: Int, limit: Int) throws(BinaryFault) -> UInt64 {
        precondition(width == 8 || width == 4, "a double or a float")
        guard limit - offset > width else { throw BinaryFault(.shortNumber(width: width), at: offset) }
        return width == 8 ? bytes.readLittleEndian(UInt64.self, at: offset + 1) : UInt64(bytes.readLittleEndian(UInt32.self, at: offset + 1))
    }

    /// The header of the container whose tag is at `offset`: (first entry, count, end).
    @inline(__always)
    func header(at offset: Int, limit: Int) throws(BinaryFault) -> (Int, Int, Int) {
        guard limit - offset >= 9 else { throw BinaryFault(.shortHeader, at: offset) }
        let length = u32(at: offset + 1), count = u32(at: offset + 5)
        guard length <= limit - offset - 9 else { throw BinaryFault(.shortContainer(length: length), at: offset) }
        guard count <= length else { throw BinaryFault(.badCount(length: length, count: count), at: offset) }
        return (offset + 9, count, offset + 9 + length)
    }

    /// Four bytes little-endian; the caller has checked they are there.
    @inline(__always)
    func u32(at offset: Int) -> Int {
        Int(bytes.readLittleEndian(UInt32.self, at: offset))
    }

    /// The offset just past the value at `offset`, read no further than it takes to find its end.
    func valueEnd(at offset: Int, limit: Int) throws(BinaryFault) -> Int {
        let tag = try tag(at: offset, limit: limit)
        switch tag {
        case .null, .false, .true: return offset + 1
        case .int, .uint: return try varint(at: offset + 1, limit: limit).1
        case .double, .float:
            let width = tag == .double ? 8 : 4
            guard limit - offset > width else { throw BinaryFault(.shortNumber(width: width), at: offset) }
            return offset + 1 + width
        case .string: return try run(at: offset + 1, limit: limit).1
        case .array, .map: return try header(at: offset, limit: limit).2
        }
    }

    // MARK: - The same within the bytes, and typed values, with the decoders' errors

    @usableFromInline
    func corrupted(_ what: String, _ codingPath: [any CodingKey] = []) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: what))
    }

    @usableFromInline
    func mismatch(_ type: Any.Type, _ found: BinaryTag, _ codingPath: [any CodingKey] = []) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(type), found \(found)"))
    }

    @usableFromInline
    func tag(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> BinaryTag {
        do { return try tag(at: offset, limit: bytes.count) } catch { throw error.decodingError(codingPath()) }
    }

    @usableFromInline
    func varint(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (UInt64, Int) {
        do { return try varint(at: offset, limit: bytes.count) } catch { throw error.decodingError(codingPath()) }
    }

    func run(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Int, Int) {
        do { return try run(at: offset, limit: bytes.count) } catch { throw error.decodingError(codingPath()) }
    }

    func valueEnd(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Int {
        do { return try valueEnd(at: offset, limit: bytes.count) } catch { throw error.decodingError(codingPath()) }
    }

    func number(at offset: Int, width: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> UInt64 {
        do { return try number(at: offset, width: width, limit: bytes.count) } catch { throw error.decodingError(codingPath()) }
    }

    /// The container at `offset`, which must be a map or an array as `expected` says: (first entry, count, end).
    func container(_ expected: BinaryTag, at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Int, Int, Int) {
        let found = try tag(at: offset, codingPath())
        guard found == expected else {
            throw DecodingError.typeMismatch(
                expected == .map ? [String: Int].self : [Int].self,
                .init(
                    codingPath: codingPath(), debugDescription: "expected \(expected == .map ? "an object" : "an array"), found \(found)"))
        }
        do { return try header(at: offset, limit: bytes.count) } catch { throw error.decodingError(codingPath()) }
    }

    func isNil(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool { try tag(at: offset, codingPath()) == .null }

    func bool(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        switch try tag(at: offset, codingPath()) {
        case .true: return true
        case .false: return false
        case let other: throw mismatch(Bool.self, other, codingPath())
        }
    }

    /// The string at `offset`: (value, end).
    func string(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (String, Int) {
        let found = try tag(at: offset, codingPath())
        guard found == .string else { throw mismatch(String.self, found, codingPath()) }
        let (start, end) = try run(at: offset + 1, codingPath())
        return (String(decoding: bytes[start..<end], as: UTF8.self), end)
    }

    /// The integer at `offset`, written as int or uint, which must fit `I`: (value, end).
    @inlinable
    func integer<I: FixedWidthInteger>(_ type: I.Type, at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (I, Int) {
        let found = try tag(at: offset, codingPath())
        switch found {
        case .int:
            let (raw, end) = try varint(at: offset + 1, codingPath())
            let value = Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
            guard let result = I(exactly: value) else { throw corrupted("\(value) does not fit \(I.self)", codingPath()) }
            return (result, end)
        case .uint:
            let (value, end) = try varint(at: offset + 1, codingPath())
            guard let result = I(exactly: value) else { throw corrupted("\(value) does not fit \(I.self)", codingPath()) }
            return (result, end)
        default:
            throw mismatch(I.self, found, codingPath())
        }
    }

    /// The number at `offset` as a double (a float or an integer widened): (value, end).
    func double(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Double, Int) {
        let found = try tag(at: offset, codingPath())
        switch found {
        case .double: return (Double(bitPattern: try number(at: offset, width: 8, codingPath())), offset + 9)
        case .float: return (Double(Float(bitPattern: UInt32(try number(at: offset, width: 4, codingPath())))), offset + 5)
        case .int:
            let (value, end) = try integer(Int64.self, at: offset, codingPath())
            return (Double(value), end)
        case .uint:
            let (value, end) = try integer(UInt64.self, at: offset, codingPath())
            return (Double(value), end)
        default: throw mismatch(Double.self, found, codingPath())
        }
    }

    /// The number at `offset` as a float (a double or an integer narrowed, whose type errors name
    /// Double): (value, end).
    func float(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Float, Int) {
        guard try tag(at: offset, codingPath()) == .float else {
            let (value, end) = try double(at: offset, codingPath())
            return (Float(value), end)
        }
        return (Float(bitPattern: UInt32(try number(at: offset, width: 4, codingPath()))), offset + 5)
    }

    /// Whether the key at `offset` is `key`, and where its value starts.
    func keyEquals(at offset: Int, _ key: String, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Bool, Int) {
        let (start, end) = try run(at: offset, codingPath())
        var key = key
        let equal = key.withUTF8 { utf8 in
            utf8.count == end - start && bytesEqual(start, utf8.baseAddress, utf8.count)
        }
        return (equal, end)
    }

    /// Whether the `count` bytes from `start` are those at `other`.
    private func bytesEqual(_ start: Int, _ other: UnsafePointer<UInt8>?, _ count: Int) -> Bool {
        guard count > 0 else { return true }
        return bytes.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress, let other else { return false }
            return memcmp(base + start, other, count) == 0
        }
    }

    // MARK: - Errors generated code throws

    /// A field that a non-optional property needs is not there: "missing field 'name'".
    public func missing(_ key: StaticString) -> DecodingError {
        .keyNotFound(WireCodingKey("\(key)"), .init(codingPath: [], debugDescription: "no value for '\(key)'"))
    }

    /// An enum's map names no known case, or more than one.
    public func caseCount(_ type: Any.Type) -> DecodingError {
        .typeMismatch(type, .init(codingPath: [], debugDescription: "Invalid number of keys found, expected one."))
    }

    /// A raw-value enum's value is none of its cases.
    public func badRawValue<Raw>(_ type: Any.Type, _ raw: Raw) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "Cannot initialize \(type) from invalid \(Raw.self) value \(raw)"))
    }

    // MARK: - The cursor

    /// Skips one value of any kind (an unknown field's).
    public mutating func skipValue() throws { offset = try valueEnd(at: offset, []) }

    /// True (and past it) when the next value is nil; false (and not moved) otherwise.
    public mutating func readNil() throws -> Bool {
        guard try tag(at: offset, []) == .null else { return false }
        offset += 1
        return true
    }

    public mutating func read(_ type: Bool.Type) throws -> Bool {
        let value = try bool(at: offset, [])
        offset += 1
        return value
    }

    public mutating func read(_ type: String.Type) throws -> String {
        let (value, end) = try string(at: offset, [])
        offset = end
        return value
    }

    /// An integer written as int or uint that fits `I`.
    @inlinable
    public mutating func readInteger<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        let (value, end) = try integer(type, at: offset, [])
        offset = end
        return value
    }

    public mutating func read(_ type: Double.Type) throws -> Double {
        let (value, end) = try double(at: offset, [])
        offset = end
        return value
    }

    public mutating func read(_ type: Float.Type) throws -> Float {
        let (value, end) = try float(at: offset, [])
        offset = end
        return value
    }

    private mutating func begin(_ expected: BinaryTag) throws -> Container {
        let (first, count, end) = try container(expected, at: offset, [])
        guard depth < WireReader.maximumDepth else { throw corrupted("nested deeper than \(WireReader.maximumDepth) containers") }
        depth += 1
        offset = first
        return Container(count: count, end: end)
    }

    /// Enters a map: then `count` × (`readKey`, one value), then `end(_:)`.
    public mutating func beginMap() throws -> Container { try begin(.map) }
    /// Enters an array: then `count` values, then `end(_:)`.
    public mutating func beginArray() throws -> Container { try begin(.array) }

    /// Leaves a container whose entries were all read (or skipped).
    public mutating func end(_ container: Container) throws {
        guard offset <= container.end else { throw corrupted("entry past its container") }
        offset = container.end
        depth -= 1
    }

    public mutating func readKey() throws -> Key {
        let (start, end) = try run(at: offset, [])
        offset = end
        return Key(start: start, end: end)
    }

    /// True when `key` is `name`.
    public func key(_ key: Key, is name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard key.end - key.start == count else { return false }
        guard name.hasPointerRepresentation else { return keyString(key) == "\(name)" }
        return bytesEqual(key.start, name.utf8Start, count)
    }

    public func keyString(_ key: Key) -> String { String(decoding: bytes[key.start..<key.end], as: UTF8.self) }

    // MARK: - Values

    /// One value, by its generated or built-in conformance.
    @inlinable
    public mutating func decode<T: WireDecodable>(_ type: T.Type) throws -> T { try T(wireReader: &self) }

    /// One value of a type without a conformance, through `Decodable` (a conforming type seen only as
    /// `Decodable` still takes its own path).
    @_disfavoredOverload
    public mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let wire = T.self as? any WireDecodable.Type {
            guard let value = try wire.init(wireReader: &self) as? T else { throw corrupted("not a \(T.self)") }
            return value
        }
        let end = try valueEnd(at: offset, [])
        let value = try SharedReader(bytes).decodeValue(type, at: offset, codingPath: [])
        offset = end
        return value
    }

    /// A map entry's value: a decoding error in a scalar names the field, as the `Codable` path's do.
    @inlinable
    public mutating func decode<T: WireDecodable>(_ type: T.Type, forKey key: StaticString) throws -> T {
        do { return try T(wireReader: &self) } catch let error as DecodingError where T.wireIsLeaf {
            throw Self.naming(error, key)
        }
    }

    @usableFromInline
    static func naming(_ error: DecodingError, _ key: StaticString) -> DecodingError { error.prepending(WireCodingKey("\(key)")) }

    @_disfavoredOverload
    public mutating func decode<T: Decodable>(_ type: T.Type, forKey key: StaticString) throws -> T { try decode(type) }

    /// An optional map entry's value: nil when the entry holds nil (a missing entry stays nil too).
    @inlinable
    public mutating func decodeIfPresent<T: WireDecodable>(_ type: T.Type, forKey key: StaticString) throws -> T? {
        try readNil() ? nil : decode(type, forKey: key)
    }

    @_disfavoredOverload
    public mutating func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: StaticString) throws -> T? {
        try readNil() ? nil : decode(type)
    }
}
