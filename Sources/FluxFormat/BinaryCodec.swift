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

    /// Whether a type with a wire conformance (`@WireCodable`, WireCodable.swift) takes it; false: every
    /// value goes through `Codable` (for the tests and benches that compare the two; the bytes are the same).
    public var generated: Bool

    public init(generated: Bool = true) { self.generated = generated }
    public var name: String { "binary" }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        // A type with a generated conformance (`@WireCodable`) writes the same bytes without `Encodable`.
        if generated, let value = value as? any WireEncodable { return try Self.wireEncode(value) }
        let encoding = BinaryEncoding()
        encoding.writer.bytes.append(Self.marker)
        try encoding.encodeValue(value, depth: 0, codingPath: [])
        encoding.closeContainers(deeperThan: -1)
        return encoding.writer.bytes
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        guard bytes.first == Self.marker else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a binary payload"))
        }
        if generated, let wire = T.self as? any WireDecodable.Type {
            guard let value = try Self.wireDecode(wire, from: bytes) as? T else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a \(T.self)"))
            }
            return value
        }
        return try Self.decodeCodable(type, from: bytes)
    }

    /// The `Codable` path of ``decode(_:from:)``, without asking the runtime on each call whether `T` has
    /// a generated conformance: for a caller that asked once (``TypedWireDecoder``).
    package static func decodeCodable<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        guard bytes.first == marker else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a binary payload"))
        }
        let shared = SharedReader(bytes)
        let end = try shared.reader.valueEnd(at: 1, [])
        guard end == bytes.count else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(bytes.count - end) trailing bytes"))
        }
        return try shared.decodeValue(type, at: 1, codingPath: [])
    }

    /// True when `bytes` is a binary map of one entry whose key is `key` (an action's case name), read
    /// without decoding anything else. One entry only: a decoder skips keys it does not know, so in
    /// `{"X":{}, "clear":{}}` the first key does not say which case the payload holds.
    public static func firstKey(of bytes: [UInt8], is key: String) -> Bool { firstKey(of: bytes, in: 0..<bytes.count, is: key) }

    /// ``firstKey(of:is:)`` of the payload that fills `range` of `bytes` (a batch's entry, in place).
    package static func firstKey(of bytes: [UInt8], in range: Range<Int>, is key: String) -> Bool {
        // Byte by byte, allocating nothing: the intake asks this of every binary payload.
        let length = key.utf8.count, base = range.lowerBound
        guard length < 128, range.count >= 11 + length, bytes[base] == marker, bytes[base + 1] == BinaryTag.map.rawValue,
            bytes[base + 6] == 1, bytes[base + 7] == 0, bytes[base + 8] == 0, bytes[base + 9] == 0, bytes[base + 10] == UInt8(length)
        else { return false }
        var at = base + 11
        for byte in key.utf8 {
            guard bytes[at] == byte else { return false }
            at += 1
        }
        return true
    }
}

/// Reads either codec (by the first byte) and writes the one chosen for the cluster.
public struct WireCodec: PayloadCodec {
    public enum Format: String, Sendable, CaseIterable, Codable {
        case binary, json
    }

    public var format: Format
    /// False: binary values go through `Codable` even when their type has a wire conformance (same bytes;
    /// for `zflux bench codec`'s comparison).
    public var generated: Bool
    public init(_ format: Format = .binary) { self.init(format, generated: true) }
    public init(_ format: Format, generated: Bool) {
        self.format = format
        self.generated = generated
    }
    public var name: String { format == .binary && !generated ? "codable" : format.rawValue }

    public static func isBinary(_ bytes: [UInt8]) -> Bool { bytes.first == BinaryPayloadCodec.marker }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        switch format {
        case .binary: try BinaryPayloadCodec(generated: generated).encode(value)
        case .json: try JSONPayloadCodec.wire.encode(value)
        }
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if Self.isBinary(bytes) { return try BinaryPayloadCodec(generated: generated).decode(type, from: bytes) }
        return try JSONPayloadCodec.wire.decode(type, from: bytes)
    }
}

// MARK: - Tags

@usableFromInline
enum BinaryTag: UInt8 {
    case null = 0, `false`, `true`, int, uint, double, float, string, array, map
}
