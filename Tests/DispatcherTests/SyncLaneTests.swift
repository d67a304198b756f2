import Dispatcher
import FluxCore
import Foundation
import Journaling
import Testing

/// The journal's side of the pipelined group commit (``Journal/takeSyncTicket(lane:)``): syncs run on
/// other threads while appends go on, each lane with a descriptor of its own.
@Suite("Journal sync lanes")
struct SyncLaneTests {
    @Test("a second burst gets its own sync while the first is in flight; either may return first, and once both have, nothing is left to sync")
    func overlapping() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let journal = try Journal(directory: dir, policy: .batch)
        #expect(try journal.useSyncLanes())
        try journal.append((1...10).map { action($0) })
        let first = try #require(try journal.takeSyncTicket(lane: 0))
        try journal.append((11...20).map { action($0) })
        let second = try #require(try journal.takeSyncTicket(lane: 1))
        #expect((first.seq, second.seq) == (10, 20))
        // The later sync returns first: it covered the earlier burst's bytes too.
        #expect(second.run() == 0)
        #expect(try journal.syncReturned(second, errno: 0) == 20)
        #expect(try journal.takeSyncTicket(lane: 1) == nil, "all twenty are synced")
        #expect(first.run() == 0)
        #expect(try journal.syncReturned(first, errno: 0) == 10)
        #expect(try journal.takeSyncTicket(lane: 0) == nil)
        try journal.append([action(21)])
        #expect(try journal.takeSyncTicket(lane: 0)?.seq == 21)
    }

    @Test("a lane's sync that fails cuts the segment back to what the last good sync covered, and the journal takes no more appends")
    func failure() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, policy: .batch)
            #expect(try journal.useSyncLanes())
            try journal.append((1...10).map { action($0) })
            let good = try #require(try journal.takeSyncTicket(lane: 0))
            #expect(good.run() == 0)
            #expect(try journal.syncReturned(good, errno: 0) == 10)
            try journal.append((11...20).map { action($0) })
            let failed = try #require(try journal.takeSyncTicket(lane: 1))
            #expect(throws: JournalError.self) { try journal.syncReturned(failed, errno: EIO) }
            #expect(throws: JournalError.self) { try journal.append([action(21)]) }
        }
        let reopened = try Journal(directory: dir, policy: .batch)
        #expect(reopened.lastSeq == 10, "nothing past the last sync that succeeded")
    }

    @Test("a lane rolled past while its sync is in flight stays open until the sync returns, then closes")
    func rolledPast() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let journal = try Journal(directory: dir, policy: .batch, segmentBytes: 4096)
        #expect(try journal.useSyncLanes())
        try journal.append((1...5).map { action($0) })
        let ticket = try #require(try journal.takeSyncTicket(lane: 0))
        try journal.append((6...200).map { action($0) })
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".journal") }.count > 1)
        // The descriptors of this process open on the first segment (other suites' files do not count).
        let first = try #require(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".journal") }.min())
        let descriptors = {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == dir + "/" + first
            }.count
        }
        let before = try descriptors()
        #expect(ticket.run() == 0)
        #expect(try journal.syncReturned(ticket, errno: 0) == 5, "a ticket of a segment rolled past proves its seq")
        #expect(try descriptors() == before - 1, "the rolled-past lane closed once its sync returned")
        // The roll synced the old segment in place; the newest has its own lanes.
        #expect(try journal.takeSyncTicket(lane: 0)?.seq == 200)
    }

    @Test(
        "only a batch journal on real files hands syncs out: always and none sync (or not) in place", arguments: [Journal.FsyncPolicy.always, .none])
    func inPlace(policy: Journal.FsyncPolicy) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let journal = try Journal(directory: dir, policy: policy)
        #expect(try journal.useSyncLanes() == false)
    }
}
