import Foundation

/// A value that writes itself in the binary codec's format (`BinaryPayloadCodec`) without going
/// through `Encodable`: the bytes are exactly those the `Codable` path writes for the same value.
///
/// Apps do not write conformances by hand: `@WireCodable` (module `FluxWire`) generates them from the
/// type's declaration. `BinaryPayloadCodec` takes this path whenever the type has it, and falls back to
/// `Codable` otherwise; the JSON codec always uses `Codable`.
public protocol WireEncodable: Encodable {
    /// Writes exactly one value (a scalar, or one array or map with its contents) at the writer's end.
    func wireEncode(to writer: inout WireWriter) throws
}

/// A value that reads itself from the binary codec's format without going through `Decodable`,
/// accepting what the `Codable` path accepts: fields in any order, unknown keys ignored.
public protocol WireDecodable: Decodable {
    /// Reads exactly one value at `reader.offset`, leaving the offset just past it.
    init(wireReader reader: inout WireReader) throws
    /// True for scalars: a decoding error inside a keyed field then names the field, as `Codable`'s does.
    static var wireIsLeaf: Bool { get }
}

public typealias WireCodable = WireEncodable & WireDecodable

extension WireDecodable {
    public static var wireIsLeaf: Bool { false }
}

// MARK: - Writer

/// Appends values in the binary codec's format (BinaryCodec.swift documents it). Generated code writes a
/// map as `beginMap`, then `key` and one value per entry, then `end(_:count:)`.
public struct WireWriter {
    public var bytes: [UInt8]

    public init(bytes: [UInt8] = []) {
        self.bytes = bytes
        self.bytes.reserveCapacity(64)
    }

    /// Where a container's length and count go once its contents are written.
    public struct Container {
        @usableFromInline let lengthAt: Int
        @usableFromInline init(lengthAt: Int) { self.lengthAt = lengthAt }
    }

    public mutating func beginMap() -> Container { begin(.map) }
    public mutating func beginArray() -> Container { begin(.array) }

