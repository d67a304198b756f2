import FluxCore
import Testing

@testable import NodeCores

@Suite("Effect outbox: effects' actions until the intake answers")
struct EffectOutboxTests {
    typealias F = CoreFixtures

    func reply(_ kind: MessageKind, _ clientSeq: UInt64, clientID: UInt64 = 7, flags: Header.Flags = [], reason: String = "") -> Message {
        Message(header: Header(kind: kind, flags: flags, clientID: clientID, clientSeq: clientSeq), payload: Array(reason.utf8))
    }

    @Test("each action gets the next client seq under the store's client id, and is sent again until answered")
    func retries() throws {
        var outbox = EffectOutbox(clientID: 7, retryMilliseconds: 1000, limit: 10)
        let sent = (
            outbox.send(app: "counter", type: "incrementTapped", payload: [1], now: F.at(0)),
            outbox.send(app: "counter", type: "incrementTapped", payload: [2], now: F.at(400))
        )
        let first = try #require(sent.0), second = try #require(sent.1)
        #expect(first.kind == .dispatch && first.header.clientID == 7 && [first, second].map(\.header.clientSeq) == [1, 2])
        #expect(outbox.due(now: F.at(999)).isEmpty)
        #expect(outbox.due(now: F.at(1000)).map(\.header.clientSeq) == [1])
        #expect(outbox.due(now: F.at(1400)).map(\.header.clientSeq) == [2], "each on its own clock")
        #expect(outbox.due(now: F.at(2000)).map(\.header.clientSeq) == [1])
        #expect(outbox.answered(reply(.ack, 1)) == .accepted && outbox.count == 1)
        #expect(outbox.due(now: F.at(9000)).map(\.header.clientSeq) == [2])
    }

    @Test("refused for now: kept, its wait doubled up to 30 s; refused for good: forgotten, with the reason")
    func refusals() {
        var outbox = EffectOutbox(clientID: 7, retryMilliseconds: 1000, limit: 10)
        _ = outbox.send(app: "counter", type: "incrementTapped", payload: [], now: F.at(0))
        _ = outbox.send(app: "counter", type: "incrementTapped", payload: [], now: F.at(0))
        #expect(outbox.answered(reply(.nack, 2, reason: "bad arguments")) == .refused(reason: "bad arguments"))
        var at: UInt64 = 0
        var waits: [UInt64] = []
        for _ in 0..<8 {
            #expect(outbox.answered(reply(.nack, 1, flags: .retryLater)) == .retryLater)
            let sentAt = at
            repeat { at += 100 } while outbox.due(now: F.at(at)).isEmpty
            waits.append(at - sentAt)
        }
        #expect(waits == [2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000], "\(waits)")
        #expect(outbox.answered(reply(.ack, 1, clientID: 8)) == .notOurs && outbox.count == 1, "the refused one is forgotten")
    }

    @Test(
        "a refusal an older dispatcher gives for what it does not know (an unknown app, such as a schedule request) keeps the action, sends it again with a doubling wait and counts it until it is taken"
    )
    func heldForANewerDispatcher() {
        var outbox = EffectOutbox(clientID: 7, retryMilliseconds: 1000, limit: 10)
        _ = outbox.send(app: "zflux.schedule", type: "schedule", payload: [1], now: F.at(0))
        let unknownApp = "unknown app 'zflux.schedule' (the dispatcher takes actions for: counter, todo)"
        #expect(outbox.answered(reply(.nack, 1, reason: unknownApp)) == .held(reason: unknownApp))
        #expect(outbox.count == 1 && outbox.held == 1 && outbox.refused == 0)
        // Refused, so never sequenced: it goes again under the next client seq, which keeps client seqs
        // growing past whatever the dispatcher's dedup table let go meanwhile.
        #expect(outbox.due(now: F.at(1999)).isEmpty && outbox.due(now: F.at(2000)).map(\.header.clientSeq) == [2])
        #expect(outbox.answered(reply(.nack, 2, reason: unknownApp)) == .held(reason: unknownApp) && outbox.held == 1, "counted once")
        #expect(outbox.due(now: F.at(5999)).isEmpty && outbox.due(now: F.at(6000)).map(\.header.clientSeq) == [3], "the wait doubles")
        #expect(outbox.answered(reply(.nack, 1, reason: unknownApp)) == .notOurs, "a late answer to the seq it left changes nothing")
        #expect(outbox.count == 1 && outbox.held == 1 && outbox.refused == 0)
        let next = outbox.send(app: "counter", type: "incrementTapped", payload: [2], now: F.at(6000))
        #expect(next?.header.clientSeq == 4)
        // The dispatcher is upgraded: the same action is taken, and nothing stays held.
        #expect(outbox.answered(reply(.ack, 3)) == .accepted && outbox.held == 0 && outbox.count == 1)
        for reason in [
            "counter has no action 'reset' (it has: incrementTapped)", "the intake accepts DISPATCH, not SCHEDULE",
            "bad message: protocol version 4 is not supported (this node speaks 1 to 3)",
        ] {
            #expect(EffectOutbox.newerDispatcherWouldTake(reason), "\(reason)")
        }
        #expect(outbox.answered(reply(.nack, 4, reason: "the amount must be positive")) == .refused(reason: "the amount must be positive"))
        #expect(outbox.count == 0 && outbox.held == 0, "a final refusal is forgotten")
    }

    @Test("past the limit unanswered, a new action is refused and nothing is sent")
    func bounded() {
        var outbox = EffectOutbox(clientID: 7, retryMilliseconds: 1000, limit: 2)
        #expect(outbox.send(app: "a", type: "t", payload: [], now: F.at(0)) != nil)
        #expect(outbox.send(app: "a", type: "t", payload: [], now: F.at(0)) != nil)
        #expect(outbox.send(app: "a", type: "t", payload: [], now: F.at(0)) == nil && outbox.count == 2)
        _ = outbox.answered(reply(.ack, 1))
        #expect(outbox.send(app: "a", type: "t", payload: [], now: F.at(0))?.header.clientSeq == 3)
    }
}
