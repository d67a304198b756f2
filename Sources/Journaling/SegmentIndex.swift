import FluxCore
import Foundation

/// The index of a sealed journal segment, kept beside it as `<segment>.index`: written when the journal
/// rolls past the segment (after syncing it), so that opening the journal takes the segment's place
/// from here instead of reading and checking all of it again. Opening a journal of a million actions
/// then reads only its newest segment.
///
/// The file: `"ZFJX"`, u32 version 1, u64 first seq, u64 last seq, u64 segment length, u32 entry
/// count, entries of (u64 seq, u64 offset) for every 256th record, u32 CRC-32 of everything before it;
/// all little-endian. A file that is cut, fails its checksum, holds an entry outside the segment or out of
/// order, or disagrees with the segment's first seq, its length on disk or the next segment's first seq
/// is ignored (the segment is scanned instead), so it can never hide damage that changed a segment's
/// size. Entries that pass are still compared with the records the first time the segment is read, and
/// a disagreeing index is dropped then; `zflux journal verify` checks every record and every index file.
struct SegmentIndex: Equatable {
    struct Entry: Equatable {
        var seq: UInt64
        var offset: Int
    }

    var firstSeq: UInt64
    var lastSeq: UInt64
    var length: Int
    var entries: [Entry]

    static let magic: [UInt8] = Array("ZFJX".utf8)

    static func path(segment: String) -> String { segment + ".index" }

    func encoded() -> [UInt8] {
        var bytes = SegmentIndex.magic
        bytes.reserveCapacity(40 + entries.count * 16)
        bytes.appendLittleEndian(UInt32(1))
        bytes.appendLittleEndian(firstSeq)
        bytes.appendLittleEndian(lastSeq)
        bytes.appendLittleEndian(UInt64(length))
        bytes.appendLittleEndian(UInt32(entries.count))
        for entry in entries {
            bytes.appendLittleEndian(entry.seq)
            bytes.appendLittleEndian(UInt64(entry.offset))
        }
        bytes.appendLittleEndian(CRC32.checksum(bytes))
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> SegmentIndex? {
        guard bytes.count >= 40, Array(bytes[0..<4]) == magic, bytes.readLittleEndian(UInt32.self, at: 4) == 1 else { return nil }
        let count = Int(bytes.readLittleEndian(UInt32.self, at: 32))
        guard bytes.count == 36 + count * 16 + 4,
            CRC32.checksum(bytes[..<(bytes.count - 4)]) == bytes.readLittleEndian(UInt32.self, at: bytes.count - 4)
        else { return nil }
        // Numbers are checked before they become Ints: a file with a valid CRC is still only a claim.
        let firstSeq = bytes.readLittleEndian(UInt64.self, at: 8), lastSeq = bytes.readLittleEndian(UInt64.self, at: 16)
        let length = bytes.readLittleEndian(UInt64.self, at: 24)
        // A segment always has its first record indexed: an index without entries would hide it.
        guard count >= 1, firstSeq >= 1, lastSeq >= firstSeq, length <= UInt64(Int.max) else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for i in 0..<count {
            let seq = bytes.readLittleEndian(UInt64.self, at: 36 + i * 16), offset = bytes.readLittleEndian(UInt64.self, at: 44 + i * 16)
            // Within the segment, in order, the first at its start.
            guard seq >= firstSeq, seq <= lastSeq, offset < length,
                entries.last.map({ seq > $0.seq && Int(offset) > $0.offset }) ?? (seq == firstSeq && offset == 0)
            else { return nil }
            entries.append(Entry(seq: seq, offset: Int(offset)))
        }
        return SegmentIndex(firstSeq: firstSeq, lastSeq: lastSeq, length: Int(length), entries: entries)
    }
}
