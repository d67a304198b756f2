import Foundation
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// fdatasync on a thread of its own, so the dispatcher keeps draining its intake and sequencing while
/// the disk syncs (group commit: what is written during one sync goes out with the next).
///
/// The node thread writes records and calls ``request(through:)``; this thread syncs and then signals
/// ``done``, which the node thread polls; ``durable()`` says how far the disk holds. Nothing is published
/// or acknowledged before that, as with a synchronous commit: only the waiting moves off the loop.
///
/// The committer syncs its own duplicate of the segment's descriptor, so the node thread may roll to a
/// new segment (after syncing the old one itself) while a sync of the old one is still running.
final class GroupCommit: @unchecked Sendable {
    // @unchecked: every field below `condition` is read and written with `condition` held.
    /// Signalled after each sync that moved ``durable()``, or failed.
    let done: EventFD
    private let condition = NSCondition()
    private var descriptor: Int32
    private var path: String
    /// The newest seq written (and asked to be made durable), and the newest the disk holds.
    private var written: UInt64
    private var synced: UInt64
    private var failure: String? = nil
    private var stopping = false
    private var thread: Thread? = nil
    private var syncCount = 0
    /// Descriptors replaced by a roll, closed by the sync thread once no sync uses them.
    private var retired: [Int32] = []

    /// How many syncs ran (for tests: several writes share one).
    var syncs: Int {
        condition.lock()
        defer { condition.unlock() }
        return syncCount
    }

    /// `descriptor` is the open segment's (duplicated here); everything through `durable` is on disk.
    init(descriptor: Int32, path: String, durable: UInt64) throws {
        done = try EventFD()
        self.descriptor = dup(descriptor)
        self.path = path
        written = durable
        synced = durable
        guard self.descriptor >= 0 else { throw JournalError.posix("dup", path) }
        let thread = Thread { [self] in run() }
        thread.name = "zflux-journal-sync"
        self.thread = thread
        thread.start()
    }

    deinit { if descriptor >= 0 { _ = Glibc.close(descriptor) } }

    /// Records through `seq` are written: make them durable.
    func request(through seq: UInt64) {
        condition.lock()
        if seq > written {
            written = seq
            condition.broadcast()
        }
        condition.unlock()
    }

    /// The node rolled to a new segment, having synced the old one itself: sync this one from now on.
    func switchSegment(to descriptor: Int32, path: String) throws {
        let copy = dup(descriptor)
        guard copy >= 0 else { throw JournalError.posix("dup", path) }
        condition.lock()
        // A sync of the old descriptor may be running: the sync thread closes it once that is over.
        retired.append(self.descriptor)
        self.descriptor = copy
        self.path = path
        condition.broadcast()
        condition.unlock()
    }

    /// The newest seq the disk holds; throws if a sync failed (the journal can then promise nothing).
    func durable() throws -> UInt64 {
        done.drain()
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw JournalError(failure) }
        return synced
    }

    /// Stops the thread once its sync in progress ends; what is written and not synced stays unsynced.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while thread != nil { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            for old in retired { _ = Glibc.close(old) }
            retired.removeAll()
            if stopping || failure != nil { break }
            guard written > synced else {
                condition.wait()
                continue
            }
            let target = written
            // Retired descriptors are closed only by this thread, so this one stays open through the sync.
            let descriptor = self.descriptor
            let path = self.path
            condition.unlock()
            let ok = fdatasync(descriptor) == 0
            let error = errno
            condition.lock()
            syncCount += 1
            if ok {
                synced = target
            } else {
                failure = "fdatasync \(path) failed: \(String(cString: strerror(error)))"
            }
            done.signal()
        }
        thread = nil
        condition.broadcast()
        condition.unlock()
    }
}
