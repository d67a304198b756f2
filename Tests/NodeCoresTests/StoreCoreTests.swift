import FluxCore
import NodeCores
import Testing

extension StoreCore.Command {
    var replayFrom: UInt64? { if case .requestReplay(let m) = self { m.header.seq } else { nil } }
    var published: Message? { if case .publish(let m) = self { m } else { nil } }
    var dispatched: Message? { if case .dispatch(let m) = self { m } else { nil } }
    var isReconnect: Bool { if case .reconnect = self { true } else { false } }
    var snapshotReply: (peer: [UInt8], message: Message)? { if case .reply(let peer, let m) = self { (peer, m) } else { nil } }
    var effects: PendingEffects? { if case .runEffects(let effects) = self { effects } else { nil } }
    var cancelsEffects: Bool { if case .cancelEffects = self { true } else { false } }
}

@Suite("Store core: ordering, gap repair, effects, catch-up")
struct StoreCoreTests {
    typealias F = CoreFixtures

    func makeStore(snapshot: StoreSnapshot? = nil, snapshots: Bool = false, runsEffects: Bool = true) -> (StoreCore, () -> RecordingRuntime) {
        var made: [RecordingRuntime] = []
        var rules = F.storeRules(snapshots: snapshots)
        rules.runsEffects = runsEffects
        let core = StoreCore(rules: rules, snapshot: snapshot, effectClientID: 7, now: F.at(0), logger: F.logger) {
            let runtime = RecordingRuntime()
            made.append(runtime)
            return runtime
        }
        return (
            core,
            {
                guard let runtime = made.last else {
                    Issue.record("the store has not made a runtime yet")
                    return RecordingRuntime()
                }
                return runtime
            }
        )
    }

    @Test("a gap in the live stream is repaired from replay before anything newer applies")
    func gapRepair() {
        let (core, runtime) = makeStore()
        core.start(now: F.at(0))
        #expect(core.takeCommands().compactMap(\.replayFrom) == [1])
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        #expect(core.caughtUp)
        core.receivedFromDispatcher(F.action(1), now: F.at(2))
        #expect(core.version == 1)
        core.receivedFromDispatcher(F.action(3), now: F.at(3))
        #expect(core.version == 1, "seq 3 waits for seq 2")
        #expect(core.takeCommands().compactMap(\.replayFrom) == [2])
        core.receivedFromDispatcher(F.action(4), now: F.at(4))
        #expect(core.takeCommands().compactMap(\.replayFrom).isEmpty, "one repair at a time")
        core.receivedReplay(F.replayBatch(2...2), now: F.at(5))
        core.receivedReplay(F.replayEnd(head: 4), now: F.at(6))
        #expect(core.version == 4)
        #expect(runtime().count == 4, "every action applied exactly once")
        core.receivedFromDispatcher(F.action(3), now: F.at(7))
        #expect(runtime().count == 4, "a duplicate at or below the version is ignored")
        #expect(core.gapsRepaired == 1)
    }

    @Test("REJECTED names the version it leaves current: the last published, or none while an earlier action's update is still to come")
    func rejectionNamesTheStateItLeaves() {
        let (core, runtime) = makeStore()
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        core.receivedFromDispatcher(F.action(1), now: F.at(2))
        core.tick(now: F.at(3))
        #expect(core.takeCommands().compactMap(\.published).filter { $0.kind == .state }.map(\.header.seq) == [1])
        runtime().refuses = ["refusedTapped"]
        func refused(_ seq: UInt64) -> Message {
            Message(topic: "counter", header: Header(kind: .action, seq: seq, actionType: "refusedTapped"), payload: [])
        }
        // Alone: the state published at 1 is current through 2.
        core.receivedFromDispatcher(refused(2), now: F.at(4))
        let alone = core.takeCommands().compactMap(\.published).filter { $0.kind == .rejected }
        #expect(alone.map(\.header.seq) == [2] && alone.map(\.header.ref) == [1])
        // After a change not yet published: no version a view holds is current through 4.
        core.receivedFromDispatcher(F.action(3), now: F.at(5))
        core.receivedFromDispatcher(refused(4), now: F.at(5))
        let after = core.takeCommands().compactMap(\.published).filter { $0.kind == .rejected }
        #expect(after.map(\.header.seq) == [4] && after.map(\.header.ref) == [StoreCore.rejectedAfterUnpublishedChanges])
        // The update that follows is at 4: it covers the change and the refusal.
        core.tick(now: F.at(6))
        #expect(core.takeCommands().compactMap(\.published).filter { $0.kind == .state }.map(\.header.seq) == [4])
    }

