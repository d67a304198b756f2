import Examples
import FluxCore
import Foundation
import Logging
import Testing

@testable import Dispatcher
@_spi(Simulation) @testable import NodeCores

/// The dispatcher's checkpoint of its schedule book, kept beside a real journal on disk: what a start
/// reads instead of the whole journal, and what it does with one it cannot trust.
@Suite("Dispatcher checkpoints: a start reads the newest valid checkpoint and the journal after it")
struct CheckpointTests {
    static let second: Int64 = 1_000_000_000

    /// A world whose sync returns at once (the journal's own, under `fsync none`).
    final class ImmediateIO: DispatcherIO {
        func monotonicMilliseconds() -> UInt64 { 1_000 }
        func time() -> NodeTime { NodeTime(milliseconds: 1_000, wallNanoseconds: 1_000_000_000) }
        func send(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> Bool {
            if route == .replay { replayed.append(message) }
            return true
        }
        func publish(_ message: Message) {}
        func sync(through seq: UInt64) throws -> Bool { true }
        func keepQuarantine(_ entries: [Quarantine]) throws {}
        func outOfSpace(_ error: any Error) -> String? { nil }
        func verifyLeadership(claim: String) {}
        func steppedDown(reason: String) {}
        func statusFacts() -> DispatcherStatusFacts { DispatcherStatusFacts(pid: 1, subscribers: 0) }
        /// What was sent on the replay route, in order.
        var replayed: [Message] = []
        func deliver(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> QueuedBytes.Delivery {
            if route == .replay { replayed.append(message) }
            return .sent
        }
        /// What the stores need, as a test says; nil: not known.
        var needs: [JournalRetention.Need]? = nil
        func storeNeeds() -> [JournalRetention.Need]? { needs }
    }

    /// Collects what is logged at warning and above.
    final class Warnings: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        var all: [String] { lock.withLock { lines } }
        func add(_ line: String) { lock.withLock { lines.append(line) } }
        var logger: Logger {
            Logger(label: "checkpoint-tests") { _ in Handler(sink: self) }
        }
        struct Handler: LogHandler {
            let sink: Warnings
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .warning
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                sink.add("\(event.message) \(event.metadata.map { "\($0)" } ?? "")")
            }
        }
    }

    let directory = NSTemporaryDirectory() + "zflux-checkpoint-\(UUID().uuidString)"
    let rules = DispatcherRules(apps: [Counter.app()])

    /// Opens the journal and starts a dispatcher on it (checking a checkpoint's book against the whole
    /// journal's), runs `body`, and closes both, releasing the journal's lock.
    @discardableResult
    func withDispatcher<T>(
        _ warnings: Warnings = Warnings(), retainBytes: Int? = nil, storeNeeds: [JournalRetention.Need]? = nil, replayBatchSize: Int = 512,
        _ body: (Journal, DispatcherInterpreter) throws -> T
    ) throws -> T {
        let journal = try Journal(directory: directory, policy: .none, segmentBytes: 4096)
        journal.checkpointEveryRecords = 40
        var rules = rules
        rules.retainBytes = retainBytes
        rules.replayBatchSize = replayBatchSize
        let core = try DispatcherBoot.core(rules: rules, log: journal, now: at(1_000), logger: warnings.logger, crossCheck: { Issue.record("\($0)") })
        // The interpreter holds its world unowned.
        let io = ImmediateIO()
        io.needs = storeNeeds
        return try withExtendedLifetime(io) { try body(journal, DispatcherInterpreter(core: core, log: journal, io: io, logger: warnings.logger)) }
    }

    func at(_ milliseconds: UInt64) -> NodeTime { NodeTime(milliseconds: milliseconds, wallNanoseconds: Int64(milliseconds) * 1_000_000) }

    /// Sequences `count` actions, one per turn: every third a schedule request (an hour away), every
    /// seventh a cancel of an earlier one, the rest the counter's.
    func run(_ interpreter: DispatcherInterpreter, count: Int, clientSeqFrom first: UInt64 = 1) throws {
        let increment = try Counter.app().wirePayload(type: "incrementTapped", argumentsJSON: [])
        for n in 0..<UInt64(count) {
            let clientSeq = first + n
            let message: Message
            if clientSeq % 3 == 0 {
                let request = ScheduleRequest(
                    id: "s\(clientSeq)", app: "counter", type: "incrementTapped", payload: increment, atNanoseconds: nil,
                    afterNanoseconds: 3600 * Self.second)
                message = Message(
                    topic: Schedules.topic, header: Header(kind: .dispatch, clientID: 9, clientSeq: clientSeq, actionType: Schedules.scheduleType),
                    payload: try WireCodec().encode(request))
            } else if clientSeq % 7 == 0 {
                message = Message(
                    topic: Schedules.topic, header: Header(kind: .dispatch, clientID: 9, clientSeq: clientSeq, actionType: Schedules.cancelType),
                    payload: try WireCodec().encode(ScheduleCancel(app: "counter", id: "s\(clientSeq - 4)")))
            } else {
                message = Message(
                    topic: "counter", header: Header(kind: .dispatch, clientID: 9, clientSeq: clientSeq, actionType: "incrementTapped"),
                    payload: increment)
            }
            interpreter.newTurn()
            interpreter.core.receivedIntake(.success(message), from: [1], now: at(2_000 + clientSeq))
            interpreter.core.endOfBurst()
            try interpreter.carryOut()
        }
    }

