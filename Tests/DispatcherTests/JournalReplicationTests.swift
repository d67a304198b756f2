import FluxCore
import Foundation
import NodeCores
import Testing

@testable import Journaling

/// An action of `client` stamped with the history `history`.
func stamped(_ seq: UInt64, _ history: UInt64, client: UInt64 = 7) -> Message {
    var message = action(seq, client: client)
    message.header.history = history
    return message
}

/// Checks that `journal` holds exactly `expected` (consecutive, from its first seq) through every way of reading it.
func expectHolds(_ journal: Journal, _ expected: [Message], sourceLocation: SourceLocation = #_sourceLocation) throws {
    let first = expected.first?.header.seq ?? journal.firstSeq
    #expect(journal.lastSeq == first + UInt64(expected.count) - 1, sourceLocation: sourceLocation)
    #expect(try journal.read(from: first, limit: expected.count + 10) == expected, sourceLocation: sourceLocation)
    var dispatches: [UInt64] = []
    try journal.forEachDispatch(from: first) { client, clientSeq, seq in
        #expect(client == expected[Int(seq - first)].header.clientID && clientSeq == seq, sourceLocation: sourceLocation)
        dispatches.append(seq)
    }
    #expect(dispatches == expected.map(\.header.seq), sourceLocation: sourceLocation)
    var replayed: [Message] = []
    var next = first
    while let batch = try journal.replayBatch(from: next, limit: 64, maxBytes: 1 << 20) {
        replayed += try ReplayBatch.decode(batch.payload)
        next = batch.last + 1
    }
    #expect(replayed == expected, sourceLocation: sourceLocation)
    #expect(try journal.read(from: journal.lastSeq + 1, limit: 5).isEmpty, sourceLocation: sourceLocation)
}

func segmentFiles(_ dir: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".journal") }.sorted()
}

func segmentFirstSeqs(_ dir: String) throws -> [UInt64] {
    try segmentFiles(dir).compactMap { UInt64($0.dropLast(".journal".count)) }
}

@Suite("Journal replication")
struct JournalReplicationTests {
    /// A journal of actions 1…600 in 4 KiB segments, closed again; and the first seqs of its segments.
    func sixHundred(_ dir: String) throws -> [UInt64] {
        let journal = try Journal(directory: dir, segmentBytes: 4096)
        try journal.append((1...600).map { action($0) })
        try journal.commit()
        let firsts = try segmentFirstSeqs(dir)
        #expect(firsts.count > 10, "4 KiB segments roll")
        return firsts
    }

    /// Where to cut the journal of `sixHundred` whose segments start at `firsts`: inside the first
    /// segment, at a segment's last record, at a segment's first, inside the newest, inside the burst
    /// of 601…620 the test appends (held by the tail cache, in the middle of a segment: a review found
    /// that the cut was taken from the burst's own offsets, which destroyed the records before it), and
    /// everything.
    func cuts(_ firsts: [UInt64]) -> [UInt64] {
        [10, firsts[3] - 1, firsts[3], firsts[firsts.count - 1] + 2, 599, 610, 0]
    }

