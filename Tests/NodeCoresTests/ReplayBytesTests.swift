import FluxCore
import NodeCores
import Testing

@Suite("Replay answers are bounded in bytes")
struct ReplayBytesTests {
    static let logger = CoreFixtures.logger

    func bigAction(_ seq: UInt64, bytes: Int) -> Message {
        Message(topic: "ledger", header: Header(kind: .action, seq: seq, actionType: "post"), payload: [UInt8](repeating: 0x61, count: bytes))
    }

    @Test("150 actions of 120 KB: every REPLAY-BATCH stays within the batch budget, seqs follow on, the answer ends where it says")
    func largeActions() throws {
        let log = MemoryLog()
        log.append((1...150).map { bigAction($0, bytes: 120_000) })
        let plan = ReplayPlan(peer: [1], from: 1, through: 150, head: 150, batchSize: 512, maxBatches: 64)
        let replies = plan.replies(reading: { log.read(from: $0, limit: $1) }, logger: Self.logger)
        let batches = replies.filter { $0.kind == .replayBatch }
        let end = try #require(replies.last)
        #expect(end.kind == .replayEnd)
        var expected: UInt64 = 1
        for batch in batches {
            #expect(batch.payload.count <= ReplayPlan.maxBatchBytes + 120_200, "a batch holds one action over the budget at most")
            #expect(batch.payload.count < Int(16 << 20), "fits the receive limit")
            let actions = try ReplayBatch.decode(batch.payload)
            #expect(actions.map(\.header.seq) == Array(expected..<(expected + UInt64(actions.count))))
            #expect(batch.header.seq == expected && batch.header.ref == actions.last?.header.seq)
            expected += UInt64(actions.count)
        }
        #expect(end.header.ref == expected - 1, "REPLAY-END names the last seq sent")
        let sent = batches.reduce(0) { $0 + $1.payload.count }
        #expect(sent <= ReplayPlan.maxReplyBytes + ReplayPlan.maxBatchBytes + 120_200, "one request, a bounded answer")
    }

    @Test("one action larger than the batch budget still travels, alone in its batch")
    func oneHugeAction() throws {
        let log = MemoryLog()
        log.append([bigAction(1, bytes: 10), bigAction(2, bytes: ReplayPlan.maxBatchBytes * 2), bigAction(3, bytes: 10)])
        let plan = ReplayPlan(peer: [1], from: 1, through: 3, head: 3, batchSize: 512, maxBatches: 64)
        let replies = plan.replies(reading: { log.read(from: $0, limit: $1) }, logger: Self.logger)
        let sizes = try replies.filter { $0.kind == .replayBatch }.map { try ReplayBatch.decode($0.payload).map(\.header.seq) }
        #expect(sizes == [[1], [2], [3]])
    }
}
