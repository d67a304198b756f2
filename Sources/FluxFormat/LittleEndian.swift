/// Fixed-width integers as little-endian bytes: the one toolkit for every fixed layout in zflux (the
/// binary format's container headers and floating-point bits, the message header, batches, journal
/// records, the segment index, snapshots, the client-scope secret). Reads and writes at an offset
/// check their bounds with a `precondition`: the caller has checked the length of what it reads, so an
/// offset past the end is a bug of ours, not bad input.
extension Array where Element == UInt8 {
    @inlinable
    public mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        var v = value.littleEndian
        Swift.withUnsafeBytes(of: &v) { append(contentsOf: $0) }
    }

    /// Reads a little-endian integer; the caller has checked the bounds.
    @inlinable
    public func readLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        withUnsafeBytes { $0.readLittleEndian(T.self, at: offset) }
    }

    /// Overwrites the bytes at `offset` with `value` (a length or checksum filled in once known); the
    /// caller has reserved them.
    @inlinable
    package mutating func writeLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeMutableBytes { $0.writeLittleEndian(value, at: offset) }
    }
}

extension UnsafeRawBufferPointer {
    /// Reads a little-endian integer; the caller has checked the bounds.
    @inlinable
    package func readLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count, "read past the end")
        return T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeMutableRawBufferPointer {
    /// Writes a little-endian integer; the caller has checked the bounds.
    @inlinable
    package func writeLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count, "write past the end")
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
