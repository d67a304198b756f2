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

// The writer and the reader are in BinaryWriter.swift and BinaryReader.swift.

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
        let end = try reader.valueEnd(at: 1, [])
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
package struct TypedWireDecoder<T: Decodable>: @unchecked Sendable {
    /// The generated decoder of a binary payload, if `T` has one.
    package let generated: (([UInt8]) throws -> T)?

    package init() {
        generated = (T.self as? any WireDecodable.Type).map { Self.decoder(for: $0) }
    }

    /// The decoder of a binary payload: the generated one if `T` has one, else `Codable`'s, with nothing
    /// asked of the runtime per call (for a caller that keeps it: a store's runtime).
    package var binary: ([UInt8]) throws -> T {
        generated ?? { bytes in try BinaryPayloadCodec.decodeCodable(T.self, from: bytes) }
    }

    /// The generated decoder of `W`, which is `T` (it was found as `T`'s conformance).
    private static func decoder<W: WireDecodable>(for _: W.Type) -> ([UInt8]) throws -> T {
        { bytes in
            let value = try BinaryPayloadCodec.wireDecode(W.self, from: bytes)
            return unsafeBitCast(value, to: T.self)
        }
    }

    /// `bytes` in either codec, as ``WireCodec/decode(_:from:)`` reads them.
    package func decode(_ bytes: [UInt8], codec: WireCodec) throws -> T {
        guard WireCodec.isBinary(bytes) else { return try codec.decode(T.self, from: bytes) }
        if let generated, codec.generated { return try generated(bytes) }
        return try BinaryPayloadCodec.decodeCodable(T.self, from: bytes)
    }
}
