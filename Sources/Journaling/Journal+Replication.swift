import FluxCore
import Foundation
import NodeCores

/// What a standby dispatcher needs of its journal (issue 27): dropping a tail the leader's history
/// does not hold, finding where a history's records begin, taking the leader's cluster id and client
/// scope, and starting an epoch of its own once it leads.
extension Journal {
    /// Drops every record after `seq`; the next append is `seq + 1`. A returning old leader drops this
    /// way the tail that the new leader's history does not hold. Nothing happens when `seq` is at or
    /// past ``lastSeq``; a `seq` below `firstSeq - 1` throws, as the records under ``firstSeq`` are gone.
    ///
    /// Later segments are deleted newest first, each deletion durable before the next, and only then
    /// is the segment holding `seq + 1` cut at that record and synced: a crash at any point leaves a
    /// journal that opens as a prefix of this one. After a failure past the first deletion the journal
    /// refuses appends until it is opened again.
    public func truncate(after seq: UInt64) throws {
        guard seq < lastSeq else { return }
        guard seq + 1 >= firstSeq else {
            throw JournalError(
                "cannot truncate the journal in \(directory) after seq \(seq): it starts at seq \(firstSeq), the records before that are gone")
        }
        try requireWriter("truncated")
        // The first segment starts at firstSeq, at or below seq + 1.
        let keep = segments.lastIndex { $0.firstSeq <= seq + 1 } ?? 0
        var cut = 0
        if segments[keep].firstSeq <= seq {
            var found: Int? = nil
            // The segment is checked whole first if it was taken from its index file: damage stops us before
            // any change, and what stays of it is the newest segment then, whose records reads no longer check.
            if unchecked.contains(keep) { readCache = (keep, try loadSegment(keep)) }
            // From the disk: the offset is where to cut the segment file.
            try walk(from: seq + 1, onDisk: true) { _, _, body in
                found = body.lowerBound - JournalRecord.headerSize
                return false
            }
            guard let found else { throw JournalError("seq \(seq + 1) is missing from \(segments[keep].path)") }
            cut = found
        }
        let paths = segments.map(\.path)
        // From here on the disk changes: the journal in memory ends at seq at once, and has no append
        // descriptor until the disk agrees with it.
        if let file { storage.close(file) }
        file = nil
        syncLanes.cuts += 1
        retireSyncLanes()
        forget(after: seq, segment: keep, length: cut)
        try deleteSegments(paths[(keep + 1)...])
        try cutSegment(paths[keep], at: cut)
        file = try storage.open(paths[keep], create: true, truncate: false)
    }

    /// Makes the state in memory that of a journal ending at `seq`, in segment `segment` of `length` bytes.
    private func forget(after seq: UInt64, segment keep: Int, length cut: Int) {
        segments.removeSubrange((keep + 1)...)
        index.removeAll { $0.segment > keep || $0.seq > seq }
        unchecked = unchecked.filter { $0 < keep }
        checking = nil
        if let cached = readCache, cached.segment >= keep {
            // Bytes before the cut stay as they are; those after it will be other records.
            readCache = cached.segment == keep ? (keep, Array(cached.bytes.prefix(cut))) : nil
        }
        tail.removeRecords(after: seq)
        lastSeq = seq
        segmentSize = cut
        syncedSize = cut
        // The cut segment is synced whole (`cutSegment`).
        unsynced = false
    }

    /// The first step of a truncation: deletes the segments at `paths` (and their index files), newest
    /// first, syncing the directory after each, so that a crash never leaves a gap between segments.
    func deleteSegments(_ paths: ArraySlice<String>) throws {
        for path in paths.reversed() {
            // The index file goes first: a segment without one is scanned, an index file alone is never read.
            _ = try? storage.remove(SegmentIndex.path(segment: path))
            try storage.remove(path)
            try syncDirectory()
        }
    }

    /// The second step of a truncation: cuts the segment at `path` to `length` bytes, syncs it, and
    /// deletes its index file (the segment is the newest now, and the file would no longer match it).
    func cutSegment(_ path: String, at length: Int) throws {
        _ = try? storage.remove(SegmentIndex.path(segment: path))
        let file = try storage.open(path, create: false, truncate: false)
        defer { storage.close(file) }
        try storage.truncate(file, to: length)
        try storage.sync(file)
        try syncDirectory()
    }

    /// The raw ``HistoryID`` stamp (`header.history`) of the record at `seq`, or nil when the journal
    /// does not hold it.
    public func history(at seq: UInt64) throws -> UInt64? {
        guard seq >= max(firstSeq, 1), seq <= lastSeq else { return nil }
        return try stamps(from: seq, through: seq).first
    }

