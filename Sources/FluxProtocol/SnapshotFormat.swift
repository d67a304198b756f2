/// A store snapshot's bytes: `ZFSNAP02`, u64 version, u64 history (``HistoryID``), u32 app-name
/// length, app name, u32 CRC-32 of the state, u32 state length, state (little-endian). `ZFSNAP01`
/// snapshots (no history) are still read, with history 0.
public enum SnapshotFormat {
    static let magic = Array("ZFSNAP02".utf8)
    static let magicVersion1 = Array("ZFSNAP01".utf8)

    /// The version a snapshot's first 16 bytes say, without reading (or checking) the rest: what a
    /// dispatcher's retention reads of its stores' snapshots. Nil for bytes that are not a snapshot's.
    package static func version(ofHeader bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= magic.count + 8, bytes.starts(with: magic) || bytes.starts(with: magicVersion1) else { return nil }
        return bytes.readLittleEndian(UInt64.self, at: magic.count)
    }

    /// Fails when the app name or the state is longer than its u32 length field can say (4 GiB).
    public static func encode(version: UInt64, history: UInt64 = 0, app: String, state: [UInt8]) throws(ProtocolError) -> [UInt8] {
        guard let stateLength = UInt32(exactly: state.count), UInt32(exactly: app.utf8.count) != nil else {
            throw ProtocolError(.tooLarge, "a state of \(state.count) bytes does not fit a snapshot (at most \(UInt32.max) bytes)")
        }
        var bytes = magic
        bytes.appendLittleEndian(version)
        bytes.appendLittleEndian(history)
        let name = Array(app.utf8)
        bytes.appendLittleEndian(UInt32(name.count))
        bytes += name
        bytes.appendLittleEndian(CRC32.checksum(state))
        bytes.appendLittleEndian(stateLength)
        bytes += state
        return bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(ProtocolError) -> (version: UInt64, history: UInt64, app: String, state: [UInt8]) {
        let current = bytes.starts(with: magic)
        guard bytes.count >= magic.count, current || bytes.starts(with: magicVersion1) else {
            throw ProtocolError(.badMagic, "not a zflux snapshot")
        }
        var offset = magic.count
        func need(_ n: Int) throws(ProtocolError) {
            guard n >= 0, bytes.count - offset >= n else { throw ProtocolError(.truncated, "snapshot is cut short") }
        }
        try need(current ? 20 : 12)
        let version = bytes.readLittleEndian(UInt64.self, at: offset)
        offset += 8
        var history: UInt64 = 0
        if current {
            history = bytes.readLittleEndian(UInt64.self, at: offset)
            offset += 8
        }
        let nameLength = Int(bytes.readLittleEndian(UInt32.self, at: offset))
        offset += 4
        try need(nameLength)
        let app = String(decoding: bytes[offset..<offset + nameLength], as: UTF8.self)
        offset += nameLength
        try need(8)
        let crc = bytes.readLittleEndian(UInt32.self, at: offset)
        let stateLength = Int(bytes.readLittleEndian(UInt32.self, at: offset + 4))
        offset += 8
        guard bytes.count - offset == stateLength else {
            throw ProtocolError(.truncated, "snapshot state is \(bytes.count - offset) bytes, its header says \(stateLength)")
        }
        let state = Array(bytes[offset...])
        guard CRC32.checksum(state) == crc else { throw ProtocolError(.malformedPayload, "snapshot fails its checksum") }
        return (version, history, app, state)
    }
}
