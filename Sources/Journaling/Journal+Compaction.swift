import Foundation

extension Journal {
    /// What ``compact(directory:keepFrom:dryRun:)`` removed (or would remove).
    public struct Compaction: Sendable, Equatable {
        /// Segments removed, oldest first, as (first seq, last seq, bytes).
        public var removed: [(first: UInt64, last: UInt64, bytes: Int)] = []
        /// The journal's first seq afterwards.
        public var firstSeq: UInt64 = 1

        public static func == (a: Compaction, b: Compaction) -> Bool {
            a.firstSeq == b.firstSeq && a.removed.map(\.first) == b.removed.map(\.first) && a.removed.map(\.last) == b.removed.map(\.last)
        }
    }

    /// Removes every whole segment that holds only seqs below `keepFrom`, never the newest segment,
    /// with the journal's writer lock held (so never under a running dispatcher). Records at or above
    /// `keepFrom` all stay; the journal then starts at the first kept segment's first seq.
    public static func compact(directory: String, keepFrom: UInt64, dryRun: Bool = false) throws -> Compaction {
        try compact(directory: directory, keepFrom: keepFrom, dryRun: dryRun, storage: FileStorage.shared)
    }

    /// The same, on `storage`.
    package static func compact(directory: String, keepFrom: UInt64, dryRun: Bool = false, storage: any JournalStorage) throws -> Compaction {
        try withWriterLock(directory: directory, doing: "compacting", storage: storage) {
            try compactLocked(directory: directory, keepFrom: keepFrom, dryRun: dryRun, storage: storage)
        }
    }

    private static func compactLocked(directory: String, keepFrom: UInt64, dryRun: Bool, storage: any JournalStorage) throws -> Compaction {
        let segments = try segmentFiles(in: directory, storage: storage)
        var result = Compaction(removed: [], firstSeq: segments.first?.first ?? 1)
        for (index, segment) in segments.enumerated().dropLast() {
            let first = segment.first, next = segments[index + 1].first
            guard next <= keepFrom else { break }
            let path = directory + "/" + segment.name
            let bytes = storage.size(path) ?? 0
            if !dryRun {
                guard try storage.remove(path) else { throw JournalError("unlink \(path) failed: it is gone") }
                _ = try? storage.remove(SegmentIndex.path(segment: path))
            }
            result.removed.append((first, next - 1, bytes))
            result.firstSeq = next
        }
        if !dryRun, !result.removed.isEmpty {
            // A checkpoint whose following records are gone can no longer be started from.
            for name in (try? storage.list(directory)) ?? [] where name.hasPrefix(Journal.checkpointPrefix) {
                if let seq = UInt64(name.dropFirst(Journal.checkpointPrefix.count)), seq + 1 < result.firstSeq {
                    _ = try? storage.remove(directory + "/" + name)
                }
            }
            try? storage.syncDirectory(directory)
        }
        return result
    }
}
