import FluxCore
import NodeCores
import Testing

extension ViewCore.Command {
    var shown: ViewUpdate? { if case .show(let update) = self { update } else { nil } }
    var asksForSnapshot: Bool { if case .requestSnapshot = self { true } else { false } }
}

@Suite("View core: Clone-style joining, gaps, silence")
struct ViewCoreTests {
    typealias F = CoreFixtures

    func makeView() -> ViewCore {
        ViewCore(rules: ViewRules(store: "counter"), now: F.at(0), logger: F.logger)
    }

    func state(_ version: UInt64, follows ref: UInt64 = 0) -> Message {
        Message(topic: "counter", header: Header(kind: .state, flags: .fullState, seq: version, ref: ref), payload: Array("\(version)".utf8))
    }

    func snapshot(_ version: UInt64) -> Message {
        Message(topic: "counter", header: Header(kind: .snapshot, flags: .fullState, seq: version), payload: Array("\(version)".utf8))
    }

    @Test("updates queued while joining are dropped when the snapshot covers them")
    func joining() {
        let view = makeView()
        view.start(now: F.at(0))
        #expect(view.takeCommands().contains { $0.asksForSnapshot })
        view.receivedUpdate(state(3), now: F.at(1))
        view.receivedUpdate(state(5), now: F.at(1))
        view.receivedSnapshot(snapshot(4), now: F.at(2))
        let shown = view.takeCommands().compactMap(\.shown)
        #expect(shown.map(\.version) == [5, 5], "the snapshot's queued successor applies; 3 is dropped")
        #expect(shown.last?.connection == .live)
    }

    @Test("a heartbeat announcing a version never received makes the view re-snapshot")
    func heartbeatAhead() {
        let view = makeView()
        view.start(now: F.at(0))
        view.receivedSnapshot(snapshot(2), now: F.at(1))
        _ = view.takeCommands()
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 3)), now: F.at(2))
        let commands = view.takeCommands()
        #expect(commands.contains { $0.asksForSnapshot })
        #expect(view.connection == .catchingUp("missed version 3"))
    }

    @Test("a changes-only update that does not follow the shown version makes the view re-snapshot")
    func gap() {
        let view = makeView()
        view.start(now: F.at(0))
        view.receivedSnapshot(snapshot(2), now: F.at(1))
        _ = view.takeCommands()
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .state, seq: 5, ref: 4), payload: []), now: F.at(2))
        #expect(view.takeCommands().contains { $0.asksForSnapshot })
        #expect(view.version == 2)
    }

    @Test("silence past the timeout shows the view stale; an unanswered snapshot is asked again on a fresh socket")
    func silence() {
        let view = makeView()
        view.start(now: F.at(0))
        _ = view.takeCommands()
        view.tick(now: F.at(2001))
        let commands = view.takeCommands()
        #expect(commands.contains { if case .replaceSnapshotSocket = $0 { true } else { false } })
        #expect(commands.contains { $0.asksForSnapshot })
        if case .stale = view.connection {} else { Issue.record("expected stale, got \(view.connection)") }
    }

    @Test("a heartbeat whose last update is older than the shown version does not vouch for the shown state (simulator seed 1196)")
    func heartbeatBehindShownVersion() {
        // The store published 97, crashed, came back from an older snapshot, published 96 (a whole
        // state), and applied 97…99 without publishing: their net change was none, so its state at 99
        // is its state at 96. The view holds 97, a state that 98 and 99 changed back.
        let view = makeView()
        view.start(now: F.at(0))
        view.receivedSnapshot(snapshot(95), now: F.at(1))
        view.receivedUpdate(state(97, follows: 95), now: F.at(2))
        view.receivedUpdate(state(96), now: F.at(3))
        _ = view.takeCommands()
        #expect(view.version == 97)
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 96, ref: 99)), now: F.at(4))
        let commands = view.takeCommands()
        #expect(commands.compactMap(\.shown).allSatisfy { $0.currentThrough == 97 }, "97 is not current through 99")
        #expect(view.currentThrough == 97 && commands.contains { $0.asksForSnapshot }, "the view asks for the store's state as it is")
        // The answer: last changed at 96, current through 99. It replaces 97, and the view is current
        // through 99 (never less than it was).
        view.receivedSnapshot(
            Message(topic: "counter", header: Header(kind: .snapshot, flags: .fullState, seq: 96, ref: 99), payload: Array("96".utf8)), now: F.at(5))
        let shown = view.takeCommands().compactMap(\.shown)
        #expect(shown.last?.version == 96 && shown.last?.currentThrough == 99 && shown.last?.state == Array("96".utf8))
        // The next heartbeat vouches for it: no snapshot loop.
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 96, ref: 101)), now: F.at(6))
        #expect(!view.takeCommands().contains { $0.asksForSnapshot } && view.currentThrough == 101)
    }

    @Test("a snapshot current through a later version supersedes queued updates up to it (simulator seed 1196)")
    func snapshotCoversQueuedThroughRef() {
        // Queued while joining: STATE 97 from before the store restarted from an older snapshot. The
        // answer is the restarted store's: published 96, current through 99.
        let view = makeView()
        view.start(now: F.at(0))
        view.receivedUpdate(state(97), now: F.at(1))
        view.receivedSnapshot(
            Message(topic: "counter", header: Header(kind: .snapshot, flags: .fullState, seq: 96, ref: 99), payload: Array("96".utf8)), now: F.at(2))
        let shown = view.takeCommands().compactMap(\.shown)
        #expect(shown.last?.version == 96 && shown.last?.currentThrough == 99, "\(shown.map { ($0.version, $0.currentThrough) })")
        // And live: an update at or below what the view is current through changes nothing.
        view.receivedUpdate(state(98), now: F.at(3))
        #expect(view.takeCommands().compactMap(\.shown).isEmpty && view.version == 96)
        view.receivedUpdate(state(100), now: F.at(4))
        #expect(view.version == 100)
    }

    @Test("a view never goes back to an older version")
    func neverBack() {
        let view = makeView()
        view.start(now: F.at(0))
        view.receivedSnapshot(snapshot(5), now: F.at(1))
        view.receivedUpdate(state(4), now: F.at(2))
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 6)), now: F.at(3))
        view.receivedSnapshot(snapshot(3), now: F.at(4))
        let versions = view.takeCommands().compactMap(\.shown).map(\.version)
        #expect(versions.allSatisfy { $0 >= 5 } && view.version == 5, "\(versions)")
    }
}
