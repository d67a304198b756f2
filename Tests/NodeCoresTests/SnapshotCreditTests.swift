import FluxCore
import NodeCores
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
        var sent = transfers.start(state, to: [1], now: 0)
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
            sent = transfers.next(for: [1], from: asked.header.ref, version: asked.header.seq, now: 1)
        }
        #expect(received == state && rounds == 3 && transfers.count == 0)
    }

    @Test("a peer that never asks for more holds four parts and one waiting answer; late or foreign requests get nothing")
    func stalledPeer() {
        var transfers = SnapshotTransfers()
        #expect(transfers.start(state, to: [1], now: 0).count == 4)
        #expect(transfers.next(for: [2], from: 4, version: 40, now: 1).isEmpty, "another peer")
        #expect(transfers.next(for: [1], from: 8, version: 40, now: 1).isEmpty, "not where the answer stands")
        #expect(transfers.next(for: [1], from: 4, version: 39, now: 1).isEmpty, "another version")
        // Each at another version: no parts to share, so the byte bound holds first.
        for peer in 2...40 {
            let other = Message(
                topic: state.topic, header: Header(kind: .snapshot, flags: .fullState, seq: UInt64(100 + peer)), payload: state.payload)
            _ = transfers.start(other, to: [UInt8(peer)], now: 2)
        }
        #expect(transfers.bytes <= SnapshotTransfers.maxBytes && transfers.count == 1, "waiting answers are bounded in bytes")
        #expect(transfers.next(for: [1], from: 4, version: 40, now: 3).isEmpty, "the oldest was forgotten; its peer asks again")
        let small = Message(header: Header(kind: .snapshot, seq: 1), payload: [1, 2, 3])
        #expect(transfers.start(small, to: [7], now: 3) == [small])
    }

    @Test("answers of a modest size are bounded in number; a forged credit request of 2^64-1 gets nothing and traps nothing")
    func boundsAndForgery() {
        var transfers = SnapshotTransfers()
        let medium = Message(header: Header(kind: .snapshot, flags: .fullState, seq: 5), payload: [UInt8](repeating: 1, count: 6 * (4 << 20)))
        for peer in 1...40 { _ = transfers.start(medium, to: [UInt8(peer)], now: 0) }
        #expect(transfers.count <= SnapshotTransfers.maxTransfers)
        #expect(transfers.next(for: [40], from: .max, version: 5, now: 1).isEmpty)
        #expect(transfers.next(for: [40], from: UInt64(Int.max) + 1, version: 5, now: 1).isEmpty)
        #expect(transfers.next(for: [40], from: 4, version: 5, now: 1).count == 2, "the genuine request still works")
    }

    @Test("views asking for the same large version share its parts, and the byte bound counts them once")
    func sharedParts() {
        var transfers = SnapshotTransfers()
        for peer in 1...8 { #expect(transfers.start(state, to: [UInt8(peer)], now: 0).count == 4) }
        #expect(transfers.count == 8 && transfers.bytes == state.payload.count, "eight waiting answers, one copy")
    }

    @Test("an answer whose peer stops asking is dropped after the credit timeout, and its memory with it")
    func expiry() {
        var transfers = SnapshotTransfers()
        _ = transfers.start(state, to: [1], now: 1_000)
        transfers.expire(now: 1_000 + SnapshotTransfers.creditTimeoutMs)
        #expect(transfers.count == 1, "not yet")
        transfers.expire(now: 1_001 + SnapshotTransfers.creditTimeoutMs)
        #expect(transfers.count == 0 && transfers.bytes == 0)
    }
}