    @Test("effects run for live actions only, never for history recovered by replay; the shell starts them")
    func effectsOnlyLive() {
        let (core, runtime) = makeStore()
        core.start(now: F.at(0))
        // The subscription's first word: the dispatcher is at 5, so 1…5 are history.
        core.receivedFromDispatcher(F.heartbeat(5), now: F.at(1))
        core.receivedReplay(F.replayBatch(1...5), now: F.at(2))
        core.receivedReplay(F.replayEnd(head: 5), now: F.at(3))
        #expect(runtime().count == 5 && core.takeCommands().compactMap(\.effects).isEmpty, "history applied, and no effect of it started")
        core.receivedFromDispatcher(F.action(6), now: F.at(4))
        #expect(core.takeCommands().compactMap(\.effects).count == 1, "the live action's effects, for the shell to start")
    }

    @Test("a store that does not run effects (a replica) hands none to its shell")
    func replicaRunsNoEffects() {
        let (core, runtime) = makeStore(runsEffects: false)
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        core.receivedFromDispatcher(F.action(1), now: F.at(2))
        #expect(runtime().count == 1 && core.takeCommands().compactMap(\.effects).isEmpty)
    }

    @Test("a heartbeat announcing an unseen seq asks for a replay")
    func heartbeatAhead() {
        let (core, _) = makeStore()
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        _ = core.takeCommands()
        core.receivedFromDispatcher(F.heartbeat(3), now: F.at(2))
        #expect(core.takeCommands().compactMap(\.replayFrom) == [1])
        #expect(core.dispatcherHead == 3)
    }

    @Test("views asking before the store caught up are answered once it has, with the published version")
    func snapshotsWaitForCatchUp() {
        let (core, _) = makeStore()
        core.start(now: F.at(0))
        core.receivedRequest(Message(header: Header(kind: .snapshotRequest)), from: [1], now: F.at(1))
        #expect(core.takeCommands().compactMap(\.snapshotReply).isEmpty)
        core.receivedReplay(F.replayBatch(1...2), now: F.at(2))
        core.receivedReplay(F.replayEnd(head: 2), now: F.at(3))
        let commands = core.takeCommands()
        let state = commands.compactMap(\.published).filter { $0.kind == .state }
        let reply = commands.compactMap(\.snapshotReply).first
        #expect(state.map(\.header.seq) == [2], "published before the snapshot answer")
        #expect(reply?.peer == [1] && reply?.message.header.seq == 2 && reply?.message.payload == Array("2".utf8))
    }

    @Test("a snapshot ahead of the dispatcher's history is dropped and everything is replayed")
    func snapshotAheadIsDropped() {
        let (core, runtime) = makeStore(snapshot: .init(version: 10, app: "counter", state: Array("10".utf8)), snapshots: true)
        #expect(core.version == 10 && core.snapshotVersion == 10)
        core.start(now: F.at(0))
        #expect(core.takeCommands().compactMap(\.replayFrom) == [11])
        core.receivedReplay(F.replayEnd(head: 3), now: F.at(1))
        #expect(core.version == 0 && core.snapshotVersion == 0 && core.lastPublishedVersion == 0)
        #expect(runtime().count == 0, "a fresh runtime")
        #expect(core.takeCommands().compactMap(\.replayFrom) == [1])
        core.receivedReplay(F.replayBatch(1...3), now: F.at(2))
        core.receivedReplay(F.replayEnd(head: 3), now: F.at(3))
        #expect(core.version == 3 && runtime().count == 3)
    }

    @Test("a snapshot of another app is not loaded")
    func snapshotOfAnotherApp() {
        let (core, runtime) = makeStore(snapshot: .init(version: 4, app: "todo", state: Array("4".utf8)), snapshots: true)
        #expect(core.version == 0 && runtime().count == 0)
    }

    @Test("silence from the dispatcher past the timeout reconnects and asks again")
    func silenceReconnects() {
        let (core, _) = makeStore()
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        _ = core.takeCommands()
        core.tick(now: F.at(1000))
        #expect(!core.takeCommands().contains { $0.isReconnect })
        core.tick(now: F.at(2001))
        let commands = core.takeCommands()
        #expect(commands.contains { $0.isReconnect })
        #expect(commands.compactMap(\.replayFrom) == [1])
        #expect(core.reconnects == 1)
    }

