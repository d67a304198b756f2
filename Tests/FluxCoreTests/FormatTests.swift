import Testing

@testable import FluxCore
@testable import FluxFormat

@Suite("Journal records and snapshot files")
struct FormatTests {
    let action = Message(
        topic: Array("todo".utf8), header: Header(kind: .action, seq: 3, actionType: "addTodo"),
        payload: Array(#"{"addTodo":{"title":"x"}}"#.utf8))

    @Test("records round-trip; a cut or flipped byte is named, never read as an action")
    func journalRecord() throws {
        var bytes: [UInt8] = []
        JournalRecord.append(action, to: &bytes)
        JournalRecord.append(action, to: &bytes)
        guard case .success(let first) = JournalRecord.read(bytes, at: 0) else { Issue.record("not read"); return }
        #expect(first.message == action && first.size * 2 == bytes.count)
        guard case .success = JournalRecord.read(bytes, at: first.size) else { Issue.record("second not read"); return }
        for cut in 0..<first.size {
            guard case .failure(let error) = JournalRecord.read(Array(bytes.prefix(cut)), at: 0) else { Issue.record("cut \(cut) read"); continue }
            #expect(error.message.contains("cut short"))
        }
        var flipped = bytes
        flipped[20] ^= 1
        guard case .failure(let error) = JournalRecord.read(flipped, at: 0) else { Issue.record("flipped byte read"); return }
        #expect(error.message == "record checksum mismatch")
        guard case .failure = JournalRecord.read(bytes, at: -1) else { Issue.record("negative offset read"); return }
    }

    @Test("checking a record without decoding it finds what decoding finds")
    func journalRecordCheck() throws {
        var bytes: [UInt8] = []
        JournalRecord.append(action, to: &bytes)
        let size = bytes.count
        bytes.withUnsafeBytes { raw in
            guard case .success(let checked) = JournalRecord.check(raw, at: 0) else { Issue.record("not checked"); return }
            #expect(checked.seq == 3 && checked.size == size)
        }
        for cut in 0..<size {
            Array(bytes.prefix(cut)).withUnsafeBytes { raw in
                guard case .failure(let error) = JournalRecord.check(raw, at: 0) else { Issue.record("cut \(cut) passed"); return }
                #expect(error.message.contains("cut short"))
            }
        }
        for flip in 8..<size {
            var flipped = bytes
            flipped[flip] ^= 0x10
            flipped.withUnsafeBytes { raw in
                guard case .failure(let error) = JournalRecord.check(raw, at: 0) else { Issue.record("flip at \(flip) passed"); return }
                #expect(error.message == "record checksum mismatch")
            }
        }
        var heartbeat: [UInt8] = []
        JournalRecord.append(Message(header: Header(kind: .heartbeat, seq: 9)), to: &heartbeat)
        heartbeat.withUnsafeBytes { raw in
            guard case .failure(let error) = JournalRecord.check(raw, at: 0) else { Issue.record("a heartbeat passed"); return }
            #expect(error.message == "record does not hold an action")
        }
    }

    @Test("CRC-32 eight bytes at a time equals the bytewise definition, at every length and alignment")
    func crc32() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        func bytewise(_ bytes: ArraySlice<UInt8>) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = (crc & 1) != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            }
            return crc ^ 0xFFFF_FFFF
        }
        var random = SplitMix(seed: 7)
        let bytes = (0..<300).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        for start in 0..<9 {
            for end in start...bytes.count where (end - start) % 7 == 0 || end - start < 20 {
                #expect(CRC32.checksum(bytes[start..<end]) == bytewise(bytes[start..<end]), "bytes \(start)..<\(end)")
            }
        }
    }

    @Test("snapshots round-trip; wrong magic, cut bytes and a bad checksum are refused")
    func snapshot() throws {
        let bytes = try SnapshotFormat.encode(version: 42, history: 0xABCD_0001, app: "todo", state: Array("{}".utf8))
        let decoded = try SnapshotFormat.decode(bytes)
        #expect(decoded.version == 42 && decoded.history == 0xABCD_0001 && decoded.app == "todo" && decoded.state == Array("{}".utf8))
        for cut in 0..<bytes.count { #expect(throws: ProtocolError.self) { try SnapshotFormat.decode(Array(bytes.prefix(cut))) } }
        var flipped = bytes
        flipped[bytes.count - 1] ^= 1
        let error = #expect(throws: ProtocolError.self) { try SnapshotFormat.decode(flipped) }
        #expect(error?.message == "snapshot fails its checksum")
        #expect((#expect(throws: ProtocolError.self) { try SnapshotFormat.decode(Array("NOTASNAP".utf8)) })?.code == .badMagic)
        var hugeName = bytes
        hugeName[24] = 0xFF; hugeName[25] = 0xFF; hugeName[26] = 0xFF; hugeName[27] = 0x7F
        #expect(throws: ProtocolError.self) { try SnapshotFormat.decode(hugeName) }
    }

    @Test("a version-1 snapshot (no history) still reads, with history 0")
    func snapshotVersion1() throws {
        var bytes = Array("ZFSNAP01".utf8)
        bytes.appendLittleEndian(UInt64(7))
        bytes.appendLittleEndian(UInt32(4))
        bytes += Array("todo".utf8)
        let state = Array("{}".utf8)
        bytes.appendLittleEndian(CRC32.checksum(state))
        bytes.appendLittleEndian(UInt32(state.count))
        bytes += state
        let decoded = try SnapshotFormat.decode(bytes)
        #expect(decoded.version == 7 && decoded.history == 0 && decoded.app == "todo" && decoded.state == state)
    }
}

