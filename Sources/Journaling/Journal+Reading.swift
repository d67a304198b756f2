import FluxCore
import Foundation

extension Journal {
    /// Visits the records from `from` on, in order, as (seq, bytes, the record's body within them),
    /// until `visit` returns false or the log ends: from the tail cache when it holds `from`, else from
    /// the disk, starting at the nearest indexed record. With `onDisk` always from the disk: only then
    /// are a body's offsets its record's place in its segment file (the tail's are its burst's), which
    /// a truncation cuts the file at.
    /// A `from` before the journal's first seq fails (``compacted(from:)``): the records from there on
    /// would not be the ones asked for.
    func walk(from: UInt64, onDisk: Bool = false, _ visit: (UInt64, [UInt8], Range<Int>) throws -> Bool) throws {
        guard from >= firstSeq else { throw compacted(from: from) }
        if !onDisk && tail.holds(from, through: lastSeq) { return try tail.visit(from: from, visit) }
        func nearest() -> Int {
            var lo = 0, hi = index.count - 1
            while lo < hi {
                let mid = (lo + hi + 1) / 2
                if index[mid].seq <= from { lo = mid } else { hi = mid - 1 }
            }
            return lo
        }
        guard !index.isEmpty else { return }
        var lo = nearest()
        // A segment taken from its index file is checked (and its index corrected) before its offsets are used.
        if unchecked.contains(index[lo].segment) {
            readCache = (index[lo].segment, try loadSegment(index[lo].segment))
            lo = nearest()
        }
        var segment = index[lo].segment
        var offset = index[lo].offset
        var seq = index[lo].seq
        while segment < segments.count {
            var bytes: [UInt8]
            if let cached = readCache, cached.segment == segment, cached.bytes.count >= offset + JournalRecord.headerSize {
                bytes = cached.bytes
            } else {
                bytes = try loadSegment(segment)
                readCache = (segment, bytes)
            }
            var reloaded = false
            while true {
                guard offset + JournalRecord.headerSize <= bytes.count,
                    offset + JournalRecord.headerSize + Int(bytes.readLittleEndian(UInt32.self, at: offset)) <= bytes.count
                else {
                    // A cached copy may end early: the newest segment grows, and one cached while it was the
                    // newest may have been sealed since. Records written after the copy are read anew, once.
                    let holdsMore = segment == segments.count - 1 ? bytes.count < segmentSize : seq < segments[segment + 1].firstSeq
                    guard seq <= lastSeq, holdsMore, !reloaded else { break }
                    reloaded = true
                    bytes = try readFile(segments[segment].path)
                    readCache = (segment, bytes)
                    continue
                }
                let length = Int(bytes.readLittleEndian(UInt32.self, at: offset))
                let body = (offset + JournalRecord.headerSize)..<(offset + JournalRecord.headerSize + length)
                if seq >= from, try !visit(seq, bytes, body) { return }
                offset += JournalRecord.headerSize + length
                seq += 1
                if seq > lastSeq { return }
            }
            segment += 1
            offset = 0
        }
    }

    /// The (client id, client seq, seq) of every record from `from` on, read from the records' headers
    /// without decoding them whole: what the dispatcher's dedup table is rebuilt from when it opens.
    public func forEachDispatch(from: UInt64, _ body: (_ clientID: UInt64, _ clientSeq: UInt64, _ seq: UInt64) -> Void) throws {
        let from = max(from, firstSeq, 1)
        guard from <= lastSeq else { return }
        try walk(from: from) { seq, bytes, record in
            if let dispatch = bytes.withUnsafeBytes({ JournalRecord.dispatch(inBody: UnsafeRawBufferPointer(rebasing: $0[record])) }) {
                body(dispatch.clientID, dispatch.clientSeq, seq)
            }
            return true
        }
    }

    /// The records from `from` on that make, cancel or fire a schedule, told apart by their topic and
    /// header flags and only then decoded: what the dispatcher's schedules are rebuilt from when it opens.
    public func forEachScheduling(from: UInt64, _ body: (Message) -> Void) throws {
        let from = max(from, firstSeq, 1)
        guard from <= lastSeq else { return }
        try walk(from: from) { _, bytes, record in
            if bytes.withUnsafeBytes({ Schedules.concernsSchedules(recordBody: UnsafeRawBufferPointer(rebasing: $0[record])) }) {
                body(try ReplayBatch.decodeEntry(bytes[record]))
            }
            return true
        }
    }