    @Test("a store that was frozen itself (SIGSTOP, a paused VM) does not blame the dispatcher for the silence")
    func frozenStoreDoesNotReconnect() {
        let (core, _) = makeStore()
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        core.tick(now: F.at(100))
        _ = core.takeCommands()
        // No turn of the loop for 5 s: the store was not running, so it heard nothing because it listened to nothing.
        core.tick(now: F.at(5_100))
        #expect(!core.takeCommands().contains { $0.isReconnect }, "first it drains what arrived while it was frozen")
        // Silence while it is awake and turning still counts.
        for ms in stride(from: UInt64(5_200), through: 7_200, by: 100) { core.tick(now: F.at(ms)) }
        #expect(core.takeCommands().contains { $0.isReconnect })
    }

    @Test("a store told the journal starts after its version says why, and does not ask again at once")
    func truncatedJournalStore() {
        let (core, _) = makeStore()
        core.start(now: F.at(0))
        _ = core.takeCommands()
        core.receivedReplay(Message(header: Header(kind: .replayEnd, flags: .historyTruncated, seq: 20, ref: 11)), now: F.at(1))
        #expect(core.takeCommands().compactMap(\.replayFrom).isEmpty, "no request storm")
        #expect(core.problem?.contains("starts at seq 11") == true)
        #expect(core.status(now: F.at(2), subscribers: 0, pid: 1).problem == core.problem)
        core.tick(now: F.at(1_002))
        #expect(core.takeCommands().compactMap(\.replayFrom) == [1], "asked again after the replay timeout, in case the journal was restored")
        core.receivedReplay(F.replayBatch(1...2), now: F.at(1_003))
        core.receivedReplay(F.replayEnd(head: 2), now: F.at(1_004))
        #expect(core.problem == nil && core.version == 2)
    }

    func heartbeat(_ seq: UInt64, _ history: HistoryID, since: UInt64) -> Message {
        Message(header: Header(kind: .heartbeat, seq: seq, ref: since, history: history.rawValue))
    }

    func stamped(_ seq: UInt64, _ history: HistoryID) -> Message {
        var action = F.action(seq)
        action.header.history = history.rawValue
        return action
    }

    /// A store following `F.history`, caught up at `version` with actions 1…version.
    func followingStore(at version: UInt64, snapshots: Bool = false) -> (StoreCore, () -> RecordingRuntime) {
        let (core, runtime) = makeStore(snapshots: snapshots)
        core.start(now: F.at(0))
        core.receivedFromDispatcher(heartbeat(0, F.history, since: 1), now: F.at(1))
        for seq in 1...version { core.receivedFromDispatcher(stamped(seq, F.history), now: F.at(2)) }
        core.receivedReplay(F.replayEnd(head: version), now: F.at(3))
        _ = core.takeCommands()
        return (core, runtime)
    }

    @Test("a dispatcher serving another journal (another cluster id) is refused with a clear error")
    func foreignHistory() {
        let (core, runtime) = followingStore(at: 3)
        let foreign = HistoryID(cluster: 0xF0, epoch: 1)
        core.receivedFromDispatcher(heartbeat(9, foreign, since: 1), now: F.at(10))
        core.receivedFromDispatcher(stamped(4, foreign), now: F.at(11))
        #expect(core.refusedForeignHistory && core.version == 3 && runtime().count == 3, "nothing of it applied")
        #expect(core.problem?.contains("another journal") == true)
        core.tick(now: F.at(5_000))
        #expect(core.takeCommands().compactMap(\.replayFrom).isEmpty, "and nothing asked of it")
    }

    @Test("a journal restored from an older copy (a new epoch starting at or below the store's version) makes the store rebuild")
    func olderCopy() {
        let (core, runtime) = followingStore(at: 5)
        // The dispatcher restarts on a copy that ends at 3: its epoch starts at 4, below this store's 5.
        let restored = HistoryID(cluster: F.history.cluster, epoch: 77)
        core.receivedFromDispatcher(heartbeat(3, restored, since: 4), now: F.at(10))
        #expect(core.version == 0 && runtime().count == 0, "the state built from the lost actions is gone")
        let dropped = core.takeCommands()
        #expect(dropped.compactMap(\.replayFrom) == [1])
        #expect(dropped.contains { $0.cancelsEffects }, "and the effects started from it are cancelled")
        core.receivedReplay(
            Message(
                header: Header(kind: .replayBatch, seq: 1, ref: 3, history: restored.rawValue),
                payload: ReplayBatch.encode((1...3).map { F.action($0) })), now: F.at(11))
        core.receivedReplay(Message(header: Header(kind: .replayEnd, seq: 3, ref: 3, history: restored.rawValue)), now: F.at(12))
        let rebuilt = core.takeCommands()
        #expect(core.version == 3 && runtime().count == 3 && rebuilt.compactMap(\.effects).isEmpty, "rebuilt, and no effect ran again")
        // A late heartbeat of the old epoch changes nothing.
        core.receivedFromDispatcher(heartbeat(5, F.history, since: 1), now: F.at(13))
        #expect(core.version == 3 && core.history == restored)
    }

