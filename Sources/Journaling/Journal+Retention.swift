import NodeCores

/// Retention on an open journal: the dispatcher lets its oldest segments go by itself
/// (``JournalRetention``), with its writer lock held, while it keeps appending.
extension Journal {
    /// Each segment's seqs and bytes on disk, oldest first.
    package func segmentSpans() -> [JournalRetention.Segment] {
        segments.enumerated().map { number, segment in
            let last = number + 1 < segments.count ? segments[number + 1].firstSeq - 1 : lastSeq
            return JournalRetention.Segment(firstSeq: segment.firstSeq, lastSeq: last, bytes: storage.size(segment.path) ?? 0)
        }
    }

    /// Removes the `count` oldest segments (never the newest) and their index files; the journal then
    /// starts at the next one's first seq. What is read or appended afterwards is unchanged.
    package func removeOldestSegments(_ count: Int) throws {
        guard count > 0 else { return }
        precondition(count < segments.count, "the newest segment always stays")
        for segment in segments.prefix(count) {
            try storage.remove(segment.path)
            _ = try? storage.remove(SegmentIndex.path(segment: segment.path))
        }
        try syncDirectory()
        segments.removeFirst(count)
        // The index and the caches name segments by their place: each moves down by `count`.
        index = index.filter { $0.segment >= count }.map { IndexEntry(seq: $0.seq, segment: $0.segment - count, offset: $0.offset) }
        unchecked = Set(unchecked.filter { $0 >= count }.map { $0 - count })
        checking = nil
        readCache = readCache.flatMap { $0.segment >= count ? ($0.segment - count, $0.bytes) : nil }
        checkpointedSegments = max(checkpointedSegments - count, 0)
        precondition(index.first.map { $0.seq == firstSeq && $0.segment == 0 } ?? true, "the index starts at the journal's first seq")
    }
}
