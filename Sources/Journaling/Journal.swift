import FluxCore
import Foundation
import NodeCores

/// The dispatcher's durable log: append-only segment files of length-prefixed, CRC-checked records.
///
/// A segment is named after the first seq it holds (`00000000000000000001.journal`) and rolls over at
/// `segmentBytes`. A record is `u32 body length, u32 CRC-32 of the body, body`, all little-endian, where
/// the body is the ACTION message as a replay entry (`ReplayBatch.appendEntry`). Opening a journal
/// checks every record: a torn or corrupt tail of the newest segment (a crash in mid-write) is cut off
/// and reported; damage anywhere else stops the open, because acknowledged actions would be lost.
public final class Journal: ActionLog, RecordLog, CheckpointedLog {
    public typealias FsyncPolicy = FluxCore.FsyncPolicy

    struct Segment {
        let firstSeq: UInt64
        let path: String
    }

    /// Every `indexStride`-th record's place and each segment's first, for reads from any seq without
    /// scanning whole segments (or reading a segment before the one that holds the seq).
    struct IndexEntry: Equatable {
        let seq: UInt64
        let segment: Int
        let offset: Int
    }

    /// How far reads have checked a segment opened from its index file, from its start: the next
    /// record's offset and seq, and the index entries the records checked so far gave.
    struct SegmentCheck {
        let segment: Int
        var offset = 0
        var seq: UInt64
        var walked: [IndexEntry] = []
    }

    public let directory: String
    public let policy: FsyncPolicy
    public let segmentBytes: Int
    // What is not private below is internal only because the journal's other files (Journal+Recovery,
    // +Writing, +Reading) use it: Swift has no access level for 'this type, in any of its files'.
    public internal(set) var lastSeq: UInt64 = 0
    public internal(set) var recovery = Recovery()
    var segments: [Segment] = []
    var index: [IndexEntry] = []
    let indexStride: UInt64 = 256
    /// The files under the journal, and its clock and entropy.
    let environment: JournalEnvironment
    var storage: any JournalStorage { environment.storage }
    /// The newest segment, open for appends (none when read-only, or after a failed truncation).
    var file: StorageFile? = nil
    /// Held while this journal is open for appending: one writer per journal, ever.
    var lockFile: StorageFile? = nil
    var segmentSize = 0
    /// How much of the newest segment the last sync that succeeded covered: what a failed sync cuts
    /// the segment back to.
    var syncedSize = 0
    var unsynced = false
    /// The newest segment's descriptors for syncs run on other threads (``takeSyncTicket()``).
    var syncLanes = SyncLanes()
    /// How long this journal's syncs of its newest segment took, run here (``sync()``); a sync run on a
    /// lane thread is timed by that thread's host.
    package internal(set) var syncTimes = SyncTimes()
    /// The newest records, for the common replay (gap repair) without touching the disk.
    var tail = RecordTail()
    private let tailCapacity: Int
    /// The tail's budget in bytes of records: with large actions, a count alone would let the cache
    /// take gigabytes.
    private let tailByteCapacity: Int
    /// Bytes the tail cache holds now.
    public var cachedBytes: Int { tail.bytes }
    /// The segment last read from disk. Segments only grow by appends (a truncation cuts the copy with
    /// the segment), so the copy stays valid for every record inside its length.
    var readCache: (segment: Int, bytes: [UInt8])? = nil
    /// Sealed segments opened from their index files whose records have not all been checked yet: a
    /// read checks each record it takes from one (``Journal/walk(from:onDisk:_:)``).
    var unchecked: Set<Int> = []
    /// How far reads have checked an unchecked segment from its start, record after record: when they
    /// reach its end, its index file is compared with what they found and the segment is checked.
    var checking: SegmentCheck? = nil
    /// A checkpoint is due after this many records even within one segment (``checkpointDue(head:)``).
    package var checkpointEveryRecords: UInt64 = Journal.defaultCheckpointEveryRecords
    /// The seq of the newest checkpoint kept, and how many segments the journal had then.
    var checkpointedThrough: UInt64 = 0
    var checkpointedSegments = 0

    /// Opens (or creates) the journal in `directory`. With `repair: false` nothing is changed on disk:
    /// a torn tail is reported in `recovery` and left as it is (for `zflux journal verify`). With
    /// `opensEpoch: false` (a dispatcher with a standby) the opening serves the epoch recorded, and only
    /// ``beginEpoch(_:)`` starts a new one.
    public convenience init(
        directory: String, policy: FsyncPolicy = Defaults.fsync, segmentBytes: Int = Defaults.segmentBytes, repair: Bool = true,
        opensEpoch: Bool = true,
        tailCapacity: Int = 65_536, tailByteCapacity: Int = 64 << 20
    ) throws {
        try self.init(
            directory: directory, policy: policy, segmentBytes: segmentBytes, repair: repair, opensEpoch: opensEpoch,
            tailCapacity: tailCapacity, tailByteCapacity: tailByteCapacity, environment: .live)
    }

