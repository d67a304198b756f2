#if canImport(Glibc)
    import Glibc
#endif

/// Syncs that run on other threads while the journal's own thread keeps appending: the dispatcher's
/// pipelined group commit (`DispatcherLoop`). A burst written while a sync is in flight gets a sync of
/// its own at once, on another lane, instead of waiting for the one in flight to return first.
///
/// Each lane is a descriptor of its own for the newest segment, opened when the segment is (or, for a
/// segment the journal found, after a sync through the journal's own descriptor). Linux reports a
/// failed writeback once to each open file description that was open when it failed: descriptors that
/// shared one (`dup`) could let one sync see the error and another, covering the same pages, return
/// success. With a description per lane, every sync that covers a lost page fails.
extension Journal {
    /// How many syncs may be in flight at once.
    package static let syncLaneCount = 2

    /// The lanes of the newest segment, and those of segments rolled past while a sync on them was in
    /// flight (closed when it returns).
    struct SyncLanes {
        /// Set by ``useSyncLanes()``: each new segment opens its lanes as it is made.
        var enabled = false
        var segment: String?
        var files: [StorageFile] = []
        var retired: [StorageFile] = []
        var inFlight: [Int32: Int] = [:]
        /// Bumped by whatever cuts records the journal had synced (a failed sync, a standby's drop): a
        /// ticket taken before proves nothing of the journal as it is now. (An append undone after a
        /// full disk cuts only bytes written after every ticket was taken: tickets are taken between
        /// appends.)
        var cuts: UInt64 = 0
    }

    /// A sync handed to another thread: `run()` there, then ``syncReturned(_:errno:)`` here.
    package struct SyncTicket: Sendable {
        /// The journal is durable through this seq once the sync returns without an error.
        package let seq: UInt64
        package let lane: Int
        /// The lane's own descriptor of the segment: what the sync goes through.
        package let file: StorageFile
        let segment: String
        let size: Int
        let cuts: UInt64

        /// The fdatasync, on any thread: 0, or the errno it failed with.
        package func run() -> Int32 {
            while fdatasync(file.handle) != 0 {
                guard errno == EINTR else { return errno }
            }
            return 0
        }
    }

    /// Hands syncs to other threads from now on (``takeSyncTicket(lane:)``): the newest segment's lanes
    /// open now, and each new segment's as it is made, before anything is written to it. False, and
    /// nothing changes, for a journal that syncs only in place: a policy other than `batch` (`always`
    /// syncs each record as it writes it), or storage that cannot have syncs in flight
    /// (``JournalStorage/syncsInFlight``).
    package func useSyncLanes() throws -> Bool {
        guard policy == .batch, storage.syncsInFlight, file != nil else { return false }
        syncLanes.enabled = true
        try openSyncLanes()
        return true
    }

    /// Opens the newest segment's lanes. Bytes written before a lane was open may have failed their
    /// writeback unseen by it: they are synced through the journal's own descriptor first.
    func openSyncLanes() throws {
        let segment = segments[segments.count - 1].path
        guard syncLanes.segment != segment else { return }
        if unsynced { try sync() }
        retireSyncLanes()
        syncLanes.files = try (0..<Journal.syncLaneCount).map { _ in try storage.open(segment, create: false, truncate: false) }
        syncLanes.segment = segment
    }

    /// A sync of what the newest segment holds, for `lane` (below ``syncLaneCount``), to be run on
    /// another thread; nil when it holds nothing unsynced. Only after ``useSyncLanes()`` said yes.
    package func takeSyncTicket(lane: Int) throws -> SyncTicket? {
        precondition(lane >= 0 && lane < Journal.syncLaneCount, "lane \(lane) of \(Journal.syncLaneCount)")
        precondition(syncLanes.enabled, "tickets only for a journal that uses sync lanes")
        guard file != nil else { throw JournalError("the journal in \(directory) is not open for appending: open it again") }
        let segment = segments[segments.count - 1].path
        // (After a cut that reopened the segment, say.)
        if syncLanes.segment != segment { try openSyncLanes() }
        guard unsynced else { return nil }
        let laneFile = syncLanes.files[lane]
        syncLanes.inFlight[laneFile.handle, default: 0] += 1
        return SyncTicket(seq: lastSeq, lane: lane, file: laneFile, segment: segment, size: segmentSize, cuts: syncLanes.cuts)
    }

    /// A ticket's sync has returned with `code` (0: success). On success what it covered counts as
    /// synced, and the result is the seq it proved durable (nil: none, the segment was cut back since
    /// the ticket was taken). On a failure the journal does what a failed sync in place does (`sync()`):
    /// it cuts the newest segment back to what the last good sync covered, takes no more appends, and
    /// throws.
    package func syncReturned(_ ticket: SyncTicket, errno code: Int32) throws -> UInt64? {
        let left = (syncLanes.inFlight[ticket.file.handle] ?? 0) - 1
        precondition(left >= 0, "a ticket returns once: lane \(ticket.lane) of \(ticket.segment)")
        syncLanes.inFlight[ticket.file.handle] = left == 0 ? nil : left
        if left == 0, let retired = syncLanes.retired.firstIndex(of: ticket.file) {
            storage.close(syncLanes.retired.remove(at: retired))
        }
        guard code == 0 else {
            let error = JournalError("fdatasync \(ticket.segment) failed: \(String(cString: strerror(code)))", code: code)
            if !environment.brokenRules.contains(.trustsFailedFsync), let file { giveUpAppending(file) }
            throw error
        }
        guard ticket.cuts == syncLanes.cuts else { return nil }
        // A ticket of a segment rolled past proves its seq too (the roll synced the rest in place).
        guard file != nil, ticket.segment == syncLanes.segment, ticket.size > syncedSize else { return ticket.seq }
        precondition(ticket.size <= segmentSize, "a segment only grows between cuts: synced \(ticket.size) of \(segmentSize)")
        syncedSize = ticket.size
        unsynced = segmentSize > syncedSize
        return ticket.seq
    }

    /// The lanes of a segment the journal rolls past (or gives up): each closes now, or when the sync in
    /// flight on it returns.
    func retireSyncLanes() {
        for lane in syncLanes.files {
            if syncLanes.inFlight[lane.handle] == nil { storage.close(lane) } else { syncLanes.retired.append(lane) }
        }
        syncLanes.files = []
        syncLanes.segment = nil
    }

    /// After a failed sync: the newest segment is cut back to what the last good sync covered and the
    /// journal takes no more appends until it is opened again.
    func giveUpAppending(_ file: StorageFile) {
        try? storage.truncate(file, to: syncedSize)
        try? storage.sync(file)
        storage.close(file)
        self.file = nil
        syncLanes.cuts += 1
        retireSyncLanes()
    }
}
