import Foundation

#if canImport(Glibc)
    import Glibc
#endif

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
        try withWriterLock(directory: directory, doing: "compacting") {
            try compactLocked(directory: directory, keepFrom: keepFrom, dryRun: dryRun)
        }
    }

    private static func compactLocked(directory: String, keepFrom: UInt64, dryRun: Bool) throws -> Compaction {
        let segments = try segmentFiles(in: directory)
        var result = Compaction(removed: [], firstSeq: segments.first?.first ?? 1)
        for (index, segment) in segments.enumerated().dropLast() {
            let first = segment.first, next = segments[index + 1].first
            guard next <= keepFrom else { break }
            let path = directory + "/" + segment.name
            let bytes = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
            if !dryRun {
                guard unlink(path) == 0 else { throw JournalError.posix("unlink", path) }
                _ = unlink(SegmentIndex.path(segment: path))
            }
            result.removed.append((first, next - 1, bytes))
            result.firstSeq = next
        }
        if !dryRun, !result.removed.isEmpty {
            let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dir >= 0 {
                _ = fsync(dir)
                _ = Glibc.close(dir)
            }
        }
        return result
    }
}
