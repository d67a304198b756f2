import FluxCore

/// The dispatcher's journal on a simulated disk: the bytes the OS holds (a process crash keeps them:
/// they are in the page cache) and how many of them are on the platter (a power cut keeps only those).
/// Records are the real ones (`JournalRecord`, with their CRC), read back by the real decoder.
struct SimJournal {
    private(set) var bytes: [UInt8] = []
    private(set) var durableLength = 0
    /// The records as written (decoded once by `recover()`, then kept as appended), for reads.
    private var messages: [Message] = []
    private(set) var firstSeq: UInt64 = 1
    /// The journal's `HISTORY` file: its cluster id (set once) and the last epoch served; copied with it.
    var cluster: UInt32 = 0
    var lastEpoch: UInt64 = 0

    mutating func append(_ actions: [Message]) {
        for action in actions {
            messages.append(action)
            JournalRecord.append(action, to: &bytes)
        }
    }

    /// fsync/fdatasync: everything written is on the disk.
    mutating func sync() { durableLength = bytes.count }

    /// An fdatasync issued when the journal was `length` bytes long: those bytes are on the disk now.
    mutating func sync(upTo length: Int) { durableLength = max(durableLength, min(length, bytes.count)) }

    /// The power goes: what was not synced is lost, except that the last write may have reached the
    /// disk in part (a torn record), and a sector of that unsynced tail may come back corrupted.
    /// Returns what happened, for the trace.
    mutating func powerCut(_ rng: inout SplitMix64) -> String {
        let unsynced = bytes.count - durableLength
        guard unsynced > 0 else { return "nothing unsynced" }
        var kept = 0
        if rng.chance(0.3) { kept = rng.int(0...unsynced) }
        bytes.removeLast(unsynced - kept)
        if kept > 0 && rng.chance(0.5) {
            let at = durableLength + rng.int(0...(kept - 1))
            bytes[at] ^= UInt8(truncatingIfNeeded: rng.int(1...255))
            return "lost \(unsynced - kept) bytes, kept \(kept) torn bytes with one corrupted"
        }
        return "lost \(unsynced - kept) bytes" + (kept > 0 ? ", kept \(kept) torn bytes" : "")
    }

    /// The records up to the first one that is cut short or fails its CRC, and the length they take.
    func scan() -> (records: [Message], validLength: Int) {
        var records: [Message] = []
        var offset = 0
        while offset < bytes.count {
            guard case .success(let record) = JournalRecord.read(bytes, at: offset) else { break }
            records.append(record.message)
            offset += record.size
        }
        return (records, offset)
    }

    /// What the journal does when it opens: scan, trim what is torn or fails its CRC, and (unless
    /// the canary says not to) force what the page cache held to the disk before trusting it.
    mutating func recover(syncOnOpen: Bool) -> (records: [Message], trimmed: Int) {
        let (records, validLength) = scan()
        let trimmed = bytes.count - validLength
        bytes.removeLast(trimmed)
        durableLength = min(durableLength, validLength)
        messages = records
        if let first = records.first { firstSeq = first.header.seq }
        if syncOnOpen { sync() }
        return (records, trimmed)
    }

    /// Up to `limit` records from seq `from` (what the journal's read does).
    func read(from: UInt64, limit: Int) -> [Message] {
        guard from >= firstSeq else { return [] }
        let start = Int(from - firstSeq)
        guard start < messages.count else { return [] }
        return Array(messages[start..<min(messages.count, start + limit)])
    }
}
