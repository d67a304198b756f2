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
        // swift-format-ignore: NeverForceUnwrap
        // (each case's cast is to the type its `case is` just matched T against)
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
