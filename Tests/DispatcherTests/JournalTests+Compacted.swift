import Dispatcher
import FluxCore
import Foundation
import Testing

/// Reads of what retention (or `zflux journal compact`) let go: they fail saying so, never answer
/// with other records.
extension JournalTests {
    /// A journal of 1,000 records in 8 KiB segments.
    func filled(_ dir: String) throws -> Journal {
        let journal = try Journal(directory: dir, policy: .none, segmentBytes: 8192, tailCapacity: 10)
        for start in stride(from: 1, through: 1000, by: 100) {
            try journal.append((UInt64(start)..<UInt64(start + 100)).map { action($0) })
            try journal.commit()
        }
        return journal
    }

    /// Whether `error` says the records were compacted away, and from where the journal goes on.
    func saysCompacted(_ error: any Error, first: UInt64) -> Bool {
        "\(error)".contains("compacted") && "\(error)".contains("seq \(first)")
    }

    @Test(
        "a read from before the journal's first seq fails saying the records were compacted away; it never answers with the records after them"
    )
    func readBeforeFirstSeq() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let journal = try filled(dir)
        try journal.removeOldestSegments(3)
        let first = journal.firstSeq
        #expect(first > 1)
        for from: UInt64 in [1, first - 1] {
            #expect { _ = try journal.read(from: from, limit: 5) } throws: { saysCompacted($0, first: first) }
            #expect { _ = try journal.replayBatch(from: from, limit: 5, maxBytes: 1 << 20) } throws: { saysCompacted($0, first: first) }
            #expect { try journal.forEach(from: from) { _ in } } throws: { saysCompacted($0, first: first) }
        }
        // From the first seq on, and from the start by default, everything that is left.
        #expect(try journal.read(from: first, limit: 2).map(\.header.seq) == [first, first + 1])
        var seqs: [UInt64] = []
        try journal.forEach { seqs.append($0.header.seq) }
        #expect(seqs == Array(first...1000))
    }

    @Test(
        "a reader that opened the journal before retention let its oldest segments go (a dump, an export, time travel) either reads what it holds or fails saying the records were compacted away"
    )
    func readerRacesRetention() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try filled(dir)
        let reader = try Journal(directory: dir, repair: false)
        #expect(reader.firstSeq == 1 && reader.lastSeq == 1000)
        // It has begun: the first segment is read (and cached), then the dispatcher lets four go.
        #expect(try reader.read(from: 1, limit: 2).map(\.header.seq) == [1, 2])
        try writer.removeOldestSegments(4)
        var seqs: [UInt64] = []
        do {
            try reader.forEach(from: 1) { seqs.append($0.header.seq) }
            Issue.record("a read across segments that are gone cannot succeed")
        } catch {
            #expect(saysCompacted(error, first: writer.firstSeq), "\(error)")
        }
        // What it handed over before it failed is the journal's records in order, with no gap.
        #expect(seqs == Array(1..<UInt64(seqs.count + 1)), "\(seqs.first ?? 0)…\(seqs.last ?? 0)")
        // Opened again, it reads from the new first seq.
        let again = try Journal(directory: dir, repair: false)
        #expect(again.firstSeq == writer.firstSeq)
        #expect(try again.read(from: again.firstSeq, limit: 1).first?.header.seq == again.firstSeq)
    }
}
