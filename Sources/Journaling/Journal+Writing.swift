import Foundation

extension Journal {
    func segmentPath(firstSeq: UInt64) -> String {
        let digits = String(firstSeq)
        return directory + "/" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".journal"
    }

    func write(_ bytes: ArraySlice<UInt8>) throws {
        guard !bytes.isEmpty else { return }
        // Read-only opens never have one; a truncation that failed half-way gives it up (see `truncate(after:)`).
        guard let file else { throw JournalError("the journal in \(directory) is not open for appending: open it again") }
        try storage.append(bytes, to: file)
        segmentSize += bytes.count
        unsynced = true
    }

    func sync() throws {
        guard let file else { throw JournalError("the journal in \(directory) is not open for appending: open it again") }
        try storage.sync(file)
        unsynced = false
    }

    func roll(firstSeq: UInt64) throws {
        if unsynced && policy != .none { try sync() }
        if let file { storage.close(file) }
        file = nil
        // Only a shortcut for the next opening: without it, that opening scans the segment instead.
        try? sealIndex(segment: segments.count - 1)
        segments.append(Segment(firstSeq: firstSeq, path: segmentPath(firstSeq: firstSeq)))
        segmentSize = 0
        file = try storage.open(segments[segments.count - 1].path, create: true, truncate: false)
        try syncDirectory()
    }

    /// Writes the index file of a segment the journal has rolled past, from the index in memory.
    private func sealIndex(segment number: Int) throws {
        let entries = index.filter { $0.segment == number }.map { SegmentIndex.Entry(seq: $0.seq, offset: $0.offset) }
        try SegmentIndex(firstSeq: segments[number].firstSeq, lastSeq: lastSeq, length: segmentSize, entries: entries)
            .write(segment: segments[number].path, on: storage)
    }

    func syncDirectory() throws { try storage.syncDirectory(directory) }
}

extension SegmentIndex {
    /// Writes the file whole or not at all.
    func write(segment: String, on storage: any JournalStorage) throws { try storage.writeWhole(encoded(), to: SegmentIndex.path(segment: segment)) }

    /// The index of the segment at `segment`, if its file is whole and agrees with the segment.
    static func load(segment: String, firstSeq: UInt64, on storage: any JournalStorage = FileStorage.shared) -> SegmentIndex? {
        guard let data = storage.contentsIfAny(path(segment: segment)), let index = decode(data),
            index.firstSeq == firstSeq, index.lastSeq >= firstSeq
        else { return nil }
        guard storage.size(segment) == index.length else { return nil }
        return index
    }
}
