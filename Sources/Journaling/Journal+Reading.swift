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
        let lo = nearest()
        var segment = index[lo].segment
        var offset = index[lo].offset
        var seq = index[lo].seq
        var visited = false
        while segment < segments.count {
            var bytes: [UInt8]
            if let cached = readCache, cached.segment == segment, cached.bytes.count >= offset + JournalRecord.headerSize {
                bytes = cached.bytes
            } else {
                bytes = try readSegment(segment)
                readCache = (segment, bytes)
            }
            var reloaded = false
            var unverified = unchecked.contains(segment)
            while true {
                // A sealed segment ends where the next one begins. Bytes after that in one opened from its
                // index file are damage (a copy of the next record there would be served twice).
                if segment < segments.count - 1, seq == segments[segment + 1].firstSeq {
                    if unverified, offset != bytes.count { return try recheck(segment, after: visited, from: from, onDisk: onDisk, visit) }
                    break
                }
                guard offset + JournalRecord.headerSize <= bytes.count,
                    offset + JournalRecord.headerSize + Int(bytes.readLittleEndian(UInt32.self, at: offset)) <= bytes.count
                else {
                    // A cached copy may end early: the newest segment grows, and one cached while it was the
                    // newest may have been sealed since. Records written after the copy are read anew, once.
                    let holdsMore = segment == segments.count - 1 ? bytes.count < segmentSize : seq < segments[segment + 1].firstSeq
                    guard seq <= lastSeq, holdsMore, !reloaded else {
                        // An unchecked segment whose records end before its index file's last seq is damaged.
                        if unverified, seq <= lastSeq, holdsMore {
                            return try recheck(segment, after: visited, from: from, onDisk: onDisk, visit)
                        }
                        break
                    }
                    reloaded = true
                    bytes = try readFile(segments[segment].path)
                    readCache = (segment, bytes)
                    continue
                }
                // A record of a segment opened from its index file is served only once it checks out: the
                // seq the walk expects there, and its checksum. One that does not means damage, or an
                // index file whose entry pointed elsewhere: the whole segment is checked then.
                if unverified {
                    guard try checked(segment, bytes, at: offset, seq: seq) else {
                        return try recheck(segment, after: visited, from: from, onDisk: onDisk, visit)
                    }
                    unverified = unchecked.contains(segment)
                }
                let length = Int(bytes.readLittleEndian(UInt32.self, at: offset))
                let body = (offset + JournalRecord.headerSize)..<(offset + JournalRecord.headerSize + length)
                if seq >= from {
                    visited = true
                    if try !visit(seq, bytes, body) { return }
                }
                offset += JournalRecord.headerSize + length
                seq += 1
                if seq > lastSeq { return }
            }
            segment += 1
            offset = 0
        }
    }

    /// Whether the record at `offset` of `segment`, which was opened from its index file, is `seq` and
    /// intact. Checks that run from the segment's start, record after record, also walk its index; when
    /// they reach its end the segment is settled as a whole check settles it
    /// (``settle(_:length:walked:expected:)``), and a segment whose bytes and seqs do not end together
    /// does not check out.
    private func checked(_ segment: Int, _ bytes: [UInt8], at offset: Int, seq: UInt64) throws -> Bool {
        guard case .success(let record) = bytes.withUnsafeBytes({ JournalRecord.check($0, at: offset) }), record.seq == seq else {
            return false
        }
        precondition(segment < segments.count - 1, "only sealed segments are opened from their index files")
        if offset == 0, checking?.segment != segment {
            precondition(seq == segments[segment].firstSeq, "a segment's first record is its first seq")
            checking = SegmentCheck(segment: segment, seq: seq)
        }
        guard var progress = checking, progress.segment == segment, progress.offset == offset else { return true }
        precondition(progress.seq == seq, "the checks from a segment's start follow its seqs")
        if (seq - 1) % indexStride == 0 || offset == 0 { progress.walked.append(IndexEntry(seq: seq, segment: segment, offset: offset)) }
        progress.offset += record.size
        progress.seq += 1
        checking = progress
        // The segment's end, by its bytes or by the next segment's first seq: both must come together.
        if progress.offset == bytes.count || progress.seq == segments[segment + 1].firstSeq {
            checking = nil
            guard progress.offset == bytes.count else { return false }
            try settle(segment, length: bytes.count, walked: progress.walked, expected: progress.seq)
        }
        return true
    }

    /// A record of an unchecked segment did not check out: the segment is checked whole, which throws
    /// when a record is damaged and corrects its index when only the index file was wrong. In the latter
    /// case a walk that has visited nothing yet starts again from the corrected index; one that has
    /// cannot (it would visit records twice), and the read fails.
    private func recheck(
        _ segment: Int, after visited: Bool, from: UInt64, onDisk: Bool, _ visit: (UInt64, [UInt8], Range<Int>) throws -> Bool
    ) throws {
        readCache = (segment, try loadSegment(segment))
        precondition(!unchecked.contains(segment), "a segment checked whole is no longer unchecked")
        guard !visited else {
            throw JournalError("\(segments[segment].path) changed while it was read; read again from seq \(from)")
        }
        try walk(from: from, onDisk: onDisk, visit)
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

    /// A segment's bytes as they are on disk, or why they are gone.
    private func readSegment(_ number: Int) throws -> [UInt8] {
        do {
            return try readFile(segments[number].path)
        } catch {
            throw removedSince(opened: number) ?? error
        }
    }

    /// A segment's bytes for reading, every record checked when it was opened from its index file and
    /// not checked since: a damaged record is never served, it stops the read instead.
    func loadSegment(_ number: Int) throws -> [UInt8] {
        let bytes = try readSegment(number)
        guard unchecked.contains(number) else { return bytes }
        var walked: [IndexEntry] = []
        let (offset, expected, found) = JournalRecord.checkRecords(bytes, firstSeq: segments[number].firstSeq) { seq, offset in
            if (seq - 1) % indexStride == 0 || offset == 0 { walked.append(IndexEntry(seq: seq, segment: number, offset: offset)) }
        }
        if let found {
            throw JournalError(
                "\(segments[number].path) is damaged at byte \(offset) (\(found)), where seq \(expected) is due; acknowledged actions are in it: restore it from a backup (in a pair, from the other member's journal); or, to give them up, `zflux journal truncate --journal \(directory) --from-seq \(expected)` keeps what precedes seq \(expected) and sets the rest aside"
            )
        }
        if checking?.segment == number { checking = nil }
        try settle(number, length: bytes.count, walked: walked, expected: expected)
        return bytes
    }

    /// A sealed segment whose every record was checked, `walked` the index entries its records gave and
    /// `expected` the seq after its last: it must end where the next segment begins, and its index file
    /// is trusted no further than the records. On a mismatch the walked entries replace the claimed ones
    /// and the file is written again from them. The segment is no longer unchecked.
    private func settle(_ number: Int, length: Int, walked: [IndexEntry], expected: UInt64) throws {
        let last = number + 1 < segments.count ? segments[number + 1].firstSeq - 1 : lastSeq
        guard expected == last + 1 else {
            throw JournalError(
                "\(segments[number].path) is damaged at byte \(length) (it ends at seq \(expected - 1), not \(last)); acknowledged actions are in it: restore it from a backup"
            )
        }
        let claimed = index.indices.filter { index[$0].segment == number }
        if claimed.map({ index[$0] }) != walked, let first = claimed.first, let after = claimed.last.map({ $0 + 1 }) {
            index.replaceSubrange(first..<after, with: walked)
            try? SegmentIndex(
                firstSeq: segments[number].firstSeq, lastSeq: last, length: length,
                entries: walked.map { SegmentIndex.Entry(seq: $0.seq, offset: $0.offset) }
            ).write(segment: segments[number].path, on: storage)
        }
        unchecked.remove(number)
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