@Suite("Snapshot format limits")
struct SnapshotLimitTests {
    @Test("a state too long for the snapshot's u32 length field is an error, not a trap")
    func stateOverFourGiB() {
        // Allocated, never touched: the pages are not backed until written, so this costs no memory.
        let huge = [UInt8](unsafeUninitializedCapacity: Int(UInt32.max) + 1) { _, count in count = Int(UInt32.max) + 1 }
        #expect(throws: ProtocolError.self) { try SnapshotFormat.encode(version: 1, app: "todo", state: huge) }
        #expect(throws: Never.self) { try SnapshotFormat.encode(version: 1, app: "todo", state: [1, 2, 3]) }
    }
}

@Suite("Messages in parts")
struct MessagePartsTests {
    let whole = Message(
        topic: "ledger", header: Header(kind: .snapshot, flags: .fullState, seq: 9, ref: 12),
        payload: (0..<10_000).map { UInt8(truncatingIfNeeded: $0) })

    @Test("a large payload is split into parts that reassemble to the same message; a small one is sent as it is")
    func roundTrip() {
        let parts = MessageParts.split(whole, partBytes: 3_000)
        #expect(parts.count == 4 && parts.allSatisfy { $0.header.flags.contains(.part) && $0.payload.count <= 3_008 })
        var assembler = MessageAssembler()
        let results = parts.map { assembler.accept($0) }
        #expect(results.dropLast().allSatisfy { $0 == nil })
        #expect(results.last == whole)
        let small = Message(topic: "ledger", header: Header(kind: .state, seq: 1), payload: [1, 2])
        #expect(MessageParts.split(small, partBytes: 3_000) == [small])
        #expect(assembler.accept(small) == small)
    }

    @Test("a lost, repeated or foreign part drops the message; the next whole one still assembles")
    func lossDropsTheMessage() {
        let parts = MessageParts.split(whole, partBytes: 3_000)
        var assembler = MessageAssembler()
        for part in [parts[0], parts[2], parts[3]] { #expect(assembler.accept(part) == nil) }
        #expect(assembler.dropped >= 1)
        var other = parts[1]
        other.header.seq = 10
        for part in [parts[0], other, parts[2], parts[3]] { #expect(assembler.accept(part) == nil) }
        let truncated = Message(topic: "ledger", header: parts[0].header, payload: [1, 2, 3])
        #expect(assembler.accept(truncated) == nil)
        #expect(parts.map { assembler.accept($0) }.last == whole)
    }
}

/// A small deterministic generator for test bytes.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