    /// The same, on the storage (and with the clock and entropy) of `environment`: the simulator's disk.
    package init(
        directory: String, policy: FsyncPolicy = Defaults.fsync, segmentBytes: Int = Defaults.segmentBytes, repair: Bool = true,
        opensEpoch: Bool = true, tailCapacity: Int = 65_536, tailByteCapacity: Int = 64 << 20, environment: JournalEnvironment
    ) throws {
        self.environment = environment
        self.tailCapacity = max(tailCapacity, 1)
        self.tailByteCapacity = max(tailByteCapacity, 1)
        self.directory = directory
        self.policy = policy
        self.segmentBytes = max(segmentBytes, 4096)
        // The journal holds every action: this user's alone (0700, files 0600), whatever the umask.
        try environment.storage.makeDirectory(directory, private: repair)
        if repair { try lock() }
        let names = try environment.storage.list(directory).filter { $0.hasSuffix(".journal") }.sorted()
        for name in names {
            guard let first = UInt64(name.dropLast(".journal".count)) else { continue }
            segments.append(Segment(firstSeq: first, path: directory + "/" + name))
            // Segments written by an older zflux were 0644.
            if repair { environment.storage.restrict(directory + "/" + name) }
        }
        try scan(repair: repair)
        if repair { try openForAppend() }
        noteCheckpoints(repair: repair)
        try openHistory(repair: repair, opensEpoch: opensEpoch)
        try openClientScope(repair: repair)
    }

    deinit {
        if let file { storage.close(file) }
        for lane in syncLanes.files + syncLanes.retired { storage.close(lane) }
        if let lockFile { storage.close(lockFile) }  // releases the lock
    }

    /// The oldest seq the journal holds (above 1 once older segments were removed).
    public var firstSeq: UInt64 { segments.first?.firstSeq ?? 1 }

    /// The secret that scopes client ids to authenticated keys (``ClientScope``), kept in `CLIENT-SCOPE`
    /// beside the segments (0600, made when the journal is created): the journaled scoped ids must mean
    /// the same after a restart. Read-only opens that find no file report a zero scope.
    public internal(set) var clientScope = ClientScope(k0: 0, k1: 0)

    private func openClientScope(repair: Bool) throws {
        let path = directory + "/CLIENT-SCOPE"
        if let bytes = storage.contentsIfAny(path), bytes.count == ClientScope.encodedSize, let scope = ClientScope(decoding: bytes) {
            clientScope = scope
            return
        }
        guard repair else { return }
        let scope = ClientScope(k0: environment.randomWord(), k1: environment.randomWord())
        try recordClientScope(scope)
        clientScope = scope
    }

    /// Replaces `CLIENT-SCOPE` whole, durably (the file and the directory entry).
    func recordClientScope(_ scope: ClientScope) throws {
        var bytes: [UInt8] = []
        scope.encode(into: &bytes)
        try storage.writeWhole(bytes, to: directory + "/CLIENT-SCOPE")
        try syncDirectory()
    }

    /// The history this opening of the journal serves (``HistoryID``): the cluster id kept in `HISTORY`
    /// beside the segments (made when the journal is created, copied with it) and a new epoch, later
    /// than the one recorded there. Read-only opens (`repair: false`) report the recorded one.
    public internal(set) var history = HistoryID(rawValue: 0)