    @Test("a dispatcher restart (a new epoch starting past the store) is followed; actions that came first wait for its heartbeat")
    func restartFollowed() {
        let (core, runtime) = followingStore(at: 5)
        let next = HistoryID(cluster: F.history.cluster, epoch: 78)
        core.receivedFromDispatcher(stamped(6, next), now: F.at(10))
        #expect(core.version == 5, "held back until the epoch is placed")
        core.receivedFromDispatcher(heartbeat(6, next, since: 6), now: F.at(11))
        #expect(core.takeCommands().compactMap(\.replayFrom) == [5], "first the journal's action at the store's version is checked")
        core.receivedReplay(batch([stamped(5, F.history), stamped(6, next)], next), now: F.at(12))
        core.receivedReplay(Message(header: Header(kind: .replayEnd, seq: 6, ref: 6, history: next.rawValue)), now: F.at(13))
        #expect(core.version == 6 && runtime().count == 6 && core.history == next)
    }

    func batch(_ actions: [Message], _ history: HistoryID) -> Message {
        Message(
            header: Header(kind: .replayBatch, seq: actions[0].header.seq, ref: actions[actions.count - 1].header.seq, history: history.rawValue),
            payload: ReplayBatch.encode(actions))
    }

    @Test("a store that missed the epoch that cut the journal finds out by log matching, and rebuilds")
    func missedCut() {
        let (core, runtime) = followingStore(at: 5, snapshots: true)
        // The store heard nothing of the epoch that restored the journal to seq 3 and sequenced a new 4 and 5;
        // the epoch after it starts past 5, so only the action at 5 can tell.
        let later = HistoryID(cluster: F.history.cluster, epoch: 90)
        let cut = HistoryID(cluster: F.history.cluster, epoch: 80)
        core.receivedFromDispatcher(heartbeat(7, later, since: 8), now: F.at(10))
        #expect(core.takeCommands().compactMap(\.replayFrom) == [5])
        core.receivedReplay(batch([stamped(5, cut), stamped(6, cut), stamped(7, cut)], later), now: F.at(11))
        #expect(core.version == 0 && runtime().count == 0, "the state built on the lost actions is dropped")
        #expect(core.takeCommands().contains { if case .writeSnapshot(0, _, _) = $0 { true } else { false } }, "and so is its snapshot")
    }

    @Test("an effect's action is sent again until the intake answers, with the same client seq")
    func effectRetry() {
        let (core, _) = makeStore()
        core.effectSent(app: "counter", type: "incrementTapped", payload: F.increment, now: F.at(0))
        let first = core.takeCommands().compactMap(\.dispatched)
        #expect(first.map(\.header.clientSeq) == [1] && first.first?.header.clientID == 7)
        core.tick(now: F.at(500))
        #expect(core.takeCommands().compactMap(\.dispatched).isEmpty)
        core.tick(now: F.at(1000))
        #expect(core.takeCommands().compactMap(\.dispatched).map(\.header.clientSeq) == [1])
        core.receivedIntakeReply(Message(header: Header(kind: .ack, seq: 9, clientID: 7, clientSeq: 1)))
        core.tick(now: F.at(5000))
        #expect(core.takeCommands().compactMap(\.dispatched).isEmpty)
    }

