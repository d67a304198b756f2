import FluxCore
import Foundation
import Testing

@testable import Journaling

/// Index files are trusted no further than their records (hardening round 3): each case below has a
/// valid CRC, as a file written by someone who knows the format would.
@Suite("Segment index files")
struct SegmentIndexTests {
    /// A journal of 1,500 actions in segments of ~64 KiB (several 256-record index entries each).
    func journal() throws -> (dir: String, segments: [String]) {
        let dir = try temporaryDirectory()
        let journal = try Journal(directory: dir, segmentBytes: 64 * 1024)
        try journal.append((1...1500).map { action($0) })
        try journal.commit()
        let segments = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".journal") }.sorted()
        return (dir, segments.map { dir + "/" + $0 })
    }

    /// Rewrites `segment`'s index file as `change` makes it, with a correct CRC.
    func tamper(_ segment: String, _ change: (inout [UInt8]) -> Void) throws {
        let path = SegmentIndex.path(segment: segment)
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        bytes.removeLast(4)
        change(&bytes)
        bytes.appendLittleEndian(CRC32.checksum(bytes))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func write(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
        for i in 0..<8 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
    }

    @Test("an entry offset of 2^63 or more is refused, not converted: the segment is scanned")
    func hugeOffset() throws {
        let (dir, segments) = try journal()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #require(segments.count >= 3)
        let index = try #require(SegmentIndex.load(segment: segments[0], firstSeq: 1))
        try #require(index.entries.count >= 2, "an entry beyond the first")
        try tamper(segments[0]) { write(1 << 63, at: 44 + 16, in: &$0) }
        let reopened = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(reopened.recovery.indexedSegments == segments.count - 2, "the first segment is scanned")
        #expect(try reopened.read(from: 1, limit: 2000) == (1...1500).map { action($0) })
    }

    @Test("an entry moved to the next record is found out on the first read, which serves the right records")
    func movedOffset() throws {
        let (dir, segments) = try journal()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let index = try #require(SegmentIndex.load(segment: segments[0], firstSeq: 1))
        let entry = try #require(index.entries.dropFirst().first)
        // Point the entry at the record after its own.
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: segments[0])))
        let next = entry.offset + JournalRecord.headerSize + Int(bytes.readLittleEndian(UInt32.self, at: entry.offset))
        try tamper(segments[0]) { write(UInt64(next), at: 44 + 16, in: &$0) }
        #expect(try Journal(directory: dir, repair: false).recovery.badIndexFiles == [SegmentIndex.path(segment: segments[0])], "verify reports it")
        let reopened = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(reopened.recovery.indexedSegments == segments.count - 1, "the open trusted it")
        #expect(try reopened.read(from: entry.seq, limit: 3) == (entry.seq..<entry.seq + 3).map { action($0) })
        #expect(SegmentIndex.load(segment: segments[0], firstSeq: 1) == index, "and the file is written again, right")
        #expect(try Journal(directory: dir, repair: false).recovery.badIndexFiles.isEmpty)
    }

    @Test("a read that walks a segment from its start checks each record once and corrects a false entry it never used")
    func falseEntryFoundByWalking() throws {
        let (dir, segments) = try journal()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let index = try #require(SegmentIndex.load(segment: segments[0], firstSeq: 1))
        let entry = try #require(index.entries.dropFirst().first)
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: segments[0])))
        let next = entry.offset + JournalRecord.headerSize + Int(bytes.readLittleEndian(UInt32.self, at: entry.offset))
        try tamper(segments[0]) { write(UInt64(next), at: 44 + 16, in: &$0) }
        let reopened = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(reopened.recovery.indexedSegments == segments.count - 1, "the open trusted it")
        #expect(try reopened.read(from: 1, limit: 2) == [action(1), action(2)], "a read from the start uses no entry past the first")
        #expect(SegmentIndex.load(segment: segments[0], firstSeq: 1) != index, "nor has it reached the end yet")
        #expect(try reopened.read(from: 1, limit: 2000) == (1...1500).map { action($0) }, "the whole journal, every record checked")
        #expect(SegmentIndex.load(segment: segments[0], firstSeq: 1) == index, "and the walk through the segment wrote its index again, right")
        #expect(try reopened.read(from: entry.seq, limit: 3) == (entry.seq..<entry.seq + 3).map { action($0) }, "which reads use from then on")
    }

    @Test(
        "bytes after a sealed segment's last record stop a read from its middle that reaches them, as one from its start: a copy of the next segment's first record is never served twice",
        arguments: ["a copy of the next record", "garbage"], [false, true])
    func trailingBytes(extra: String, nextIsNewest: Bool) throws {
        let (dir, segments) = try journal()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #require(segments.count >= 3)
        let number = nextIsNewest ? segments.count - 2 : 0
        let firstSeq = try #require(UInt64(URL(fileURLWithPath: segments[number]).lastPathComponent.dropLast(".journal".count)))
        let index = try #require(SegmentIndex.load(segment: segments[number], firstSeq: firstSeq))
        let entry = try #require(index.entries.last)
        try #require(entry.seq > firstSeq, "an entry in the segment's middle")
        let next = [UInt8](try #require(FileManager.default.contents(atPath: segments[number + 1])))
        let trailing =
            extra == "garbage"
            ? [0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3, 4, 5] : Array(next[..<(JournalRecord.headerSize + Int(next.readLittleEndian(UInt32.self, at: 0)))])
        let handle = try #require(FileHandle(forWritingAtPath: segments[number]))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(trailing))
        try handle.close()
        // The index file says the segment is that long: the open trusts it.
        try tamper(segments[number]) { write(UInt64(index.length + trailing.count), at: 24, in: &$0) }
        let reopened = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(reopened.recovery.indexedSegments == segments.count - 1, "the open trusted it")
        #expect(try reopened.read(from: entry.seq, limit: 1) == [action(entry.seq)], "a read that stops before the end is served")
        let error = #expect(throws: JournalError.self) { try reopened.read(from: entry.seq, limit: 2000) }
        #expect(error?.description.contains("is damaged") == true, "\(error.map { "\($0)" } ?? "served")")
        let again = #expect(throws: JournalError.self) { try reopened.read(from: firstSeq, limit: 2000) }
        #expect(again?.description.contains("is damaged") == true, "\(again.map { "\($0)" } ?? "served")")
    }

    @Test(
        "an entry that points into the middle of a record, or so near the segment's end that no record fits, is found out by the read that starts there",
        arguments: ["middle", "end"])
    func entryOffRecords(place: String) throws {
        let (dir, segments) = try journal()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let index = try #require(SegmentIndex.load(segment: segments[0], firstSeq: 1))
        let entry = try #require(index.entries.last)
        try #require(index.entries.count >= 2)
        let offset = place == "middle" ? entry.offset + 3 : index.length - 4
        try tamper(segments[0]) { write(UInt64(offset), at: 44 + 16 * (index.entries.count - 1), in: &$0) }
        try #require(SegmentIndex.load(segment: segments[0], firstSeq: 1)?.entries.last?.offset == offset)
        let reopened = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(reopened.recovery.indexedSegments == segments.count - 1, "the open trusted it")
        #expect(try reopened.read(from: entry.seq + 1, limit: 3) == (entry.seq + 1...entry.seq + 3).map { action($0) })
        #expect(SegmentIndex.load(segment: segments[0], firstSeq: 1) == index, "and the file is written again, right")
    }

    @Test("retention while a read has checked part of a segment from its start: the segments renumbered, a later walk still settles each one")
    func retentionDuringCheck() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, segmentBytes: 64 * 1024)
            try journal.append((1...3000).map { action($0) })
        }
        let segments = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".journal") }.sorted().map { dir + "/" + $0 }
        try #require(segments.count >= 4)
        let firstSeqs = try segments.map { try #require(UInt64(URL(fileURLWithPath: $0).lastPathComponent.dropLast(".journal".count))) }
        // The third segment's index file has a false entry, which only a walk through it from its start corrects.
        let index = try #require(SegmentIndex.load(segment: segments[2], firstSeq: firstSeqs[2]))
        try #require(index.entries.count >= 2)
        try tamper(segments[2]) { write(UInt64(index.entries[1].offset + 1), at: 44 + 16, in: &$0) }
        let journal = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(journal.recovery.indexedSegments == segments.count - 1)
        // Checked from its start, part way: the second segment.
        #expect(try journal.read(from: firstSeqs[1], limit: 10) == (firstSeqs[1]..<firstSeqs[1] + 10).map { action($0) })
        try journal.removeOldestSegments(1)
        // The third segment is the second now: a walk from its start checks it from there, whatever was checked of the one before.
        #expect(try journal.read(from: firstSeqs[2], limit: 5000) == (firstSeqs[2]...3000).map { action($0) })
        #expect(SegmentIndex.load(segment: segments[2], firstSeq: firstSeqs[2]) == index, "the walk through the third segment corrected its index")
    }

    @Test("an index without entries is refused: it would hide its segment from every read")
    func noEntries() throws {
        let (dir, segments) = try journal()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let index = try #require(SegmentIndex.load(segment: segments[0], firstSeq: 1))
        try tamper(segments[0]) { bytes in
            bytes.removeSubrange(36..<(36 + 16 * index.entries.count))
            for i in 0..<4 { bytes[32 + i] = 0 }
        }
        #expect(SegmentIndex.load(segment: segments[0], firstSeq: 1) == nil)
        let reopened = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(try reopened.read(from: 1, limit: 2000) == (1...1500).map { action($0) })
    }

    @Test("an index whose last seq disagrees with the next segment is ignored, not a reason to refuse to start")
    func shortLastSeq() throws {
        let (dir, segments) = try journal()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let index = try #require(SegmentIndex.load(segment: segments[0], firstSeq: 1))
        try tamper(segments[0]) { write(index.lastSeq - 1, at: 16, in: &$0) }
        let reopened = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(reopened.lastSeq == 1500 && reopened.recovery.indexedSegments == segments.count - 2)
        #expect(try reopened.read(from: 1, limit: 2000) == (1...1500).map { action($0) })
        #expect(try Journal(directory: dir, repair: false).recovery.badIndexFiles.isEmpty, "the scan wrote it again")
    }
}
