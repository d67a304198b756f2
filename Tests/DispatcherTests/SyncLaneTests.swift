import Dispatcher
import Examples
import FluxCore
import Foundation
import Journaling
import Logging
import NodeCores
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

/// The pipelined group commit (``PipelinedSync``, which `DispatcherLoop` and the simulator run) over a
/// journal on real files whose disk fills up while a sync is in flight.
@Suite("Pipelined group commit: a full disk")
struct PipelinedSyncFullDiskTests {
    /// The real file system, but for appends refused with ENOSPC while `full`.
    final class FillingStorage: JournalStorage {
        let files = FileStorage.shared
        var full = false
        var syncsInFlight: Bool { true }
        func makeDirectory(_ path: String, private: Bool) throws { try files.makeDirectory(path, private: `private`) }
        func list(_ directory: String) throws -> [String] { try files.list(directory) }
        func open(_ path: String, create: Bool, truncate: Bool) throws -> StorageFile { try files.open(path, create: create, truncate: truncate) }
        func append(_ bytes: ArraySlice<UInt8>, to file: StorageFile) throws {
            guard !full else { throw JournalError("write \(file.path) failed: No space left on device", code: ENOSPC) }
            try files.append(bytes, to: file)
        }
        func sync(_ file: StorageFile) throws { try files.sync(file) }
        func truncate(_ file: StorageFile, to length: Int) throws { try files.truncate(file, to: length) }
        func close(_ file: StorageFile) { files.close(file) }
        func read(_ path: String, at offset: Int, count: Int) throws -> [UInt8] { try files.read(path, at: offset, count: count) }
        func size(_ path: String) -> Int? { files.size(path) }
        func truncate(_ path: String, to length: Int) throws { try files.truncate(path, to: length) }
        func syncFile(_ path: String) throws { try files.syncFile(path) }
        func rename(_ from: String, to: String) throws { try files.rename(from, to: to) }
        func remove(_ path: String) throws -> Bool { try files.remove(path) }
        func syncDirectory(_ directory: String) throws { try files.syncDirectory(directory) }
        func restrict(_ path: String) { files.restrict(path) }
        func lock(_ path: String, waiting: Bool) throws -> StorageFile? { try files.lock(path, waiting: waiting) }
    }

    /// Lanes whose syncs return when the test says (``returnSync(lane:)``), or when the loop waits.
    final class ManualLanes: SyncLaneRunner {
        var inFlight: [Int: Journal.SyncTicket] = [:]
        var returned: [SyncOutcome] = []
        var idleLane: Int? { (0..<Journal.syncLaneCount).first { inFlight[$0] == nil } }
        func start(_ ticket: Journal.SyncTicket) { inFlight[ticket.lane] = ticket }
        func returnSync(lane: Int) {
            guard let ticket = inFlight.removeValue(forKey: lane) else { return }
            returned.append((ticket, ticket.run()))
        }
        func takeReturned() -> [SyncOutcome] {
            defer { returned = [] }
            return returned
        }
        func waitForOne() -> [SyncOutcome] {
            if let lane = inFlight.keys.min() { returnSync(lane: lane) }
            return takeReturned()
        }
        func waitForAll() -> [SyncOutcome] {
            while let lane = inFlight.keys.min() { returnSync(lane: lane) }
            return takeReturned()
        }
    }

    /// The loop's world: what it sends, the journal's syncs through the pipeline, a full disk told as the real loop tells it.
    final class LaneIO: DispatcherIO {
        let journal: Journal
        let lanes = ManualLanes()
        let pipelined: PipelinedSync
        weak var interpreter: DispatcherInterpreter?
        var clock: UInt64 = 1_000
        var replies: [String] = []
        init(journal: Journal) {
            self.journal = journal
            pipelined = PipelinedSync(durable: journal.lastSeq)
        }
        func monotonicMilliseconds() -> UInt64 { clock }
        func time() -> NodeTime { NodeTime(milliseconds: clock, wallNanoseconds: Int64(clock) * 1_000_000) }
        func send(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> Bool {
            if route == .intake { replies.append("\(message.kind) \(message.header.clientSeq)") }
            return true
        }
        func publish(_ message: Message) {}
        func sync(through seq: UInt64) throws -> Bool {
            guard let interpreter else { throw JournalError("no interpreter") }
            return try pipelined.sync(through: seq, journal: journal, lanes: lanes, interpreter: interpreter)
        }
        func reportDurable() throws {
            guard let interpreter else { throw JournalError("no interpreter") }
            try pipelined.reportDurable(lanes, journal: journal, to: interpreter)
        }
        func keepQuarantine(_ entries: [Quarantine]) throws {}
        func outOfSpace(_ error: any Error) -> String? { (error as? JournalError).flatMap { $0.isOutOfSpace ? $0.message : nil } }
        func verifyLeadership(claim: String) {}
        func steppedDown(reason: String) {}
        func statusFacts() -> DispatcherStatusFacts { DispatcherStatusFacts(pid: 1, subscribers: 0) }
    }

