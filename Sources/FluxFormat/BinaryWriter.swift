/// The binary format's one writer (BinaryCodec.swift documents the format): it appends values to
/// `bytes`. Generated code (`@WireCodable`) writes a map as `beginMap`, then `key` and one value per
/// entry, then `end(_:count:)`; the `Codable` encoder (BinaryEncoder.swift) writes through it too, setting
/// a container's count as each entry comes and its length once it knows nothing more goes in.
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

    /// Writes a container's tag and room for its length and count.
    mutating func begin(_ tag: BinaryTag) -> Container {
        bytes.append(tag.rawValue)
        let lengthAt = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])
        return Container(lengthAt: lengthAt)
    }

    /// Closes a container holding `count` entries (a map's entry is a key and its value).
    public mutating func end(_ container: Container, count: Int) {
        setLength(of: container)
        setCount(count, of: container)
    }

    /// Sets a container's length to what was written since its header.
    mutating func setLength(of container: Container) {
        bytes.writeLittleEndian(UInt32(truncatingIfNeeded: bytes.count - container.lengthAt - 8), at: container.lengthAt)
    }

    mutating func setCount(_ count: Int, of container: Container) {
        bytes.writeLittleEndian(UInt32(truncatingIfNeeded: count), at: container.lengthAt + 4)
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
        bytes.appendLittleEndian(value.bitPattern)
    }

    public mutating func write(_ value: Float) {
        bytes.append(BinaryTag.float.rawValue)
        bytes.appendLittleEndian(value.bitPattern)
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
        let encoding = BinaryEncoding()
        swap(&encoding.writer, &self)
        defer { swap(&encoding.writer, &self) }
        try encoding.encodeValue(value, depth: 0, codingPath: [])
        encoding.closeContainers(deeperThan: -1)
    }
}
