/// CRC-32 (IEEE 802.3, the zlib/PNG polynomial), for journal records and snapshot files.
///
/// Slicing-by-8 (eight bytes per step through eight tables, Intel's method as described in Kounavis and
/// Berry, "A Systematic Approach to Building High Performance Software-based CRC Generators", 2005):
/// opening a journal checks every record of its newest segment, so the checksum is on that path.
public enum CRC32 {
    /// `tables[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
    static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var c = UInt32(index)
            for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            tables[index] = c
        }
        for k in 1..<8 {
            for index in 0..<256 {
                let previous = tables[(k - 1) * 256 + index]
                tables[k * 256 + index] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return tables
    }()

    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        if let result = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) { return result }
        return Array(bytes).withUnsafeBytes { checksum($0) }
    }

    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        tables.withUnsafeBufferPointer { t in
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let low = crc ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian
                let high = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
                crc =
                    t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = t[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