    func dispatch(_ clientSeqs: ClosedRange<UInt64>, to interpreter: DispatcherInterpreter, io: LaneIO) throws {
        let increment = try Counter.app().wirePayload(type: "incrementTapped", argumentsJSON: [])
        interpreter.newTurn()
        for clientSeq in clientSeqs {
            let message = Message(
                topic: "counter", header: Header(kind: .dispatch, clientID: 9, clientSeq: clientSeq, actionType: "incrementTapped"),
                payload: increment)
            interpreter.core.receivedIntake(.success(message), from: [1], now: io.time())
        }
        interpreter.core.endOfBurst()
        try interpreter.carryOut()
    }

    @Test(
        "the disk fills while a sync is in flight: what it covered is acknowledged when it returns, a new dispatch is refused, what was stamped waits, and all of it is written, synced and acknowledged once there is room"
    )
    func fullWithTicketInFlight() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let storage = FillingStorage()
        var environment = JournalEnvironment.live
        environment.storage = storage
        do {
            let journal = try Journal(directory: dir, policy: .batch, environment: environment)
            #expect(try journal.useSyncLanes())
            let logger = Logger(label: "sync-lanes") { _ in SwiftLogNoOpLogHandler() }
            let io = LaneIO(journal: journal)
            let core = try DispatcherBoot.core(rules: DispatcherRules(apps: [Counter.app()]), log: journal, now: io.time(), logger: logger)
            let interpreter = DispatcherInterpreter(core: core, log: journal, io: io, logger: logger)
            io.interpreter = interpreter

            // Seqs 1-2 written, their sync in flight on lane 0: nothing acknowledged yet.
            try dispatch(1...2, to: interpreter, io: io)
            #expect(io.lanes.inFlight[0]?.seq == 2)
            #expect(io.replies.isEmpty)
            // The disk fills: seq 3 is stamped but cannot be written; it waits (no answer), and no sync
            // is asked for.
            storage.full = true
            try dispatch(3...3, to: interpreter, io: io)
            #expect(journal.lastSeq == 2)
            #expect(interpreter.hasUnwritten)
            #expect(io.lanes.inFlight[1] == nil, "nothing more was written to sync")
            #expect(io.replies.isEmpty)
            // A new dispatch while the disk is full is refused.
            try dispatch(4...4, to: interpreter, io: io)
            #expect(io.replies == ["NACK 4"])
            // The sync in flight returns: what it covered is acknowledged, the full disk notwithstanding.
            io.lanes.returnSync(lane: 0)
            try io.reportDurable()
            #expect(io.replies == ["NACK 4", "ACK 1", "ACK 2"])
            #expect(core.durableHead == 2)
            // Still full: the retry writes nothing, and nothing more is acknowledged.
            io.clock += DispatcherInterpreter.journalRetryMilliseconds
            try interpreter.retryUnwritten()
            #expect(journal.lastSeq == 2 && interpreter.hasUnwritten)
            // Room again: the stamped action is written, goes to a lane, and is acknowledged once it returns;
            // new dispatches are taken again.
            storage.full = false
            io.clock += DispatcherInterpreter.journalRetryMilliseconds
            try interpreter.retryUnwritten()
            #expect(journal.lastSeq == 3 && !interpreter.hasUnwritten)
            let lane = try #require(io.lanes.inFlight.first { $0.value.seq == 3 }?.key)
            #expect(!io.replies.contains("ACK 3"), "not before its sync returns")
            io.lanes.returnSync(lane: lane)
            try io.reportDurable()
            #expect(io.replies.suffix(1) == ["ACK 3"])
            try dispatch(5...5, to: interpreter, io: io)
            for lane in Array(io.lanes.inFlight.keys) { io.lanes.returnSync(lane: lane) }
            try io.reportDurable()
            #expect(io.replies.suffix(1) == ["ACK 5"])
            #expect(core.durableHead == 4)
        }
        // Everything acknowledged is in the journal, in order, as it reopens.
        let reopened = try Journal(directory: dir, policy: .batch)
        var clientSeqs: [UInt64] = []
        try reopened.forEach { clientSeqs.append($0.header.clientSeq) }
        #expect(clientSeqs == [1, 2, 3, 5])
    }
}