    /// Every record in order from `from` (nil: the journal's first seq), for `zflux journal dump` and
    /// time travel. A `from` the journal no longer holds fails (``compacted(from:)``), and so does a
    /// read of a segment that retention removed after this journal was opened: a reader gets the
    /// records in order, with no gap, or an error that says they were compacted away.
    public func forEach(from: UInt64? = nil, through last: UInt64 = .max, _ body: (Message) throws -> Void) throws {
        var next = max(from ?? firstSeq, 1)
        while next <= min(last, lastSeq) {
            let batch = try read(from: next, limit: 4096)
            guard !batch.isEmpty else { return }
            for message in batch where message.header.seq <= last { try body(message) }
            guard let newest = batch.last else { return }
            next = newest.header.seq + 1
        }
    }

    /// Bytes on disk across every segment.
    public var sizeInBytes: Int {
        segments.reduce(0) { $0 + (storage.size($1.path) ?? 0) }
    }

    /// A segment's bytes for reading. A sealed segment opened from its index file has every record
    /// checked the first time it is read: a damaged record is never served, it stops the read instead.
    private func loadSegment(_ number: Int) throws -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try readFile(segments[number].path)
        } catch {
            throw removedSince(opened: number) ?? error
        }
        guard unchecked.contains(number) else { return bytes }
        var walked: [IndexEntry] = []
        let (offset, expected, found) = JournalRecord.checkRecords(bytes, firstSeq: segments[number].firstSeq) { seq, offset in
            if (seq - 1) % indexStride == 0 || offset == 0 { walked.append(IndexEntry(seq: seq, segment: number, offset: offset)) }
        }
        let last = number + 1 < segments.count ? segments[number + 1].firstSeq - 1 : lastSeq
        if let problem = found ?? (expected != last + 1 ? "it ends at seq \(expected - 1), not \(last)" : nil) {
            throw JournalError(
                "\(segments[number].path) is damaged at byte \(offset) (\(problem)); acknowledged actions are in it: restore it from a backup")
        }
        // The index file's entries are a claim until the records agree: on a mismatch the walked ones
        // replace them, and the file is written again from them.
        let claimed = index.indices.filter { index[$0].segment == number }
        if claimed.map({ index[$0] }) != walked, let first = claimed.first, let after = claimed.last.map({ $0 + 1 }) {
            index.replaceSubrange(first..<after, with: walked)
            try? SegmentIndex(
                firstSeq: segments[number].firstSeq, lastSeq: last, length: bytes.count,
                entries: walked.map { SegmentIndex.Entry(seq: $0.seq, offset: $0.offset) }
            ).write(segment: segments[number].path, on: storage)
        }
        unchecked.remove(number)
        return bytes
    }

    /// A whole file.
    func readFile(_ path: String) throws -> [UInt8] { try storage.contents(path) }

    /// Why a read from `from` cannot be served: the journal no longer holds it.
    func compacted(from: UInt64) -> JournalError {
        JournalError(
            "seq \(from) was compacted away: the journal in \(directory) starts at seq \(firstSeq) (retention or `zflux journal compact` let the records before it go); read from seq \(firstSeq) on"
        )
    }

    /// A sealed segment's file is gone since this journal was opened (a reader of a journal whose
    /// dispatcher's retention, or `zflux journal compact`, let it go meanwhile): says so, and where
    /// the journal now starts. Nil when the file is there (another failure, reported as it is).
    private func removedSince(opened number: Int) -> JournalError? {
        let segment = segments[number]
        guard storage.size(segment.path) == nil else { return nil }
        let last = number + 1 < segments.count ? segments[number + 1].firstSeq - 1 : lastSeq
        let now = ((try? storage.list(directory)) ?? []).filter { $0.hasSuffix(".journal") }
            .compactMap { UInt64($0.dropLast(".journal".count)) }.min()
        return JournalError(
            "seqs \(segment.firstSeq)…\(last) were compacted away while this journal was read (retention or `zflux journal compact` removed \(segment.path))"
                + (now.map { "; the journal now starts at seq \($0): read from there on" } ?? ""))
    }
}
