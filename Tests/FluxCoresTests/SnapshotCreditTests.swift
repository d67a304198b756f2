import FluxCore
import FluxCores
import Testing

@Suite("Snapshots in parts, on credit")
struct SnapshotCreditTests {
    let state = Message(
        topic: "ledger", header: Header(kind: .snapshot, flags: .fullState, seq: 40), payload: [UInt8](repeating: 9, count: 10 * (4 << 20) + 5))

    @Test("a store sends four parts, then four more each time the view asks; a view asks after each fourth part; the state arrives whole")
    func credit() throws {
        var transfers = SnapshotTransfers()
        var assembler = MessageAssembler()
        var received: Message? = nil
        var sent = transfers.start(state, to: [1])
        var rounds = 0
        while !sent.isEmpty {
            rounds += 1
            #expect(sent.count <= MessageParts.credit, "never more than the credit at once")
            var asked: Message? = nil
            for part in sent {
                if let whole = assembler.accept(part) { received = whole }
                if let more = MessageParts.continuation(after: part) { asked = more }
            }
            guard let asked else { break }
            #expect(asked.kind == .snapshotRequest && asked.header.seq == 40)
            sent = transfers.next(for: [1], from: asked.header.ref, version: asked.header.seq)
        }
        #expect(received == state && rounds == 3 && transfers.count == 0)
    }

    @Test("a peer that never asks for more holds four parts and one waiting answer; late or foreign requests get nothing")
    func stalledPeer() {
        var transfers = SnapshotTransfers()
        #expect(transfers.start(state, to: [1]).count == 4)
        #expect(transfers.next(for: [2], from: 4, version: 40).isEmpty, "another peer")
        #expect(transfers.next(for: [1], from: 8, version: 40).isEmpty, "not where the answer stands")
        #expect(transfers.next(for: [1], from: 4, version: 39).isEmpty, "another version")
        for peer in 2...40 { _ = transfers.start(state, to: [UInt8(peer)]) }
        #expect(transfers.count == SnapshotTransfers.maxTransfers, "waiting answers are bounded")
        #expect(transfers.next(for: [1], from: 4, version: 40).isEmpty, "the oldest was forgotten; its peer asks again")
        let small = Message(header: Header(kind: .snapshot, seq: 1), payload: [1, 2, 3])
        #expect(transfers.start(small, to: [7]) == [small])
    }
}
