import Examples
import FluxCore
import NodeCores
import Testing

@Suite("Hostile or broken input to the cores (issue 15, low findings)")
struct LowFindingsTests {
    typealias F = CoreFixtures

    @Test("an ACTION or a truncated REPLAY-END with seq 0 is dropped, not a trap; the store goes on")
    func seqZero() {
        let (core, runtime) = StoreCoreTests().makeStore()
        core.start(now: F.at(0))
        core.receivedFromDispatcher(F.action(0), now: F.at(1))
        #expect(core.version == 0)
        core.receivedReplay(
            Message(header: Header(kind: .replayEnd, flags: .historyTruncated, seq: 0, ref: 0)), now: F.at(2))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(3))
        core.receivedFromDispatcher(F.action(1), now: F.at(4))
        #expect(core.version == 1 && runtime().count == 1)
    }

    @Test("live actions held during a gap repair are bounded in bytes; replay brings the ones dropped")
    func pendingBytes() {
        let (core, runtime) = StoreCoreTests().makeStore()
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        let megabyte = [UInt8](repeating: 1, count: 1 << 20)  // one buffer, shared by every message
        func big(_ seq: UInt64) -> Message {
            Message(topic: "counter", header: Header(kind: .action, seq: seq, actionType: "incrementTapped"), payload: megabyte)
        }
        // Seq 1 is lost; 2…400 arrive and wait for it.
        for seq: UInt64 in 2...400 { core.receivedFromDispatcher(big(seq), now: F.at(2)) }
        #expect(core.pendingBytes <= StoreCore.maxPendingBytes && core.pendingBytes > 0, "\(core.pendingBytes) bytes held")
        for first in stride(from: UInt64(1), through: 400, by: 50) {
            let seqs = first...min(first + 49, 400)
            core.receivedReplay(
                Message(header: Header(kind: .replayBatch, seq: seqs.lowerBound, ref: seqs.upperBound), payload: ReplayBatch.encode(seqs.map(big))),
                now: F.at(3))
        }
        core.receivedReplay(F.replayEnd(head: 400), now: F.at(4))
        #expect(core.version == 400 && runtime().count == 400 && core.pendingBytes == 0)
    }

    @Test("a view whose replica cannot load a whole state applies no later change to the old replica: it asks for a snapshot")
    func wholeStateLoadFailure() throws {
        let app = Ledger.app()
        var rules = ViewRules(store: "ledger", app: app)
        rules.codec = .binary
        let view = ViewCore(rules: rules, now: F.at(0), logger: F.logger)
        let runtime = app.makeRuntime { _, _, _ in }
        let open = try app.wirePayload(type: "open", argumentsJSON: Array(#"{"count":3}"#.utf8))
        _ = try runtime.apply(app: "ledger", actionType: "open", payload: open, stamp: .unstamped, runEffects: false)
        runtime.forgetChanges()
        view.start(now: F.at(0))
        view.receivedSnapshot(
            Message(topic: "ledger", header: Header(kind: .snapshot, flags: .fullState, seq: 1), payload: try runtime.encodedState()), now: F.at(1))
        // Version 2 arrives whole but is not decodable by this view's replica.
        view.receivedUpdate(
            Message(topic: "ledger", header: Header(kind: .state, flags: .fullState, seq: 2, ref: 1), payload: [0xFF, 0xFF]), now: F.at(2))
        _ = view.takeCommands()
        // Version 3's changes follow version 2, which the replica does not hold.
        let post = try app.wirePayload(type: "post", argumentsJSON: Array(#"{"account":1,"amount":9,"memo":"x"}"#.utf8))
        _ = try runtime.apply(app: "ledger", actionType: "post", payload: post, stamp: .unstamped, runEffects: false)
        let changes = try #require(try runtime.takeChanges())
        view.receivedUpdate(Message(topic: "ledger", header: Header(kind: .state, seq: 3, ref: 2), payload: changes), now: F.at(3))
        #expect(view.takeCommands().contains { $0.asksForSnapshot })
        #expect(view.version == 2, "the change is not applied on top of version 1's replica")
    }
}
