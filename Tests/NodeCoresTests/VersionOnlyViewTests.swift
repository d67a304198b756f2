import FluxCore
import NodeCores
import Testing

@Suite("A view that follows versions only, for an app it does not know")
struct VersionOnlyViewTests {
    typealias F = CoreFixtures

    func makeView(materializesState: Bool = false, app: (any AnyApp)? = nil) -> ViewCore {
        var rules = ViewRules(store: "poll", app: app)
        rules.materializesState = materializesState
        return ViewCore(rules: rules, now: F.at(0), logger: F.logger)
    }

    func snapshot(_ version: UInt64) -> Message {
        Message(topic: "poll", header: Header(kind: .snapshot, flags: .fullState, seq: version), payload: Array("whole \(version)".utf8))
    }

    /// A changes-only update: version `seq`, following version `ref`.
    func changes(_ seq: UInt64, follows ref: UInt64) -> Message {
        Message(topic: "poll", header: Header(kind: .state, seq: seq, ref: ref), payload: [0xB1, 0x00])
    }

    @Test("only a view that neither materializes the state nor has an app tracks versions only")
    func rules() {
        var rules = ViewRules(store: "poll")
        #expect(!rules.tracksVersionsOnly, "a view shows states by default")
        rules.materializesState = false
        #expect(rules.tracksVersionsOnly)
        rules.app = UnhostedApp(name: "poll")
        #expect(!rules.tracksVersionsOnly, "an app's replica applies (or refuses) the changes")
    }

    @Test("changes-only updates advance the version, shown once per burst with the last whole state; a gap still resnapshots")
    func advancesThenResnapshotsOnAGap() {
        let view = makeView()
        view.start(now: F.at(0))
        _ = view.takeCommands()
        view.receivedSnapshot(snapshot(2), now: F.at(1))
        #expect(view.takeCommands().compactMap(\.shown).map(\.version) == [2])

        view.receivedUpdate(changes(3, follows: 2), now: F.at(2))
        view.receivedUpdate(changes(4, follows: 3), now: F.at(2))
        #expect(view.version == 4)
        #expect(view.takeCommands().isEmpty, "shown at the end of the burst")
        view.endOfBurst()
        let commands = view.takeCommands()
        #expect(!commands.contains { $0.asksForSnapshot })
        let shown = commands.compactMap(\.shown)
        #expect(shown.map(\.version) == [4] && shown.first?.connection == .live)
        #expect(shown.first?.state == Array("whole 2".utf8), "the state is the last whole one: only versions are followed")
        #expect(shown.first?.updateBytes == 2, "the update's size is reported, as for any update")

        // Version 5 was missed: changes following it cannot be counted on.
        view.receivedUpdate(changes(6, follows: 5), now: F.at(3))
        #expect(view.takeCommands().contains { $0.asksForSnapshot })
        #expect(view.version == 4)
        if case .catchingUp = view.connection {} else { Issue.record("expected catching up, got \(view.connection)") }

        // Queued while catching up; the snapshot covers 7, the changes to 8 follow it.
        view.receivedUpdate(changes(7, follows: 6), now: F.at(4))
        view.receivedUpdate(changes(8, follows: 7), now: F.at(4))
        view.receivedSnapshot(snapshot(7), now: F.at(5))
        let afterSnapshot = view.takeCommands()
        #expect(afterSnapshot.compactMap(\.shown).last?.version == 8)
        #expect(afterSnapshot.compactMap(\.shown).last?.state == Array("whole 7".utf8))
        #expect(view.connection == .live && view.version == 8)

        // A heartbeat naming a version never received resnapshots too.
        view.receivedUpdate(Message(topic: "poll", header: Header(kind: .heartbeat, seq: 9)), now: F.at(6))
        #expect(view.takeCommands().contains { $0.asksForSnapshot })
    }

    @Test("an older changes-only update is ignored; a rejection shows the advanced version first")
    func olderAndRejected() {
        let view = makeView()
        view.start(now: F.at(0))
        view.receivedSnapshot(snapshot(5), now: F.at(1))
        _ = view.takeCommands()
        view.receivedUpdate(changes(4, follows: 3), now: F.at(2))
        #expect(view.version == 5 && view.takeCommands().isEmpty)
        view.receivedUpdate(changes(6, follows: 5), now: F.at(3))
        view.receivedUpdate(
            Message(topic: "poll", header: Header(kind: .rejected, seq: 7, actionType: "voteCast"), payload: Array("closed".utf8)), now: F.at(3))
        let shown = view.takeCommands().compactMap(\.shown)
        #expect(shown.map(\.version) == [6, 6])
        #expect(shown.last?.rejection?.reason == "closed")
        #expect(shown.last?.currentThrough == 6, "a REJECTED without the version it leaves current says nothing of it")
    }

    @Test(
        "a refusal that leaves current the state the view holds makes it current through the refused seq at once; one after unpublished changes does not"
    )
    func rejectionAdvancesCurrentThrough() {
        func rejected(_ seq: UInt64, leaving ref: UInt64) -> Message {
            Message(topic: "poll", header: Header(kind: .rejected, seq: seq, ref: ref, actionType: "voteCast"), payload: Array("closed".utf8))
        }
        let view = makeView()
        view.start(now: F.at(0))
        view.receivedSnapshot(snapshot(5), now: F.at(1))
        _ = view.takeCommands()
        view.receivedUpdate(rejected(7, leaving: 5), now: F.at(2))
        #expect(view.takeCommands().compactMap(\.shown).last?.currentThrough == 7)
        // An earlier action of the store's burst changed the state, and its update is still to come.
        view.receivedUpdate(rejected(9, leaving: StoreCore.rejectedAfterUnpublishedChanges), now: F.at(3))
        #expect(view.takeCommands().compactMap(\.shown).last?.currentThrough == 7)
        // The view missed version 8: a refusal leaving 8 current is not one it can vouch for.
        view.receivedUpdate(rejected(10, leaving: 8), now: F.at(4))
        #expect(view.takeCommands().compactMap(\.shown).last?.currentThrough == 7)
    }

    @Test("a view that shows states still asks for a snapshot on changes it cannot apply")
    func statefulViewsUnchanged() {
        for view in [makeView(materializesState: true), makeView(materializesState: true, app: UnhostedApp(name: "poll"))] {
            view.start(now: F.at(0))
            view.receivedSnapshot(snapshot(2), now: F.at(1))
            _ = view.takeCommands()
            view.receivedUpdate(changes(3, follows: 2), now: F.at(2))
            #expect(view.takeCommands().contains { $0.asksForSnapshot })
            #expect(view.version == 2)
        }
    }
}