    /// The book the whole journal gives, read record by record.
    func wholeBook(_ journal: Journal) throws -> [ScheduleBook.Entry] {
        var book = ScheduleBook()
        try journal.forEachScheduling(from: 1) { book.note($0.topic, header: $0.header, payload: $0.payload) }
        return book.pending()
    }

    @Test("checkpoints are written as the journal rolls, the newest two kept; a start from one holds the book the whole journal gives")
    func startFromCheckpoint() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (expected, kept, head) = try withDispatcher { journal, interpreter in
            try run(interpreter, count: 400)
            return (try wholeBook(journal), journal.checkpoints(), journal.lastSeq)
        }
        #expect(expected.count > 50, "the journal makes schedules: \(expected.count)")
        #expect(kept.count == 2, "\(kept.map(\.name))")
        #expect(kept.first.map { $0.seq + 40 > head } == true, "the newest covers nearly all: \(kept.map(\.seq)), head \(head)")
        let warnings = Warnings()
        let restored = try withDispatcher(warnings) { _, interpreter in interpreter.core.schedules.pending() }
        #expect(restored == expected)
        #expect(warnings.all.isEmpty, "\(warnings.all)")
    }

    @Test("a start passes over a torn or damaged checkpoint for the one before, and over both for the whole journal, saying so")
    func damagedCheckpoints() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (expected, kept) = try withDispatcher { journal, interpreter in
            try run(interpreter, count: 300)
            return (try wholeBook(journal), journal.checkpoints())
        }
        try #require(kept.count == 2)
        // The newest torn: its last bytes never reached the disk.
        try Data(kept[0].bytes.dropLast(5)).write(to: URL(fileURLWithPath: kept[0].name))
        var warnings = Warnings()
        let (restored, used) = try withDispatcher(warnings) { journal, interpreter in
            (interpreter.core.schedules.pending(), DispatcherBoot.newestCheckpoint(of: journal, logger: Warnings().logger)?.seq)
        }
        #expect(restored == expected)
        #expect(warnings.all.count == 1 && warnings.all.first?.contains("torn") == true, "\(warnings.all)")
        #expect(used == kept[1].seq)
        // And the one before it damaged: one byte flipped in its body.
        var older = kept[1].bytes
        older[older.count / 2] ^= 0x40
        try Data(older).write(to: URL(fileURLWithPath: kept[1].name))
        warnings = Warnings()
        let scanned = try withDispatcher(warnings) { _, interpreter in interpreter.core.schedules.pending() }
        #expect(scanned == expected)
        #expect(warnings.all.contains { $0.contains("damaged") }, "\(warnings.all)")
    }

    @Test("a checkpoint past a tail that was lost and sequenced again is passed over: its record is not the one it names")
    func resequencedTail() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let newest = try withDispatcher { journal, interpreter in
            try run(interpreter, count: 100)
            return try #require(journal.checkpoints().first)
        }
        // The tail from a few records before the checkpoint is cut (as a power cut under fsync none
        // would), and other actions take its seqs. The opening removes the checkpoint past its newest
        // record; a copy of it put back (a backup restored, say) names a record that is not there.
        _ = try Journal.truncate(directory: directory, fromSeq: newest.seq - 3)
        let expected = try withDispatcher { journal, interpreter in
            #expect(!journal.checkpoints().contains { $0.seq == newest.seq }, "\(journal.checkpoints().map(\.name))")
            #expect(
                journal.recovery.removedCheckpoints.contains { newest.name.hasSuffix($0) },
                "the opening says which it removed (the dispatcher warns): \(journal.recovery.removedCheckpoints)")
            try run(interpreter, count: 10, clientSeqFrom: 10_000)
            #expect(journal.lastSeq >= newest.seq)
            return try wholeBook(journal)
        }
        for stale in try FileManager.default.contentsOfDirectory(atPath: directory) where stale.hasPrefix("CHECKPOINT-") {
            try FileManager.default.removeItem(atPath: directory + "/" + stale)
        }
        try Data(newest.bytes).write(to: URL(fileURLWithPath: newest.name))
        let warnings = Warnings()
        let restored = try withDispatcher(warnings) { _, interpreter in interpreter.core.schedules.pending() }
        #expect(restored == expected)
        #expect(warnings.all.contains { $0.contains("sequenced again") }, "\(warnings.all)")
    }

    @Test(
        "retention lets the oldest segments go past retain_mb, never what the older checkpoint or a store still needs; a start after it holds every pending schedule, requested in segments since removed"
    )
    func retentionKeepsWhatIsNeeded() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Stores that cannot be read here hold everything.
        let unknown = try withDispatcher(retainBytes: 8192) { journal, interpreter in
            try run(interpreter, count: 300)
            #expect(interpreter.retention?.contains("the stores") == true, "\(interpreter.retention ?? "nil")")
            return journal.firstSeq
        }
        #expect(unknown == 1)
        // A store whose snapshot is at seq 200 holds from 201 on.
        let (first, expected, head) = try withDispatcher(retainBytes: 8192, storeNeeds: [.init(from: 201, who: "store counter")]) {
            journal, interpreter in
            try run(interpreter, count: 300, clientSeqFrom: 301)
            #expect(journal.firstSeq > 1 && journal.firstSeq <= 201, "from \(journal.firstSeq)")
            #expect(interpreter.retention?.contains("store counter") == true, "\(interpreter.retention ?? "nil")")
            // Reads across what is left still work, and so do appends.
            #expect(try journal.read(from: journal.firstSeq, limit: 5).first?.header.seq == journal.firstSeq)
            return (journal.firstSeq, interpreter.core.schedules.pending(), journal.lastSeq)
        }
        #expect(expected.contains { $0.requestSeq < first }, "a pending schedule was requested in a segment since removed")
        let warnings = Warnings()
        let (restored, reopenedFirst, reopenedHead) = try withDispatcher(warnings) { journal, interpreter in
            (interpreter.core.schedules.pending(), journal.firstSeq, journal.lastSeq)
        }
        #expect(reopenedFirst == first && reopenedHead == head)
        #expect(restored == expected, "the checkpoint holds the schedules whose requests are gone")
        #expect(warnings.all.isEmpty, "\(warnings.all)")
        // What `zflux schedules` shows of a stopped cluster, and what `journal compact` keeps for: the
        // same book, read the same way.
        let offline = try Journal(directory: directory, repair: false)
        #expect(try DispatcherBoot.schedules(of: offline, logger: Warnings().logger).book.pending() == expected)
        let compacted = try Journal.compact(directory: directory, keepFrom: head)
        #expect(compacted.firstSeq <= head && !compacted.removed.isEmpty, "\(compacted)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("CHECKPOINT-") }
        #expect(names.allSatisfy { (UInt64($0.dropFirst("CHECKPOINT-".count)) ?? 0) + 1 >= compacted.firstSeq }, "unusable checkpoints go: \(names)")
    }

    @Test(
        "journal fill writes a pair's two journals as a dispatcher and its standby would: the same files byte for byte, an index file per sealed segment, and checkpoints a start takes"
    )
    func fillWritesWhatADispatcherWould() throws {
        let other = directory + "-standby"
        defer { for path in [directory, other] { try? FileManager.default.removeItem(atPath: path) } }
        let payload = try Counter.app().wirePayload(type: "incrementTapped", argumentsJSON: [])
        var heads: [UInt64] = []
        let filled = try Journal.fill(
            directories: [directory, other], count: 10_000, topic: Array("counter".utf8), actionType: "incrementTapped", payload: payload,
            segmentBytes: 32_768
        ) { heads.append($0) }
        // Batches of 4,096, each ending in a checkpoint once the journal has rolled.
        #expect(heads == [4096, 8192, 10_000])
        #expect(filled.lastSeq == 10_000 && filled.segments > 10 && filled.checkpoints == [10_000, 8192], "\(filled)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0 != "LOCK" }.sorted()
        #expect(try FileManager.default.contentsOfDirectory(atPath: other).filter { $0 != "LOCK" }.sorted() == files)
        for name in files where name != "HISTORY" {
            #expect(
                FileManager.default.contents(atPath: directory + "/" + name) == FileManager.default.contents(atPath: other + "/" + name), "\(name)")
        }
        #expect(files.filter { $0.hasSuffix(".index") }.count == filled.segments - 1, "every segment rolled past has its index file")
        for path in [directory, other] {
            let journal = try Journal(directory: path, repair: false)
            #expect(journal.history.cluster == filled.history.cluster && journal.recovery.badIndexFiles.isEmpty)
            #expect(try journal.read(from: 9_999, limit: 2).map(\.header.history) == [filled.history.rawValue, filled.history.rawValue])
            let warnings = Warnings()
            #expect(DispatcherBoot.newestCheckpoint(of: journal, logger: warnings.logger)?.seq == 10_000 && warnings.all.isEmpty, "\(warnings.all)")
        }
        // A start from it: the checkpoint's book (empty) is the whole journal's.
        let restored = try withDispatcher { _, interpreter in interpreter.core.head }
        #expect(restored == 10_000)
        #expect(throws: JournalError.self) {
            try Journal.fill(
                directories: [other], count: 1, topic: Array("counter".utf8), actionType: "incrementTapped", payload: payload, segmentBytes: 4096)
        }
        // A schedule's request is refused before anything is written.
        let untouched = directory + "-schedules"
        #expect(throws: JournalError.self) {
            try Journal.fill(
                directories: [untouched], count: 1, topic: Array(Schedules.topic.utf8), actionType: Schedules.scheduleType, payload: [],
                segmentBytes: 4096)
        }
        #expect(!FileManager.default.fileExists(atPath: untouched))
    }
}
