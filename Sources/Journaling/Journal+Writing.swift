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

    /// A sync that fails proves nothing of what it covered, then or later: Linux may mark the pages
    /// clean without writing them, and a second sync then succeeds with them lost. So the newest segment
    /// is cut back to what the last sync that succeeded covered (nothing past it was acknowledged: the
    /// core hears of durability only from a sync that returned), and the journal takes no more appends
    /// until it is opened again; the dispatcher restarts (``DispatcherInterpreter``'s rule).
    func sync() throws {
        guard let file else { throw JournalError("the journal in \(directory) is not open for appending: open it again") }
        do {
            let started = environment.monotonicNanoseconds()
            defer { syncTimes.record(nanoseconds: environment.monotonicNanoseconds() &- started) }
            try storage.sync(file)
        } catch {
            guard !environment.brokenRules.contains(.trustsFailedFsync) else { throw error }
            giveUpAppending(file)
            throw error
        }
        syncedSize = segmentSize
        unsynced = false
    }

    func roll(firstSeq: UInt64) throws {
        if unsynced && policy != .none { try sync() }
        if let file { storage.close(file) }
        file = nil
        retireSyncLanes()
        // Only a shortcut for the next opening: without it, that opening scans the segment instead.
        try? sealIndex(segment: segments.count - 1)
        segments.append(Segment(firstSeq: firstSeq, path: segmentPath(firstSeq: firstSeq)))
        segmentSize = 0
        syncedSize = 0
        file = try storage.open(segments[segments.count - 1].path, create: true, truncate: false)
        try syncDirectory()
        if syncLanes.enabled { try openSyncLanes() }
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
