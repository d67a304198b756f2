import FluxCore
import Foundation

extension Journal {
    /// What opening the journal found.
    public struct Recovery: Sendable, CustomStringConvertible {
        public var segments = 0
        public var records: UInt64 = 0
        public var lastSeq: UInt64 = 0
        /// Sealed segments taken from their index files, not read (their records are checked when read).
        public var indexedSegments = 0
        /// Bytes cut from the end of the newest segment (a torn or corrupt tail).
        public var trimmedBytes = 0
        public var trimmedReason: String? = nil
        /// Index files of sealed segments that disagree with their records (ignored; a repairing open
        /// writes them again when it reads the segment).
        public var badIndexFiles: [String] = []
        /// Checkpoints a repairing open removed because they cover seqs past the newest record (a tail
        /// lost or truncated since): those seqs will be given to other actions.
        public var removedCheckpoints: [String] = []
        public var description: String {
            "\(records) records in \(segments) segments, last seq \(lastSeq)"
                + (trimmedBytes > 0 ? "; trimmed a torn tail of \(trimmedBytes) bytes (\(trimmedReason ?? ""))" : "")
        }
    }

    /// Takes the journal's writer lock, or explains who holds it. Two dispatchers appending to one
    /// journal would give the same seq to different actions.
    func lock() throws {
        let path = directory + "/LOCK"
        guard let held = try storage.lock(path, waiting: true) else {
            let holder =
                storage.contentsIfAny(path).flatMap { String(validating: $0, as: UTF8.self) }?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            throw JournalError("the journal in \(directory) is in use by another dispatcher (pid \(holder))")
        }
        lockFile = held
    }

    /// Rebuilds the index and `lastSeq`. A sealed segment (every one but the newest) whose index file
    /// matches it is taken from that file without reading it; any other segment is read and every record
    /// checked (``JournalRecord/check(_:at:)``), and in `repair` mode a sealed one gets its index file
    /// then. `zflux journal verify` (`repair: false`) checks every record of every segment.
    func scan(repair: Bool) throws {
        recovery.segments = segments.count
        for (number, segment) in segments.enumerated() {
            let isLast = number == segments.count - 1
            if number > 0 && segment.firstSeq != lastSeq + 1 {
                throw JournalError("segment \(segment.path) starts at seq \(segment.firstSeq), but the one before ends at \(lastSeq)")
            }
            let nextFirst = isLast ? nil : segments[number + 1].firstSeq
            if !isLast, repair, let sealed = SegmentIndex.load(segment: segment.path, firstSeq: segment.firstSeq, on: storage),
                sealed.lastSeq + 1 == nextFirst
            {
                for entry in sealed.entries { index.append(IndexEntry(seq: entry.seq, segment: number, offset: entry.offset)) }
                recovery.records += sealed.lastSeq - segment.firstSeq + 1
                recovery.indexedSegments += 1
                lastSeq = sealed.lastSeq
                // Its records are checked as reads reach them (``walk(from:onDisk:_:)``).
                unchecked.insert(number)
                continue
            }
            let bytes = try readFile(segment.path)
            var entries: [SegmentIndex.Entry] = []
            let (offset, expected, problem) = JournalRecord.checkRecords(bytes, firstSeq: segment.firstSeq) { seq, offset in
                if (seq - 1) % indexStride == 0 || offset == 0 { entries.append(.init(seq: seq, offset: offset)) }
            }
            for entry in entries { index.append(IndexEntry(seq: entry.seq, segment: number, offset: entry.offset)) }
            recovery.records += expected - segment.firstSeq
            lastSeq = expected - 1
            // A sealed segment's index file must say what its records say (what `journal verify` reports).
            if !isLast, problem == nil, storage.size(SegmentIndex.path(segment: segment.path)) != nil {
                let expectedIndex = SegmentIndex(firstSeq: segment.firstSeq, lastSeq: lastSeq, length: bytes.count, entries: entries)
                if SegmentIndex.load(segment: segment.path, firstSeq: segment.firstSeq, on: storage) != expectedIndex {
                    recovery.badIndexFiles.append(SegmentIndex.path(segment: segment.path))
                }
            }
            if let problem {
                guard isLast else {
                    throw JournalError(
                        "\(segment.path) is damaged at byte \(offset) (\(problem)), where seq \(expected) is due; it is not the newest segment, so acknowledged actions would be lost: restore it from a backup (in a pair, from the other member's journal); or, to give them up, `zflux journal truncate --journal \(directory) --from-seq \(expected)` keeps what precedes seq \(expected) and sets the rest aside",
                        corruptFromSeq: expected)
                }
                // Only a torn tail is trimmed: damage with intact records after it is corruption, and
                // trimming it would drop what may have been acknowledged.
                if !environment.brokenRules.contains(.skipsCorruptRecord),
                    let intact = JournalRecord.nextIntact(bytes, after: offset, seqAbove: expected - 1)
                {
                    throw JournalError(
                        "\(segment.path) is corrupt at byte \(offset), where seq \(expected) is due (\(problem)), and an intact record (seq \(intact.seq)) follows at byte \(intact.offset): this is not a torn tail, so nothing was trimmed and nothing is served. Acknowledged actions may be in and after the damaged record. Restore the segment from a backup (in a pair, from the other member's journal); or, to give them up, `zflux journal truncate --journal \(directory) --from-seq \(expected)` keeps what precedes seq \(expected) and sets the rest aside",
                        corruptFromSeq: expected)
                }
                recovery.trimmedBytes = bytes.count - offset
                recovery.trimmedReason = "\(problem) at byte \(offset) of \(segment.path)"
                if repair { try truncate(segment.path, to: offset) }
            }
            if isLast {
                segmentSize = offset
                // Reads of what the journal held before this opening start from these bytes.
                readCache = (number, offset == bytes.count ? bytes : Array(bytes.prefix(offset)))
            } else if repair {
                // A shortcut for the next opening; without it, that one scans this segment again.
                try? SegmentIndex(firstSeq: segment.firstSeq, lastSeq: lastSeq, length: offset, entries: entries).write(
                    segment: segment.path, on: storage)
            }
        }
        recovery.lastSeq = lastSeq
    }

    func openForAppend() throws {
        if segments.isEmpty { segments.append(Segment(firstSeq: 1, path: segmentPath(firstSeq: 1))); segmentSize = 0 }
        // What the scan found may be only in the page cache: a dispatcher that crashed after writing and
        // before syncing leaves it there. It is forced to disk now, before anything recovered is acknowledged
        // to a retrying client or replayed to a store (the simulator found the power cut that lost it).
        if !environment.brokenRules.contains(.syncJournalOnOpen) {
            for segment in segments where storage.size(segment.path) != nil { try storage.syncFile(segment.path) }
        }
        syncedSize = segmentSize
        file = try storage.open(segments[segments.count - 1].path, create: true, truncate: false)
        try syncDirectory()
    }

    private func truncate(_ path: String, to length: Int) throws { try storage.truncate(path, to: length) }
}