    @Test("an effect's action refused for now (rate limited) is sent again with backoff; a final refusal is not")
    func effectRetryAfterTransientRefusal() {
        let (core, _) = makeStore()
        core.effectSent(app: "counter", type: "incrementTapped", payload: F.increment, now: F.at(0))
        core.effectSent(app: "counter", type: "incrementTapped", payload: F.increment, now: F.at(0))
        // The two go together, as one DISPATCH-BATCH.
        let sent = core.takeCommands().compactMap(\.dispatched).flatMap {
            $0.kind == .dispatchBatch ? (try? DispatchBatch.dispatches(of: $0)) ?? [] : [$0]
        }
        #expect(sent.map(\.header.clientSeq) == [1, 2])
        // The intake refuses the first for now, the second for good.
        core.receivedIntakeReply(
            Message(header: Header(kind: .nack, flags: .retryLater, clientID: 7, clientSeq: 1), payload: Array("rate limited".utf8)))
        core.receivedIntakeReply(Message(header: Header(kind: .nack, clientID: 7, clientSeq: 2), payload: Array("bad arguments".utf8)))
        #expect(core.status(now: F.at(1), subscribers: 0, pid: 0).effectsUnanswered == 1, "the refused-for-now one is kept")
        var resent: [(UInt64, UInt64)] = []
        for ms in stride(from: UInt64(100), through: 20_000, by: 100) {
            core.tick(now: F.at(ms))
            for message in core.takeCommands().compactMap(\.dispatched) {
                resent.append((ms, message.header.clientSeq))
                core.receivedIntakeReply(
                    Message(header: Header(kind: .nack, flags: .retryLater, clientID: 7, clientSeq: message.header.clientSeq)))
            }
        }
        #expect(resent.allSatisfy { $0.1 == 1 }, "only the transient refusal is retried, with its client seq")
        let gaps = zip(resent.dropFirst(), resent).map { $0.0 - $1.0 }
        #expect(resent.count >= 3 && gaps == gaps.sorted(), "waits grow between tries: \(resent.map(\.0))")
        core.receivedIntakeReply(Message(header: Header(kind: .ack, seq: 3, clientID: 7, clientSeq: 1)))
        core.tick(now: F.at(60_000))
        #expect(core.takeCommands().compactMap(\.dispatched).isEmpty)
    }

    @Test(
        "a schedule request an older dispatcher refuses as an unknown app is kept, shown in status and sent again until the upgraded dispatcher takes it; nothing is dropped in silence"
    )
    func effectHeldForNewerDispatcher() {
        let (core, _) = makeStore()
        core.effectSent(app: "zflux.schedule", type: "schedule", payload: [1, 2, 3], now: F.at(0))
        #expect(core.takeCommands().compactMap(\.dispatched).map(\.header.clientSeq) == [1])
        let refusal = "unknown app 'zflux.schedule' (the dispatcher takes actions for: counter)"
        core.receivedIntakeReply(Message(header: Header(kind: .nack, clientID: 7, clientSeq: 1), payload: Array(refusal.utf8)))
        let held = core.status(now: F.at(1), subscribers: 0, pid: 0)
        #expect(held.effectsHeld == 1 && held.effectsUnanswered == 1 && held.effectsRefused == 0)
        #expect(held.problem?.contains("upgrade the dispatcher") == true, "\(held.problem ?? "no problem shown")")
        #expect(held.numericFields.contains { $0.name == "effects_held" && $0.value == 1 }, "a metric")
        var sent: [UInt64] = []
        for ms in stride(from: UInt64(100), through: 10_000, by: 100) {
            core.tick(now: F.at(ms))
            for message in core.takeCommands().compactMap(\.dispatched) {
                #expect(message.topic == Array("zflux.schedule".utf8) && message.payload == [1, 2, 3])
                sent.append(message.header.clientSeq)
                core.receivedIntakeReply(
                    Message(header: Header(kind: .nack, clientID: 7, clientSeq: message.header.clientSeq), payload: Array(refusal.utf8)))
            }
        }
        #expect(
            sent.count >= 2 && sent == sent.sorted() && Set(sent).count == sent.count,
            "sent again while refused, each time under a new client seq: \(sent)")
        core.receivedIntakeReply(Message(header: Header(kind: .ack, seq: 5, clientID: 7, clientSeq: (sent.last ?? 0) + 1)))
        let taken = core.status(now: F.at(10_001), subscribers: 0, pid: 0)
        #expect(taken.effectsHeld == 0 && taken.effectsUnanswered == 0 && taken.problem == nil)
    }

    @Test("one state update per burst, and a snapshot every N actions")
    func publishPerBurst() {
        let (core, _) = makeStore(snapshots: true)
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        _ = core.takeCommands()
        for seq: UInt64 in 1...3 { core.receivedFromDispatcher(F.action(seq), now: F.at(2)) }
        core.tick(now: F.at(3))
        let commands = core.takeCommands()
        #expect(commands.compactMap(\.published).filter { $0.kind == .state }.map(\.header.seq) == [3])
        #expect(commands.contains { if case .writeSnapshot(3, _, _) = $0 { true } else { false } })
    }
}