    private mutating func begin(_ tag: BinaryTag) -> Container {
        bytes.append(tag.rawValue)
        let lengthAt = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])
        return Container(lengthAt: lengthAt)
    }

    /// Closes a container holding `count` entries (a map's entry is a key and its value).
    public mutating func end(_ container: Container, count: Int) {
        patch(UInt32(truncatingIfNeeded: bytes.count - container.lengthAt - 8), at: container.lengthAt)
        patch(UInt32(truncatingIfNeeded: count), at: container.lengthAt + 4)
    }

    private mutating func patch(_ value: UInt32, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value >> 24)
    }

    private mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A map entry's key (a field or case name written by generated code).
    public mutating func key(_ key: StaticString) {
        if key.hasPointerRepresentation {
            varint(UInt64(key.utf8CodeUnitCount))
            bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        } else {
            self.key("\(key)")
        }
    }

    public mutating func key(_ key: String) {
        var key = key
        key.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    public mutating func writeNil() { bytes.append(BinaryTag.null.rawValue) }
    public mutating func write(_ value: Bool) { bytes.append(value ? BinaryTag.true.rawValue : BinaryTag.false.rawValue) }

    public mutating func write(_ value: String) {
        bytes.append(BinaryTag.string.rawValue)
        key(value)
    }

    public mutating func write(_ value: Int64) {
        bytes.append(BinaryTag.int.rawValue)
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func write(_ value: UInt64) {
        bytes.append(BinaryTag.uint.rawValue)
        varint(value)
    }

    public mutating func write(_ value: Double) {
        bytes.append(BinaryTag.double.rawValue)
        var bits = value.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { bytes.append(contentsOf: $0) }
    }

    public mutating func write(_ value: Float) {
        bytes.append(BinaryTag.float.rawValue)
        var bits = value.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { bytes.append(contentsOf: $0) }
    }

    /// One value, by its generated or built-in conformance.
    @inlinable
    public mutating func encode<T: WireEncodable>(_ value: T) throws { try value.wireEncode(to: &self) }

    /// One value of a type without a conformance: through `Encodable`, the same bytes as the `Codable`
    /// path writes (a value of a conforming type seen only as `Encodable` still takes its own path).
    @_disfavoredOverload
    public mutating func encode<T: Encodable>(_ value: T) throws {
        if let value = value as? any WireEncodable {
            try value.wireEncode(to: &self)
            return
        }
        let writer = BinaryWriter()
        swap(&writer.bytes, &bytes)
        defer { swap(&writer.bytes, &bytes) }
        try writer.encodeValue(value, depth: 0, codingPath: [])
        writer.closeContainers(deeperThan: -1)
    }
}

// MARK: - Reader

/// Reads values in the binary codec's format from `offset` on. Every read checks its bounds and throws a
/// `DecodingError` (the same kinds and descriptions the `Codable` path throws) rather than trapping.
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

    // Errors, out of line.

    @usableFromInline
    func corrupted(_ what: String) -> DecodingError { .dataCorrupted(.init(codingPath: [], debugDescription: what)) }

    @usableFromInline
    func mismatch(_ type: Any.Type, _ found: BinaryTag) -> DecodingError {
        .typeMismatch(type, .init(codingPath: [], debugDescription: "expected \(type), found \(found)"))
    }

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

    // Primitives.

    @usableFromInline
    func tag(at offset: Int) throws -> BinaryTag {
        guard offset < bytes.count else { throw corrupted("truncated") }
        guard let tag = BinaryTag(rawValue: bytes[offset]) else { throw corrupted("unknown tag \(bytes[offset])") }
        return tag
    }

    @usableFromInline
    func varint(at offset: Int) throws -> (UInt64, Int) {
        var value: UInt64 = 0, shift: UInt64 = 0, i = offset
        while true {
            guard i < bytes.count, shift < 64 else { throw corrupted("bad varint") }
            let byte = bytes[i]
            value |= UInt64(byte & 0x7F) << shift
            i += 1
            if byte < 0x80 { return (value, i) }
            shift += 7
        }
    }

    private func u32(at offset: Int) throws -> Int {
        guard offset >= 0, offset + 4 <= bytes.count else { throw corrupted("truncated") }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
    }

    private func run(at offset: Int) throws -> (Int, Int) {
        let (length, start) = try varint(at: offset)
        guard length <= UInt64(bytes.count - start) else { throw corrupted("truncated string") }
        return (start, start + Int(length))
    }

    private func checked(_ end: Int) throws -> Int {
        guard end <= bytes.count else { throw corrupted("truncated") }
        return end
    }

    /// The offset just past the value at `offset`.
    func valueEnd(at offset: Int) throws -> Int {
        switch try tag(at: offset) {
        case .null, .false, .true: return offset + 1
        case .int, .uint: return try varint(at: offset + 1).1
        case .double: return try checked(offset + 9)
        case .float: return try checked(offset + 5)
        case .string: return try run(at: offset + 1).1
        case .array, .map: return try checked(offset + 9 + u32(at: offset + 1))
        }
    }

    /// Skips one value of any kind (an unknown field's).
    public mutating func skipValue() throws { offset = try valueEnd(at: offset) }

    /// True (and past it) when the next value is nil; false (and not moved) otherwise.
    public mutating func readNil() throws -> Bool {
        guard try tag(at: offset) == .null else { return false }
        offset += 1
        return true
    }

    public mutating func read(_ type: Bool.Type) throws -> Bool {
        switch try tag(at: offset) {
        case .true: offset += 1; return true
        case .false: offset += 1; return false
        case let other: throw mismatch(Bool.self, other)
        }
    }

    public mutating func read(_ type: String.Type) throws -> String {
        let found = try tag(at: offset)
        guard found == .string else { throw mismatch(String.self, found) }
        let (start, end) = try run(at: offset + 1)
        offset = end
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// An integer written as int or uint that fits `I`.
    @inlinable
    public mutating func readInteger<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        let found = try tag(at: offset)
        switch found {
        case .int:
            let (raw, end) = try varint(at: offset + 1)
            let value = Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
            guard let result = I(exactly: value) else { throw corrupted("\(value) does not fit \(I.self)") }
            offset = end
            return result
        case .uint:
            let (value, end) = try varint(at: offset + 1)
            guard let result = I(exactly: value) else { throw corrupted("\(value) does not fit \(I.self)") }
            offset = end
            return result
        default:
            throw mismatch(I.self, found)
        }
    }

    public mutating func read(_ type: Double.Type) throws -> Double {
        let found = try tag(at: offset)
        switch found {
        case .double:
            _ = try checked(offset + 9)
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(bytes[offset + 1 + i]) << (8 * UInt64(i)) }
            offset += 9
            return Double(bitPattern: bits)
        case .float: return Double(try read(Float.self))
        case .int: return Double(try readInteger(Int64.self))
        case .uint: return Double(try readInteger(UInt64.self))
        default: throw mismatch(Double.self, found)
        }
    }

    public mutating func read(_ type: Float.Type) throws -> Float {
        let found = try tag(at: offset)
        guard found == .float else {
            // As the Codable path: a double (or integer) narrowed; its type errors name Double.
            return Float(try read(Double.self))
        }
        _ = try checked(offset + 5)
        var bits: UInt32 = 0
        for i in 0..<4 { bits |= UInt32(bytes[offset + 1 + i]) << (8 * UInt32(i)) }
        offset += 5
        return Float(bitPattern: bits)
    }

    // Containers.

    private mutating func begin(_ expected: BinaryTag) throws -> Container {
        let found = try tag(at: offset)
        guard found == expected else {
            throw DecodingError.typeMismatch(
                expected == .map ? [String: Int].self : [Int].self,
                .init(codingPath: [], debugDescription: "expected \(expected == .map ? "an object" : "an array"), found \(found)"))
        }
        let length = try u32(at: offset + 1)
        let count = try u32(at: offset + 5)
        let end = try checked(offset + 9 + length)
        guard count <= length else { throw corrupted("bad count") }
        guard depth < WireReader.maximumDepth else { throw corrupted("nested deeper than \(WireReader.maximumDepth) containers") }
        depth += 1
        offset += 9
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
        let (start, end) = try run(at: offset)
        offset = end
        return Key(start: start, end: end)
    }

    /// True when `key` is `name`.
    public func key(_ key: Key, is name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard key.end - key.start == count else { return false }
        guard name.hasPointerRepresentation else { return keyString(key) == "\(name)" }
        return bytes.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else { return count == 0 }
            return memcmp(base + key.start, name.utf8Start, count) == 0
        }
    }

    public func keyString(_ key: Key) -> String { String(decoding: bytes[key.start..<key.end], as: UTF8.self) }

    // Values.

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
        let end = try valueEnd(at: offset)
        let value = try BinaryReader(bytes).decodeValue(type, at: offset, codingPath: [])
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

