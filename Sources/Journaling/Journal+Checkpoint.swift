import NodeCores

/// The dispatcher's checkpoints (``DispatcherCheckpoint``), kept beside the segments as
/// `CHECKPOINT-<seq, 20 digits>`: each written whole or not at all (a temporary file, synced, renamed,
/// the directory synced), the newest two kept, so that one torn or damaged leaves the one before it.
extension Journal {
    /// A checkpoint every million records at least, besides one at each segment roll.
    package static let defaultCheckpointEveryRecords: UInt64 = 1_000_000
    static let checkpointPrefix = "CHECKPOINT-"
    /// How many checkpoints are kept: the newest, and the one a start falls back to.
    static let checkpointsKept = 2

    /// The checkpoint files' seqs and names, newest first.
    func checkpointFiles() -> [(seq: UInt64, name: String)] {
        let names = (try? storage.list(directory)) ?? []
        return names.compactMap { name in
            guard name.hasPrefix(Journal.checkpointPrefix), let seq = UInt64(name.dropFirst(Journal.checkpointPrefix.count)) else { return nil }
            return (seq, name)
        }.sorted { $0.seq > $1.seq }
    }

    package func checkpoints() -> [(seq: UInt64, name: String, bytes: [UInt8])] {
        checkpointFiles().map { file in
            (file.seq, directory + "/" + file.name, storage.contentsIfAny(directory + "/" + file.name) ?? [])
        }
    }

    /// After an opening: the newest checkpoint's seq, and whether it covers the newest segment's start
    /// (if not, one is due at once: the next start would read whole segments).
    /// Checkpoints past the newest record (a tail lost, or truncated, since) are removed by a repairing
    /// opening: the seqs they name will be given to other actions.
    func noteCheckpoints(repair: Bool) {
        if repair {
            for stale in checkpointFiles() where stale.seq > lastSeq {
                _ = try? storage.remove(directory + "/" + stale.name)
                recovery.removedCheckpoints.append(stale.name)
            }
        }
        let newest = checkpointFiles().first?.seq ?? 0
        checkpointedThrough = min(newest, lastSeq)
        let newestSegmentStart = segments.last?.firstSeq ?? 1
        checkpointedSegments = newest + 1 >= newestSegmentStart ? segments.count : 0
    }

    package func checkpointDue(head: UInt64) -> Bool {
        guard head > checkpointedThrough else { return false }
        return segments.count != checkpointedSegments || head - checkpointedThrough >= checkpointEveryRecords
    }

    package func writeCheckpoint(seq: UInt64, bytes: [UInt8]) throws {
        // Not asked again before the next roll or the next stretch of records, even if this one fails.
        checkpointedThrough = seq
        checkpointedSegments = segments.count
        try storage.writeWhole(bytes, to: directory + "/" + Journal.checkpointPrefix + Journal.twentyDigits(seq))
        try syncDirectory()
        for old in checkpointFiles().dropFirst(Journal.checkpointsKept) { _ = try? storage.remove(directory + "/" + old.name) }
        // A temporary file left by a write that did not finish.
        let names = (try? storage.list(directory)) ?? []
        for name in names where name.hasPrefix(Journal.checkpointPrefix) && name.hasSuffix(".tmp") { _ = try? storage.remove(directory + "/" + name) }
    }

    static func twentyDigits(_ value: UInt64) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }
}
