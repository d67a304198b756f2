import FluxCore
import FluxCores

/// The dispatcher's journal on a simulated disk: the bytes the OS holds (a process crash keeps them:
/// they are in the page cache) and how many of them are on the platter (a power cut keeps only those).
/// Records are the real ones (`JournalRecord`, with their CRC), checked and read back by the real
/// code. It is the simulated dispatcher's `ActionLog`: opened the way `Journal` opens
/// (``open(syncOnOpen:wallNanoseconds:newCluster:)``), it gives `DispatcherBoot` what it holds.
///
/// A class, as the log is, and the disk's files at the same time: it outlives the process that has it
/// open. An operator's backup is a ``copy()``.
final class SimJournal: ActionLog {
    private(set) var bytes: [UInt8] = []
    private(set) var durableLength = 0
    /// The records as written (decoded once by `open`, then kept as appended), for reads.
    private var messages: [Message] = []
    /// Nothing is ever compacted in the simulation: the journal starts at seq 1.
    let firstSeq: UInt64 = 1
    /// The journal's `HISTORY` file: its cluster id (set once) and the last epoch served; copied with it.
    private(set) var cluster: UInt32 = 0
    private(set) var lastEpoch: UInt64 = 0
    /// The history the latest opening serves.
    private(set) var history = HistoryID(rawValue: 0)
    /// Its `CLIENT-SCOPE`: the simulation runs without CURVE, so no client id is scoped with it.
    let clientScope = ClientScope(k0: 0, k1: 0)

    init() {}

    /// The files as an operator's copy of the directory has them (what the page cache holds too).
    func copy() -> SimJournal {
        let copy = SimJournal()
        copy.bytes = bytes
        copy.durableLength = durableLength
        copy.messages = messages
        copy.cluster = cluster
        copy.lastEpoch = lastEpoch
        return copy
    }

    var lastSeq: UInt64 { messages.last?.header.seq ?? 0 }
    var sizeInBytes: Int { bytes.count }

    func append(_ actions: [Message]) {
        for action in actions {
            messages.append(action)
            JournalRecord.append(action, to: &bytes)
        }
    }

    /// Everything written is on the disk. (The simulated dispatcher does not call it: it models how
    /// long an fsync takes, with ``sync(upTo:)`` when it returns.)
    func commit() { sync() }

    /// fsync/fdatasync: everything written is on the disk.
    func sync() { durableLength = bytes.count }

    /// An fdatasync issued when the journal was `length` bytes long: those bytes are on the disk now.
    func sync(upTo length: Int) { durableLength = max(durableLength, min(length, bytes.count)) }

    /// The power goes: what was not synced is lost, except that the last write may have reached the
    /// disk in part (a torn record), and a sector of that unsynced tail may come back corrupted.
    /// Returns what happened, for the trace.
    func powerCut(_ rng: inout SplitMix64) -> String {
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

    /// The records up to the first one that is cut short, fails its CRC or is not the seq due
    /// (`JournalRecord.checkRecords`, as the journal opens a segment), and the length they take.
    func scan() -> (records: [Message], validLength: Int) {
        var records: [Message] = []
        let bytes = bytes
        let (end, _, _) = JournalRecord.checkRecords(bytes, firstSeq: firstSeq) { _, offset in
            if case .success(let record) = JournalRecord.read(bytes, at: offset) { records.append(record.message) }
        }
        return (records, end)
    }

    /// What `Journal` does when it opens: scan, trim what is torn or fails its checks, (unless the
    /// canary says not to) force what the page cache held to the disk before trusting it, and open a
    /// new epoch of its history (`DispatcherBoot.history`), recorded before anything of it goes out.
    /// Returns the records it holds.
    func open(syncOnOpen: Bool, wallNanoseconds: Int64, newCluster: () -> UInt32) -> [Message] {
        let (records, validLength) = scan()
        bytes.removeLast(bytes.count - validLength)
        durableLength = min(durableLength, validLength)
        messages = records
        if syncOnOpen { sync() }
        history = DispatcherBoot.history(cluster: cluster, previousEpoch: lastEpoch, wallNanoseconds: wallNanoseconds, newCluster: newCluster)
        cluster = history.cluster
        lastEpoch = history.epoch
        return records
    }

    /// Up to `limit` records from seq `from` (what the journal's read does).
    func read(from: UInt64, limit: Int) -> [Message] {
        guard from >= firstSeq else { return [] }
        let start = Int(from - firstSeq)
        guard start < messages.count else { return [] }
        return Array(messages[start..<min(messages.count, start + limit)])
    }
}