    private func openHistory(repair: Bool, opensEpoch: Bool) throws {
        let path = directory + "/HISTORY"
        var cluster: UInt32 = 0, previous: UInt64 = 0
        if let bytes = storage.contentsIfAny(path), let text = String(validating: bytes, as: UTF8.self) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 2 else { continue }
                if parts[0] == "cluster" { cluster = UInt32(parts[1], radix: 16) ?? 0 }
                if parts[0] == "epoch" { previous = UInt64(parts[1]) ?? 0 }
            }
        }
        var random = JournalRandom(word: environment.randomWord)
        guard repair, opensEpoch else {
            // Read-only, or a dispatcher with a standby: its epochs come from winning the lease alone
            // (``beginEpoch(_:)``). A new journal still needs its cluster id, for a first leader to serve.
            if repair && cluster == 0 {
                history = HistoryID(cluster: HistoryID.newCluster(using: &random), epoch: 0)
                try recordHistory(history)
                return
            }
            history = HistoryID(cluster: cluster, epoch: previous)
            return
        }
        history = DispatcherBoot.history(cluster: cluster, previousEpoch: previous, wallNanoseconds: environment.wallNanoseconds()) {
            HistoryID.newCluster(using: &random)
        }
        // Durable before anything of this epoch goes out: a later opening must pick a later epoch.
        try recordHistory(history)
    }

    /// Replaces `HISTORY` whole with `history`'s cluster and epoch, durably (the file and the directory entry).
    func recordHistory(_ history: HistoryID) throws {
        let text =
            "# zflux journal history: stores refuse a journal of another cluster, and rebuild when one goes back\n"
            + "cluster \(String(history.cluster, radix: 16))\nepoch \(history.epoch)\n"
        try storage.writeWhole(Array(text.utf8), to: directory + "/HISTORY")
        try syncDirectory()
    }

    /// Writes `actions` (the next seqs, in order): ``append(_:)-([StampedRecords])`` of their records.
    public func append(_ actions: [Message]) throws { try append([StampedRecords(actions)]) }

    /// Writes the records of `bursts` (the next seqs, in order) as they are: their bytes are the
    /// journal's. When the disk has no room (``JournalError/isOutOfSpace``) the append is undone whole,
    /// on disk and in memory, and the error thrown: the journal is as it was, and the same records can
    /// be appended again later.
    package func append(_ bursts: [StampedRecords]) throws {
        let before = (lastSeq: lastSeq, index: index.count, segments: segments.count, segmentSize: segmentSize)
        do {
            for burst in bursts where !burst.isEmpty { try appendRecords(burst) }
        } catch let error as JournalError where error.isOutOfSpace {
            try undoAppend(lastSeq: before.lastSeq, indexCount: before.index, segmentCount: before.segments, segmentSize: before.segmentSize)
            throw error
        }
    }

    /// Puts the journal back as it was before an append that failed part-way: the segments it opened
    /// are removed, the one it was writing is cut back to its length, and the records it remembered
    /// are forgotten.
    private func undoAppend(lastSeq before: UInt64, indexCount: Int, segmentCount: Int, segmentSize size: Int) throws {
        let rolled = segments.count > segmentCount
        if rolled {
            if let file { storage.close(file) }
            file = nil
            for segment in segments[segmentCount...] {
                _ = try? storage.remove(segment.path)
                _ = try? storage.remove(SegmentIndex.path(segment: segment.path))
            }
            segments.removeLast(segments.count - segmentCount)
            let current = segments[segments.count - 1].path
            // Appended to again: the index sealed when it was rolled past would claim less than it holds.
            _ = try? storage.remove(SegmentIndex.path(segment: current))
            file = try storage.open(current, create: false, truncate: false)
        }
        guard let file else { throw JournalError("the journal in \(directory) is not open for appending: open it again") }
        try storage.truncate(file, to: size)
        segmentSize = size
        // Removed segments were rolled past, which synced the one now newest whole.
        syncedSize = rolled ? size : min(syncedSize, size)
        lastSeq = before
        index.removeLast(index.count - indexCount)
        tail.removeRecords(after: before)
        readCache = nil
    }

    /// One burst's records, written in as few writes as its segment rolls (and, under `always`, its
    /// syncs) allow.
    private func appendRecords(_ burst: StampedRecords) throws {
        // The bytes of `burst` from here on are not written yet.
        var pending = 0
        for record in burst.records {
            precondition(record.seq == lastSeq + 1, "journal records are appended in seq order")
            let start = record.offset - pending
            if segmentSize + start > 0 && segmentSize + start >= segmentBytes {
                try write(burst.bytes[pending..<record.offset])
                pending = record.offset
                try roll(firstSeq: record.seq)
            }
            if (record.seq - 1) % indexStride == 0 || segmentSize + record.offset - pending == 0 {
                index.append(IndexEntry(seq: record.seq, segment: segments.count - 1, offset: segmentSize + record.offset - pending))
            }
            lastSeq = record.seq
            if policy == .always {
                try write(burst.bytes[pending..<(record.offset + record.size)])
                pending = record.offset + record.size
                try sync()
            }
        }
        try write(burst.bytes[pending...])
        tail.append(burst, capacity: tailCapacity, byteCapacity: tailByteCapacity)
    }

    public func commit() throws {
        if policy == .batch && unsynced { try sync() }
    }

    public func read(from: UInt64, limit: Int) throws -> [Message] {
        let from = max(from, 1)
        guard from <= lastSeq, limit > 0 else { return [] }
        var result: [Message] = []
        try walk(from: from) { _, bytes, body in
            // Checked when the journal was opened or written: decode without a second checksum.
            result.append(try ReplayBatch.decodeEntry(bytes[body]))
            return result.count < limit
        }
        return result
    }

    /// A REPLAY-BATCH payload of at most `limit` actions from `from` on, closed once they pass `maxBytes`
    /// (a larger single action travels alone); nil past the end. Records on disk are copied into it as
    /// they are (a record's body is a batch entry), so serving a replay decodes and encodes nothing.
    public func replayBatch(from: UInt64, limit: Int, maxBytes: Int) throws -> ReplayPlan.Batch? {
        let from = max(from, 1)
        guard from <= lastSeq, limit > 0 else { return nil }
        var payload: [UInt8] = [0, 0, 0, 0]
        var count = 0
        var last: UInt64 = 0
        try walk(from: from) { seq, bytes, body in
            guard count == 0 || payload.count - 4 + body.count + 12 <= maxBytes else { return false }
            payload.append(contentsOf: bytes[body])
            count += 1
            last = seq
            return count < limit
        }
        guard count > 0 else { return nil }
        payload.writeLittleEndian(UInt32(count), at: 0)
        return ReplayPlan.Batch(payload: payload, count: count, last: last)
    }
}