/// A field or case name in a decoding error.
public struct WireCodingKey: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(_ name: String) { stringValue = name }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

// MARK: - Built-in conformances, each writing what its `Codable` conformance writes through the binary codec

extension Bool: WireCodable {
    public static var wireIsLeaf: Bool { true }
    public func wireEncode(to writer: inout WireWriter) { writer.write(self) }
    public init(wireReader reader: inout WireReader) throws { self = try reader.read(Bool.self) }
}

extension String: WireCodable {
    public static var wireIsLeaf: Bool { true }
    public func wireEncode(to writer: inout WireWriter) { writer.write(self) }
    public init(wireReader reader: inout WireReader) throws { self = try reader.read(String.self) }
}

extension Double: WireCodable {
    public static var wireIsLeaf: Bool { true }
    public func wireEncode(to writer: inout WireWriter) { writer.write(self) }
    public init(wireReader reader: inout WireReader) throws { self = try reader.read(Double.self) }
}

extension Float: WireCodable {
    public static var wireIsLeaf: Bool { true }
    public func wireEncode(to writer: inout WireWriter) { writer.write(self) }
    public init(wireReader reader: inout WireReader) throws { self = try reader.read(Float.self) }
}

/// Signed integers: zigzag varints; unsigned: plain varints.
public protocol WireSignedInteger: FixedWidthInteger, SignedInteger, WireCodable {}
public protocol WireUnsignedInteger: FixedWidthInteger, UnsignedInteger, WireCodable {}

extension WireSignedInteger {
    public static var wireIsLeaf: Bool { true }
    @inlinable
    public func wireEncode(to writer: inout WireWriter) { writer.write(Int64(self)) }
    @inlinable
    public init(wireReader reader: inout WireReader) throws { self = try reader.readInteger(Self.self) }
}

extension WireUnsignedInteger {
    public static var wireIsLeaf: Bool { true }
    @inlinable
    public func wireEncode(to writer: inout WireWriter) { writer.write(UInt64(self)) }
    @inlinable
    public init(wireReader reader: inout WireReader) throws { self = try reader.readInteger(Self.self) }
}

extension Int: WireSignedInteger {}
extension Int8: WireSignedInteger {}
extension Int16: WireSignedInteger {}
extension Int32: WireSignedInteger {}
extension Int64: WireSignedInteger {}
extension UInt: WireUnsignedInteger {}
extension UInt8: WireUnsignedInteger {}
extension UInt16: WireUnsignedInteger {}
extension UInt32: WireUnsignedInteger {}
extension UInt64: WireUnsignedInteger {}

/// `Date`'s `Codable` form: seconds since 2001 as a double.
extension Date: WireCodable {
    public static var wireIsLeaf: Bool { true }
    public func wireEncode(to writer: inout WireWriter) { writer.write(timeIntervalSinceReferenceDate) }
    public init(wireReader reader: inout WireReader) throws { self.init(timeIntervalSinceReferenceDate: try reader.read(Double.self)) }
}