    @Test(
        "truncate drops every later record across segments; the journal reads, appends, rolls and reopens as the prefix followed by the new records")
    func truncateAcrossSegments() throws {
        let probe = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: probe) }
        for seq in cuts(try sixHundred(probe)) {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let firsts = try sixHundred(dir)
            do {
                let journal = try Journal(directory: dir, segmentBytes: 4096, tailCapacity: 20)
                // Records in the tail cache and in the cached newest segment, as a running dispatcher has them.
                try journal.append((601...620).map { action($0) })
                _ = try journal.read(from: firsts[firsts.count - 1], limit: 1000)
                try journal.truncate(after: seq)
                #expect(journal.lastSeq == seq, "cut after \(seq)")
                #expect(journal.cachedBytes == journal.tail.chunks.reduce(0) { $0 + $1.bytes.capacity })
                #expect(journal.tail.count == journal.tail.chunks.reduce(0) { $0 + $1.count })
                #expect(journal.tail.chunks.allSatisfy { ($0.lastSeq ?? 0) <= seq })
                try expectHolds(journal, (1..<seq + 1).map { action($0) })
                let left = try segmentFirstSeqs(dir)
                #expect(left == firsts.filter { $0 <= seq + 1 }, "later segments deleted, the one holding \(seq + 1) kept")
                let names = try FileManager.default.contentsOfDirectory(atPath: dir)
                #expect(
                    Set(names.filter { $0.hasSuffix(".index") }) == Set(try segmentFiles(dir).dropLast().map { $0 + ".index" }),
                    "sealed segments keep their index files; the newest and the deleted have none")
                try journal.append((seq + 1...seq + 300).map { action($0, client: 9) })
                try journal.commit()
                try expectHolds(journal, (1...seq + 300).map { action($0, client: $0 > seq ? 9 : 7) })
            }
            let reopened = try Journal(directory: dir, segmentBytes: 4096, tailCapacity: 20)
            #expect(reopened.recovery.trimmedBytes == 0 && reopened.recovery.badIndexFiles.isEmpty)
            try expectHolds(reopened, (1...seq + 300).map { action($0, client: $0 > seq ? 9 : 7) })
            let verified = try Journal(directory: dir, repair: false)
            #expect(verified.lastSeq == seq + 300 && verified.recovery.badIndexFiles.isEmpty, "verify finds every record and index file sound")
        }
    }

    @Test("truncating at or past the end changes nothing; below the first seq it is refused; to just before the first seq it empties the journal")
    func truncateBounds() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try sixHundred(dir)
        do {
            let journal = try Journal(directory: dir, segmentBytes: 4096)
            let before = try segmentFiles(dir)
            try journal.truncate(after: 600)
            try journal.truncate(after: 9000)
            #expect(try segmentFiles(dir) == before)
            try expectHolds(journal, (1...600).map { action($0) })
        }
        let compacted = try Journal.compact(directory: dir, keepFrom: 300)
        #expect(compacted.firstSeq > 1)
        let journal = try Journal(directory: dir, segmentBytes: 4096)
        let first = journal.firstSeq
        #expect(first == compacted.firstSeq)
        let error = #expect(throws: JournalError.self) { try journal.truncate(after: first - 2) }
        #expect(error?.description.contains("records before that are gone") == true)
        try expectHolds(journal, (first...600).map { action($0) })
        try journal.truncate(after: first - 1)
        #expect(journal.lastSeq == first - 1 && journal.firstSeq == first)
        #expect(try journal.read(from: first, limit: 10).isEmpty && journal.replayBatch(from: first, limit: 10, maxBytes: 1 << 20) == nil)
        #expect(try journal.history(at: first) == nil)
        try journal.append((first...first + 50).map { action($0, client: 3) })
        try expectHolds(journal, (first...first + 50).map { action($0, client: 3) })
        let readOnly = try Journal(directory: dir, repair: false)
        #expect(throws: JournalError.self, "a read-only open never truncates") { try readOnly.truncate(after: first) }
        #expect(readOnly.lastSeq == first + 50)
    }

    @Test("a crash after any deletion, or after the cut, leaves a journal that opens as a prefix of the old one")
    func crashBetweenSteps() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let firsts = try sixHundred(dir)
        let paths = try segmentFiles(dir).map { dir + "/" + $0 }
        // Newest first, one at a time: every journal on the way is whole.
        for deleted in 1..<paths.count {
            do {
                let journal = try Journal(directory: dir, segmentBytes: 4096)
                // Only the first step of truncate(after: 10), and only so far: then the process dies.
                try journal.deleteSegments(paths[(paths.count - deleted)...])
            }
            let after = try Journal(directory: dir, segmentBytes: 4096)
            let newest = firsts[paths.count - deleted] - 1
            #expect(after.recovery.trimmedBytes == 0)
            try expectHolds(after, (1...newest).map { action($0) })
        }
        // The cut itself, torn: the first segment cut at some byte past the cut of truncate(after: 10).
        do {
            let journal = try Journal(directory: dir, segmentBytes: 4096)
            var offset = 0
            try journal.walk(from: 11) { _, _, body in
                offset = body.lowerBound - JournalRecord.headerSize
                return false
            }
            try journal.cutSegment(paths[0], at: offset + 5)
        }
        let torn = try Journal(directory: dir, segmentBytes: 4096)
        #expect(torn.recovery.trimmedBytes == 5)
        try expectHolds(torn, (1...10).map { action($0) })
    }

    @Test(
        "history(at:) and firstSeqOfRun read the stamps of runs of different histories, from the tail cache and from disk, bounded by the first seq",
        arguments: [10, 65_536])
    func historyRuns(tailCapacity: Int) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = HistoryID(cluster: 0xA1, epoch: 5).rawValue, b = HistoryID(cluster: 0xA1, epoch: 6).rawValue
        let c = HistoryID.leading(cluster: 0xA1, revision: 77).rawValue
        func stamp(_ seq: UInt64) -> UInt64 { seq <= 40 ? a : seq <= 45 ? b : seq <= 1000 ? c : a }
        func check(_ journal: Journal) throws {
            for seq: UInt64 in [1, 40, 41, 45, 46, 700, 1000, 1001, 1002] { #expect(try journal.history(at: seq) == stamp(seq), "at \(seq)") }
            #expect(try journal.history(at: 0) == nil && journal.history(at: 1003) == nil)
            let runs: [(UInt64, UInt64)] = [
                (1, 1), (20, 1), (40, 1), (41, 41), (45, 41), (46, 46), (47, 46), (700, 46), (1000, 46), (1001, 1001), (1002, 1001),
            ]
            for (end, start) in runs { #expect(try journal.firstSeqOfRun(endingAt: end) == start, "run ending at \(end)") }
            #expect(throws: JournalError.self) { try journal.firstSeqOfRun(endingAt: 1003) }
        }
        do {
            let journal = try Journal(directory: dir, segmentBytes: 4096, tailCapacity: tailCapacity)
            try journal.append((1...1002).map { stamped($0, stamp($0)) })
            try check(journal)
        }
        try check(try Journal(directory: dir, segmentBytes: 4096, tailCapacity: tailCapacity))
        _ = try Journal.compact(directory: dir, keepFrom: 300)
        let compacted = try Journal(directory: dir, segmentBytes: 4096, tailCapacity: tailCapacity)
        #expect(compacted.firstSeq > 46 && compacted.firstSeq <= 300)
        #expect(try compacted.firstSeqOfRun(endingAt: 1000) == compacted.firstSeq, "the run is cut where the journal starts")
        #expect(try compacted.history(at: compacted.firstSeq - 1) == nil)
        try compacted.truncate(after: 1000)
        #expect(try compacted.history(at: 1001) == nil && compacted.firstSeqOfRun(endingAt: 1000) == compacted.firstSeq)
    }

    @Test("a standby adopts the leader's cluster and client scope into an empty journal, and keeps them across a reopen")
    func adoptEmpty() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scope = ClientScope(k0: 0x1122_3344_5566_7788, k1: 0x99AA_BBCC_DDEE_FF00)
        let epoch: UInt64
        do {
            let journal = try Journal(directory: dir)
            epoch = journal.history.epoch
            #expect(journal.history.cluster != 0xABCDE && journal.clientScope != scope)
            try journal.adopt(cluster: 0xABCDE, clientScope: scope)
            #expect(journal.history == HistoryID(cluster: 0xABCDE, epoch: epoch) && journal.clientScope == scope)
            let files = try [inode(dir + "/HISTORY"), inode(dir + "/CLIENT-SCOPE")]
            try journal.adopt(cluster: 0xABCDE, clientScope: scope)
            #expect(try [inode(dir + "/HISTORY"), inode(dir + "/CLIENT-SCOPE")] == files, "adopting the same again writes nothing")
            #expect(throws: JournalError.self) { try journal.adopt(cluster: 0, clientScope: scope) }
            #expect(throws: JournalError.self) { try journal.adopt(cluster: 0x100_0000, clientScope: scope) }
            try journal.append([action(1)])
        }
        let recorded = try Journal(directory: dir, repair: false)
        #expect(recorded.history == HistoryID(cluster: 0xABCDE, epoch: epoch) && recorded.clientScope == scope, "the epoch line is kept")
        let reopened = try Journal(directory: dir)
        #expect(reopened.history.cluster == 0xABCDE && reopened.history.epoch > epoch && reopened.clientScope == scope)
        #expect(try reopened.read(from: 1, limit: 5) == [action(1)])
    }

    @Test("a journal holding records of another cluster is refused, with nothing changed; its own cluster may take a scope")
    func adoptRefused() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let journal = try Journal(directory: dir)
        try journal.append((1...3).map { action($0) })
        let (history, scope) = (journal.history, journal.clientScope)
        let files = try ["HISTORY", "CLIENT-SCOPE"].map { try #require(FileManager.default.contents(atPath: dir + "/" + $0)) }
        let other: UInt32 = history.cluster == 0xBEEF ? 0xBEEE : 0xBEEF
        let error = #expect(throws: JournalError.self) { try journal.adopt(cluster: other, clientScope: ClientScope(k0: 1, k1: 2)) }
        #expect(error?.description.contains("belongs to another cluster") == true)
        #expect(error?.description.contains("empty directory") == true)
        #expect(journal.history == history && journal.clientScope == scope)
        #expect(["HISTORY", "CLIENT-SCOPE"].map { FileManager.default.contents(atPath: dir + "/" + $0) ?? Data() } == files)
        try journal.adopt(cluster: history.cluster, clientScope: ClientScope(k0: 1, k1: 2))
        #expect(journal.history == history && journal.clientScope == ClientScope(k0: 1, k1: 2))
    }

    @Test("beginEpoch records a later epoch durably, refuses one not past it, and a reopen opens later still")
    func beginEpoch() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let won: HistoryID
        do {
            let journal = try Journal(directory: dir)
            let opened = journal.history
            for epoch in [opened.epoch, opened.epoch - 1, 1 << 40] {
                #expect(throws: JournalError.self, "epoch \(epoch)") { try journal.beginEpoch(epoch) }
            }
            #expect(journal.history == opened)
            won = HistoryID.leading(cluster: opened.cluster, revision: 42)
            #expect(try journal.beginEpoch(won.epoch) == won)
            #expect(journal.history == won && won.isLeadership)
            #expect(throws: JournalError.self) { try journal.beginEpoch(won.epoch) }
            try journal.append([stamped(1, won.rawValue)])
        }
        #expect(try Journal(directory: dir, repair: false).history == won, "recorded in HISTORY")
        let reopened = try Journal(directory: dir)
        #expect(reopened.history.cluster == won.cluster && reopened.history.epoch > won.epoch)
        #expect(throws: JournalError.self, "the recorded epoch is the reopening's now") { try reopened.beginEpoch(won.epoch + 1) }
        let next = HistoryID.leading(cluster: won.cluster, revision: 44)
        #expect(try reopened.beginEpoch(next.epoch) == next && reopened.history == next)
        #expect(try reopened.history(at: 1) == won.rawValue)
    }

    func inode(_ path: String) throws -> UInt {
        var status = stat()
        guard stat(path, &status) == 0 else { throw JournalError("stat \(path) failed") }
        return UInt(status.st_ino)
    }
}
