import FluxCore
import Foundation
import Testing

@testable import Dispatcher
@_spi(Simulation) @testable import NodeCores

/// Replays while retention lets the journal's oldest segments go: a store is served the records it
/// asked for, in order, or told that the history it asks for was truncated; never other records.
extension CheckpointTests {
    /// Checks that `answer` (REPLAY-BATCHes then a REPLAY-END) holds seqs `from…` in order with no gap,
    /// and returns the last seq it holds.
    func lastServed(_ answer: [Message], from: UInt64) throws -> UInt64 {
        var next = from
        for message in answer.dropLast() {
            #expect(message.kind == .replayBatch)
            let seqs = try ReplayBatch.decode(message.payload).map(\.header.seq)
            #expect(message.header.seq == next && seqs == Array(next...message.header.ref), "asked from \(next), served \(seqs.first ?? 0)…")
            next = message.header.ref + 1
        }
        let end = try #require(answer.last)
        #expect(end.kind == .replayEnd && !end.header.flags.contains(.historyTruncated) && end.header.ref == next - 1, "\(end.header)")
        return next - 1
    }

    @Test(
        "a replay being served while retention lets the segments it reads go ends where the journal could serve it, and the store's next request is told the history was truncated, where it now starts"
    )
    func replayRacesRetention() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try withDispatcher(retainBytes: 8192, storeNeeds: [.init(from: 1, who: "store counter")], replayBatchSize: 16) { journal, interpreter in
            let io = try #require(interpreter.io as? ImmediateIO)
            try run(interpreter, count: 300)
            #expect(journal.firstSeq == 1)
            // A store replays from seq 1: its first batch goes out, then retention lets the oldest segments go.
            interpreter.core.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: 1)), from: [7])
            try interpreter.carryOut()
            interpreter.serveReplays(budget: 1)
            #expect(io.replayed.count == 1)
            io.needs = [.init(from: 250, who: "store counter")]
            try run(interpreter, count: 100, clientSeqFrom: 301)
            let first = journal.firstSeq
            #expect(first > 17, "retention let what the replay reads next go: from \(first)")
            while !interpreter.replays.isEmpty { interpreter.serveReplays() }
            let last = try lastServed(io.replayed, from: 1)
            #expect(last < first)
            // The store asks again from where the answer ended.
            io.replayed = []
            interpreter.core.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: last + 1)), from: [7])
            try interpreter.carryOut()
            while !interpreter.replays.isEmpty { interpreter.serveReplays() }
            let end = try #require(io.replayed.last)
            #expect(io.replayed.count == 1 && end.kind == .replayEnd && end.header.flags.contains(.historyTruncated), "\(io.replayed.map(\.header))")
            #expect(end.header.ref == first, "the end names where the journal now starts")
            // From the first seq on, it is served.
            io.replayed = []
            interpreter.core.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: first)), from: [7])
            try interpreter.carryOut()
            while !interpreter.replays.isEmpty { interpreter.serveReplays() }
            #expect(try lastServed(io.replayed, from: first) > first)
        }
    }
}