/// Nil as the nil tag, anything else as the wrapped value (a struct's optional property is left out
/// when nil instead: generated code does that).
extension Optional: WireEncodable where Wrapped: WireEncodable {
    public func wireEncode(to writer: inout WireWriter) throws {
        if let self { try self.wireEncode(to: &writer) } else { writer.writeNil() }
    }
}

extension Optional: WireDecodable where Wrapped: WireDecodable {
    public init(wireReader reader: inout WireReader) throws {
        self = try reader.readNil() ? nil : Wrapped(wireReader: &reader)
    }
}

extension Array: WireEncodable where Element: WireEncodable {
    public func wireEncode(to writer: inout WireWriter) throws {
        let container = writer.beginArray()
        for element in self { try element.wireEncode(to: &writer) }
        writer.end(container, count: count)
    }
}

extension Array: WireDecodable where Element: WireDecodable {
    public init(wireReader reader: inout WireReader) throws {
        let container = try reader.beginArray()
        var elements: [Element] = []
        elements.reserveCapacity(container.count)
        for index in 0..<container.count {
            do { elements.append(try Element(wireReader: &reader)) } catch let error as DecodingError {
                throw error.prepending(IndexKey(intValue: index))
            }
        }
        try reader.end(container)
        self = elements
    }
}

/// `[String: V]` is a map in `Codable`'s form, entries in the dictionary's own order.
extension Dictionary: WireEncodable where Key == String, Value: WireEncodable {
    public func wireEncode(to writer: inout WireWriter) throws {
        let container = writer.beginMap()
        for (key, value) in self {
            writer.key(key)
            try value.wireEncode(to: &writer)
        }
        writer.end(container, count: count)
    }
}

extension Dictionary: WireDecodable where Key == String, Value: WireDecodable {
    public init(wireReader reader: inout WireReader) throws {
        let container = try reader.beginMap()
        var result: [String: Value] = [:]
        result.reserveCapacity(container.count)
        for _ in 0..<container.count {
            let key = reader.keyString(try reader.readKey())
            result[key] = try Value(wireReader: &reader)
        }
        try reader.end(container)
        self = result
    }
}

// MARK: - Codec entry points

extension BinaryPayloadCodec {
    /// The generated path of `encode(_:)`.
    static func wireEncode(_ value: some WireEncodable) throws -> [UInt8] {
        var writer = WireWriter()
        writer.bytes.append(marker)
        try value.wireEncode(to: &writer)
        return writer.bytes
    }

    /// The generated path of `decode(_:from:)`: the payload is one value, and nothing after it.
    static func wireDecode<T: WireDecodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        var reader = WireReader(bytes, offset: 1)
        let end = try reader.valueEnd(at: 1)
        guard end == bytes.count else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(bytes.count - end) trailing bytes"))
        }
        let value = try T(wireReader: &reader)
        // A container that holds more than its entries (which the Codable path ignores too) ends where its length says.
        guard reader.offset == end else { throw reader.corrupted("value does not end where its length says") }
        return value
    }
}

/// A type's binary decoder, chosen once: its generated conformance (`@WireCodable`) when it has one,
/// else `Codable`. ``BinaryPayloadCodec/decode(_:from:)`` asks the runtime which on every call (two
/// dynamic casts and, for a large value, a box); an app keeps one of these for its actions, which
/// its dispatcher decodes to admit them and its stores to apply them.
///
/// Sendable: its closure captures nothing but the type itself, and keeps no state.
struct TypedWireDecoder<T: Decodable>: @unchecked Sendable {
    /// The generated decoder of a binary payload, if `T` has one.
    let generated: (([UInt8]) throws -> T)?

    init() {
        generated = (T.self as? any WireDecodable.Type).map { Self.decoder(for: $0) }
    }

    /// The generated decoder of `W`, which is `T` (it was found as `T`'s conformance).
    private static func decoder<W: WireDecodable>(for _: W.Type) -> ([UInt8]) throws -> T {
        { bytes in
            let value = try BinaryPayloadCodec.wireDecode(W.self, from: bytes)
            return unsafeBitCast(value, to: T.self)
        }
    }

    /// `bytes` in either codec, as ``WireCodec/decode(_:from:)`` reads them.
    func decode(_ bytes: [UInt8], codec: WireCodec) throws -> T {
        if let generated, codec.generated, WireCodec.isBinary(bytes) { return try generated(bytes) }
        return try codec.decode(T.self, from: bytes)
    }
}
