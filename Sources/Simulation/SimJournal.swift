import FluxCore
import NodeCores

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
    /// Where each record of `messages` ends in `bytes`: a record is on the disk once that much is.
    private var recordEnds: [Int] = []
    /// How many times the journal was cut (``truncate(after:)``): an fsync issued before a cut reports nothing.
    private(set) var cuts: UInt64 = 0
    /// Nothing is ever compacted in the simulation: the journal starts at seq 1.
    let firstSeq: UInt64 = 1
    /// The journal's `HISTORY` file: its cluster id (set once) and the last epoch served; copied with it.
    private(set) var cluster: UInt32 = 0
    private(set) var lastEpoch: UInt64 = 0
    /// The history the latest opening serves.
    private(set) var history = HistoryID(rawValue: 0)
    /// Its `CLIENT-SCOPE`: the simulation runs without CURVE, so no client id is scoped with it (a
    /// standby adopts its leader's, which is this one).
    private(set) var clientScope = ClientScope(k0: 0, k1: 0)
    /// The quarantine the dispatcher keeps beside its journal (`QUARANTINE`): it survives restarts.
    var quarantine: [UInt64: Quarantine] = [:]

    init() {}

    /// The files as an operator's copy of the directory has them (what the page cache holds too).
    func copy() -> SimJournal {
        let copy = SimJournal()
        copy.bytes = bytes
        copy.durableLength = durableLength
        copy.messages = messages
        copy.recordEnds = recordEnds
        copy.clientScope = clientScope
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
            recordEnds.append(bytes.count)
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
        defer { reload() }
        if kept > 0 && rng.chance(0.5) {
            let at = durableLength + rng.int(0...(kept - 1))
            bytes[at] ^= UInt8(truncatingIfNeeded: rng.int(1...255))
            return "lost \(unsynced - kept) bytes, kept \(kept) torn bytes with one corrupted"
        }
        return "lost \(unsynced - kept) bytes" + (kept > 0 ? ", kept \(kept) torn bytes" : "")
    }

    /// The records as the bytes now hold them (after a power cut), without changing the bytes.
    private func reload() {
        let (records, ends) = scanWithEnds()
        messages = records
        recordEnds = ends
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

    /// ``scan()``, with where each record ends.
    private func scanWithEnds() -> (records: [Message], ends: [Int]) {
        var records: [Message] = []
        var starts: [Int] = []
        let bytes = bytes
        let (end, _, _) = JournalRecord.checkRecords(bytes, firstSeq: firstSeq) { _, offset in
            if case .success(let record) = JournalRecord.read(bytes, at: offset) {
                records.append(record.message)
                starts.append(offset)
            }
        }
        return (records, Array(starts.dropFirst()) + (records.isEmpty ? [] : [end]))
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
        recordEnds = scanWithEnds().ends
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

    // MARK: High availability (mirrors Journal+Replication)

    /// What an HA journal does when it opens: scan, trim, sync, and serve the epoch it recorded last;
    /// no new epoch (one is begun only by winning the lease, ``beginEpoch(_:)``). A new journal gets a
    /// cluster id (a standby adopts its leader's in place of it).
    func openWithoutEpoch(newCluster: () -> UInt32) -> [Message] {
        let (records, validLength) = scan()
        bytes.removeLast(bytes.count - validLength)
        durableLength = min(durableLength, validLength)
        messages = records
        recordEnds = scanWithEnds().ends
        sync()
        if cluster == 0 { cluster = newCluster() }
        history = HistoryID(cluster: cluster, epoch: lastEpoch)
        return records
    }

    /// A new journal given its cluster id by the operator before it first opens (an HA pair shares one).
    func provision(cluster: UInt32) {
        if self.cluster == 0 { self.cluster = cluster }
    }

    /// `Journal.beginEpoch`: the epoch is recorded (durably) before anything of it goes out. Nil when
    /// it is not past the one recorded.
    func beginEpoch(_ epoch: UInt64) -> HistoryID? {
        guard epoch > lastEpoch else { return nil }
        lastEpoch = epoch
        history = HistoryID(cluster: cluster, epoch: epoch)
        return history
    }

    /// `Journal.adopt`: the leader's cluster id and client scope; refused (false) when records of
    /// another cluster are held.
    func adopt(cluster newCluster: UInt32, clientScope scope: ClientScope) -> Bool {
        guard newCluster != cluster || scope != clientScope else { return true }
        if lastSeq > 0 && newCluster != cluster { return false }
        clientScope = scope
        cluster = newCluster
        history = HistoryID(cluster: newCluster, epoch: history.epoch)
        return true
    }

    /// `Journal.history(at:)`: the history stamp of the record at `seq`.
    func stamp(at seq: UInt64) -> UInt64? {
        guard seq >= firstSeq, seq <= lastSeq else { return nil }
        return messages[Int(seq - firstSeq)].header.history
    }

    /// `Journal.firstSeqOfRun(endingAt:)`: where the run of records stamped as the one at `seq` begins.
    func firstSeqOfRun(endingAt seq: UInt64) -> UInt64? {
        guard let stamp = stamp(at: seq) else { return nil }
        var start = seq
        while start > firstSeq, self.stamp(at: start - 1) == stamp { start -= 1 }
        return start
    }

    /// `Journal.truncate(after:)`: every record after `seq` is dropped, and the cut is synced.
    func truncate(after seq: UInt64) {
        guard seq < lastSeq else { return }
        let keep = Int(seq + 1 - firstSeq)
        let length = keep == 0 ? 0 : recordEnds[keep - 1]
        messages.removeLast(messages.count - keep)
        recordEnds.removeLast(recordEnds.count - keep)
        bytes.removeLast(bytes.count - length)
        durableLength = length
        cuts += 1
    }

    /// Where the record at `seq` stands, for a failure's detail.
    func describe(_ seq: UInt64) -> String {
        guard seq >= firstSeq, seq <= lastSeq else { return "the journal ends at seq \(lastSeq)" }
        let index = Int(seq - firstSeq)
        let header = messages[index].header
        return "its seq \(seq) is client \(header.clientID) seq \(header.clientSeq), ending at byte \(recordEnds[index]); "
            + "\(durableLength) of \(bytes.count) bytes are on the disk"
    }

    /// Whether the record at `seq` is this dispatch (`client`, `clientSeq`) and, with `onDisk`, synced.
    func holds(seq: UInt64, client: UInt64, clientSeq: UInt64, onDisk: Bool) -> Bool {
        guard seq >= firstSeq, seq <= lastSeq else { return false }
        let index = Int(seq - firstSeq)
        let header = messages[index].header
        return header.clientID == client && header.clientSeq == clientSeq && (!onDisk || recordEnds[index] <= durableLength)
    }
}