    /// The first seq of the run of consecutive records ending at `seq` that all carry the stamp of the
    /// record at `seq` (``history(at:)``), at least ``firstSeq``. Throws when the journal does not hold `seq`.
    public func firstSeqOfRun(endingAt seq: UInt64) throws -> UInt64 {
        guard let stamp = try history(at: seq) else {
            throw JournalError("the journal in \(directory) does not hold seq \(seq): it holds \(firstSeq) to \(lastSeq)")
        }
        // Back in growing steps: a run is usually short, and never read whole from its first record on.
        var start = seq
        var step: UInt64 = 256
        while start > firstSeq {
            let from = start - min(step, start - firstSeq)
            let earlier = try stamps(from: from, through: start - 1)
            if let other = earlier.lastIndex(where: { $0 != stamp }) { return from + UInt64(other) + 1 }
            start = from
            step = min(step * 2, 1 << 16)
        }
        return start
    }

    /// The history stamps of the records `from...last` (all held): from the tail cache when it holds
    /// them, else from the headers of the records on disk.
    private func stamps(from: UInt64, through last: UInt64) throws -> [UInt64] {
        var result: [UInt64] = []
        result.reserveCapacity(Int(last - from + 1))
        try walk(from: from) { seq, bytes, body in
            let stamp = bytes.withUnsafeBytes { JournalRecord.history(inBody: UnsafeRawBufferPointer(rebasing: $0[body])) }
            guard let stamp else { throw JournalError("the record of seq \(seq) in \(directory) has no whole header") }
            result.append(stamp)
            return seq < last
        }
        guard result.count == Int(last - from + 1) else {
            throw JournalError("the journal in \(directory) ended before seq \(last) while reading from \(from)")
        }
        return result
    }

    /// Takes the leader's cluster id and client-scope secret, as a standby does before copying its
    /// journal: rewrites `CLIENT-SCOPE` and `HISTORY` (keeping its epoch) and updates ``history`` and
    /// ``clientScope``. Nothing changes when both are already these. A journal holding records
    /// (``lastSeq`` above 0) of another cluster is refused: the standby needs an empty directory.
    public func adopt(cluster: UInt32, clientScope scope: ClientScope) throws {
        guard cluster >= 1 && cluster <= 0xFF_FFFF else {
            throw JournalError("\(String(cluster, radix: 16)) is not a cluster id (24 bits, not 0)")
        }
        guard cluster != history.cluster || scope != clientScope else { return }
        try requireWriter("given another cluster")
        if lastSeq > 0 && cluster != history.cluster {
            throw JournalError(
                "the journal in \(directory) belongs to another cluster (\(String(history.cluster, radix: 16)), not \(String(cluster, radix: 16))) "
                    + "and holds records up to seq \(lastSeq): give the standby an empty directory")
        }
        // The scope first and the cluster id last: a crash between leaves the old id, so the next start
        // adopts both again, and never takes the new id for a sign that the scope is the new one too.
        try recordClientScope(scope)
        clientScope = scope
        let adopted = HistoryID(cluster: cluster, epoch: history.epoch)
        try recordHistory(adopted)
        history = adopted
    }

    /// Starts `epoch` of this journal's cluster and returns it as the journal's ``history``: recorded
    /// in `HISTORY` durably before it returns, so before anything of it goes out. A standby that wins
    /// leadership passes the epoch of ``HistoryID/leading(cluster:revision:)``. The epoch must be past
    /// the one recorded, and fit in 40 bits.
    public func beginEpoch(_ epoch: UInt64) throws -> HistoryID {
        let next = HistoryID(cluster: history.cluster, epoch: epoch)
        guard next.epoch == epoch else { throw JournalError("epoch \(epoch) does not fit in 40 bits") }
        guard epoch > history.epoch else {
            throw JournalError("epoch \(epoch) is not past the epoch \(history.epoch) recorded in \(directory)/HISTORY")
        }
        try requireWriter("given a new epoch")
        try recordHistory(next)
        history = next
        return next
    }

    /// Throws unless this journal was opened for appending (it holds the writer lock).
    private func requireWriter(_ change: String) throws {
        guard lockFile != nil else { throw JournalError("the journal in \(directory) was opened read-only: it cannot be \(change)") }
    }
}

extension Journal {
    /// The record's stamp, read from its header alone (``ActionLog/stamp(at:)``).
    public func stamp(at seq: UInt64) throws -> UInt64? { try history(at: seq) }
}
