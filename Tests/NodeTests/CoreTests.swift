import Dispatcher
import Examples
import FluxCore
import Foundation
import Logging
import StoreNode
import Testing
import ViewNode

/// The sans-IO cores driven directly: events in, commands out, time as an input. No socket, thread,
/// clock or file is involved, so every schedule here is exact.
enum CoreFixtures {
    static let logger = Logger(label: "core-tests") { _ in SwiftLogNoOpLogHandler() }
    static let history = HistoryID(cluster: 0xC1, epoch: 1)

    static func at(_ milliseconds: UInt64) -> NodeTime { NodeTime(milliseconds: milliseconds, wallNanoseconds: Int64(milliseconds) * 1_000_000) }

    static let increment = try! Counter.app().wirePayload(type: "incrementTapped", argumentsJSON: [])

    static func action(_ seq: UInt64, clientID: UInt64 = 0, clientSeq: UInt64 = 0) -> Message {
        Message(
            topic: "counter", header: Header(kind: .action, seq: seq, clientID: clientID, clientSeq: clientSeq, actionType: "incrementTapped"),
            payload: increment)
    }

    static func heartbeat(_ seq: UInt64) -> Message { Message(header: Header(kind: .heartbeat, seq: seq)) }

    static func replayBatch(_ seqs: ClosedRange<UInt64>) -> Message {
        Message(header: Header(kind: .replayBatch, seq: seqs.lowerBound, ref: seqs.upperBound), payload: ReplayBatch.encode(seqs.map { action($0) }))
    }

    static func replayEnd(head: UInt64) -> Message { Message(header: Header(kind: .replayEnd, seq: head)) }

    static func storeConfiguration(snapshots: Bool = false) -> StoreNode.Configuration {
        var configuration = StoreNode.Configuration(
            name: "counter", app: Counter.app(), dispatcherActions: "", dispatcherReplay: "", dispatcherIntake: "", state: "", snapshot: "")
        if snapshots {
            configuration.snapshotPath = "unused"
            configuration.snapshotEveryActions = 2
        }
        return configuration
    }
}

/// A runtime that records how each action was offered, to see which ran effects.
final class RecordingRuntime: AppRuntime {
    var offered: [(type: String, runEffects: Bool)] = []
    var count = 0
    func apply(app: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool {
        offered.append((actionType, runEffects))
        count += 1
        return true
    }
    func encodedState() throws -> [UInt8] { Array("\(count)".utf8) }
    func takeChanges() throws -> [UInt8]? { nil }
    func forgetChanges() {}
    func loadState(_ bytes: [UInt8]) throws { count = Int(String(decoding: bytes, as: UTF8.self)) ?? 0 }
    func encodedSnapshot() throws -> [UInt8] { try encodedState() }
    func loadSnapshot(_ bytes: [UInt8]) throws { try loadState(bytes) }
    var effectsInFlight: Int { 0 }
    func cancelEffects() {}
}

extension StoreCore.Command {
    var replayFrom: UInt64? { if case .requestReplay(let m) = self { m.header.seq } else { nil } }
    var published: Message? { if case .publish(let m) = self { m } else { nil } }
    var dispatched: Message? { if case .dispatch(let m) = self { m } else { nil } }
    var isReconnect: Bool { if case .reconnect = self { true } else { false } }
    var snapshotReply: (peer: [UInt8], message: Message)? { if case .reply(let peer, let m) = self { (peer, m) } else { nil } }
}

@Suite("Store core: ordering, gap repair, effects, catch-up")
struct StoreCoreTests {
    typealias F = CoreFixtures

    func makeStore(snapshot: SnapshotFile.Contents? = nil, snapshots: Bool = false) -> (StoreCore, () -> RecordingRuntime) {
        var made: [RecordingRuntime] = []
        let core = StoreCore(
            configuration: F.storeConfiguration(snapshots: snapshots), snapshot: snapshot, effectClientID: 7, now: F.at(0), logger: F.logger
        ) {
            let runtime = RecordingRuntime()
            made.append(runtime)
            return runtime
        }
        return (core, { made.last! })
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

    @Test("effects run for live actions only, never for history recovered by replay")
    func effectsOnlyLive() {
        let (core, runtime) = makeStore()
        core.start(now: F.at(0))
        // The subscription's first word: the dispatcher is at 5, so 1…5 are history.
        core.receivedFromDispatcher(F.heartbeat(5), now: F.at(1))
        core.receivedReplay(F.replayBatch(1...5), now: F.at(2))
        core.receivedReplay(F.replayEnd(head: 5), now: F.at(3))
        core.receivedFromDispatcher(F.action(6), now: F.at(4))
        #expect(runtime().offered.map(\.runEffects) == [false, false, false, false, false, true])
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
        #expect(core.takeCommands().compactMap(\.replayFrom) == [1])
        core.receivedReplay(
            Message(
                header: Header(kind: .replayBatch, seq: 1, ref: 3, history: restored.rawValue),
                payload: ReplayBatch.encode((1...3).map { F.action($0) })), now: F.at(11))
        core.receivedReplay(Message(header: Header(kind: .replayEnd, seq: 3, ref: 3, history: restored.rawValue)), now: F.at(12))
        #expect(core.version == 3 && runtime().offered.allSatisfy { !$0.runEffects }, "rebuilt, and no effect ran again")
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
            header: Header(kind: .replayBatch, seq: actions[0].header.seq, ref: actions.last!.header.seq, history: history.rawValue),
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
        #expect(core.takeCommands().compactMap(\.dispatched).map(\.header.clientSeq) == [1, 2])
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

extension DispatcherCore.Command {
    var appended: [Message]? { if case .append(let m) = self { m } else { nil } }
    var published: Message? { if case .publish(let m) = self { m } else { nil } }
    var intakeReply: Message? { if case .reply(.intake, _, let m) = self { m } else { nil } }
    var replayPlan: ReplayPlan? { if case .serveReplay(let plan) = self { plan } else { nil } }
}

@Suite("Dispatcher core: sequencing, durability, dedup, refusals, replay")
struct DispatcherCoreTests {
    typealias F = CoreFixtures

    func makeDispatcher(head: UInt64 = 0) -> DispatcherCore {
        DispatcherCore(
            configuration: .init(intake: "", actions: "", replay: "", apps: [Counter.app()]), head: head, history: F.history, now: F.at(0),
            logger: F.logger)
    }

    func dispatch(clientID: UInt64 = 1, clientSeq: UInt64, app: String = "counter", payload: [UInt8] = F.increment) -> Result<Message, ProtocolError>
    {
        .success(
            Message(
                topic: app, header: Header(kind: .dispatch, clientID: clientID, clientSeq: clientSeq, actionType: "incrementTapped"), payload: payload
            ))
    }

    @Test("nothing is published or acknowledged before the journal says it is durable")
    func durableBeforeAck() {
        let core = makeDispatcher()
        core.receivedIntake(dispatch(clientSeq: 1), from: [1], now: F.at(0))
        core.receivedIntake(dispatch(clientSeq: 2), from: [1], now: F.at(0))
        core.endOfBurst()
        let commands = core.takeCommands()
        #expect(commands.compactMap(\.appended).map { $0.map(\.header.seq) } == [[1, 2]], "one journal write per burst")
        #expect(commands.compactMap(\.published).isEmpty && commands.compactMap(\.intakeReply).isEmpty)
        core.durable(through: 1)
        let first = core.takeCommands()
        #expect(first.compactMap(\.published).map(\.header.seq) == [1])
        #expect(first.compactMap(\.intakeReply).map(\.header.seq) == [1])
        core.durable(through: 2)
        #expect(core.takeCommands().compactMap(\.intakeReply).map { $0.header.kind } == [.ack])
    }

    @Test("a retry is answered with its first seq and sequenced once, also after a restart")
    func dedup() {
        let core = makeDispatcher()
        core.receivedIntake(dispatch(clientSeq: 1), from: [1], now: F.at(0))
        core.endOfBurst()
        core.durable(through: 1)
        _ = core.takeCommands()
        core.receivedIntake(dispatch(clientSeq: 1), from: [1], now: F.at(1))
        core.endOfBurst()
        let retry = core.takeCommands()
        #expect(retry.compactMap(\.appended).isEmpty)
        #expect(retry.compactMap(\.intakeReply).map(\.header.seq) == [1])
        #expect(core.head == 1)

        let restarted = makeDispatcher(head: 1)
        restarted.remember(F.action(1, clientID: 1, clientSeq: 1).header)
        restarted.receivedIntake(dispatch(clientSeq: 1), from: [1], now: F.at(2))
        restarted.endOfBurst()
        #expect(restarted.takeCommands().compactMap(\.intakeReply).map(\.header.seq) == [1])
        #expect(restarted.head == 1)
    }

    @Test("bad input is refused with a reason and changes nothing")
    func refusals() {
        let core = makeDispatcher()
        core.receivedIntake(dispatch(clientSeq: 1, app: "nope"), from: [1], now: F.at(0))
        core.receivedIntake(dispatch(clientSeq: 2, payload: Array("{not json".utf8)), from: [1], now: F.at(0))
        core.receivedIntake(.failure(ProtocolError(.wrongFrameCount, "two frames")), from: [1], now: F.at(0))
        core.receivedIntake(.success(Message(header: Header(kind: .ack))), from: [1], now: F.at(0))
        core.endOfBurst()
        let replies = core.takeCommands().compactMap(\.intakeReply)
        #expect(replies.map(\.header.kind) == [.nack, .nack, .nack, .nack])
        let reasons = replies.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(reasons[0].contains("unknown app 'nope'"))
        #expect(reasons[2].contains("bad message"))
        #expect(core.head == 0 && core.rejected == 4)
    }

    @Test("replays serve only what is durable, in batches, and end with the head")
    func replay() throws {
        let core = makeDispatcher()
        for seq: UInt64 in 1...5 { core.receivedIntake(dispatch(clientSeq: seq), from: [1], now: F.at(0)) }
        core.endOfBurst()
        let stamped = try #require(core.takeCommands().compactMap(\.appended).first)
        core.durable(through: 3)
        _ = core.takeCommands()
        core.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: 2)), from: [9])
        let plan = try #require(core.takeCommands().compactMap(\.replayPlan).first)
        #expect(plan.from == 2 && plan.through == 3 && plan.head == 3 && plan.peer == [9])
        let log = MemoryLog()
        log.append(stamped)
        var small = plan
        small.batchSize = 1
        let replies = small.replies(reading: { log.read(from: $0, limit: $1) }, logger: F.logger)
        #expect(replies.map(\.kind) == [.replayBatch, .replayBatch, .replayEnd])
        #expect(replies.last?.header.seq == 3 && replies.last?.header.ref == 3)
    }

    @Test("a replay from before the journal's first seq gets a clear answer, not an empty one")
    func truncatedJournal() throws {
        let core = DispatcherCore(
            configuration: .init(intake: "", actions: "", replay: "", apps: [Counter.app()]), head: 20, firstSeq: 11, history: F.history,
            now: F.at(0), logger: F.logger)
        core.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: 1)), from: [9])
        let end = try #require(core.takeCommands().compactMap { if case .reply(.replay, _, let m) = $0 { m } else { nil } }.first)
        #expect(end.kind == .replayEnd && end.header.flags.contains(.historyTruncated) && end.header.ref == 11 && end.header.seq == 20)
        core.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: 11)), from: [9])
        #expect(core.takeCommands().compactMap(\.replayPlan).first?.from == 11, "from the first seq on, replay as usual")
    }

    @Test("heartbeats announce the durable head once per interval")
    func heartbeats() {
        let core = makeDispatcher(head: 4)
        core.tick(now: F.at(0))
        core.tick(now: F.at(100))
        core.tick(now: F.at(200))
        #expect(core.takeCommands().compactMap(\.published).map(\.header.seq) == [4, 4])
    }
}

extension ViewCore.Command {
    var shown: ViewUpdate? { if case .show(let update) = self { update } else { nil } }
    var asksForSnapshot: Bool { if case .requestSnapshot = self { true } else { false } }
}

@Suite("View core: Clone-style joining, gaps, silence")
struct ViewCoreTests {
    typealias F = CoreFixtures

    func makeView() -> ViewCore {
        ViewCore(configuration: .init(store: "counter", state: "", snapshot: ""), now: F.at(0), logger: F.logger)
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

@Suite("Stores speak only when their state changes")
struct PublishOnlyChangesTests {
    typealias F = CoreFixtures

    static func action(_ seq: UInt64, app: String, _ type: String, _ arguments: String = "") -> Message {
        let payload = try! Catalog.app(named: app)!.wirePayload(type: type, argumentsJSON: Array(arguments.utf8))
        return Message(topic: app, header: Header(kind: .action, seq: seq, timestamp: Int64(seq) * 1_000_000, actionType: type), payload: payload)
    }

    @Test("another app's actions, and its own that change nothing, publish nothing; heartbeats and snapshots say how far it got")
    func store() throws {
        let core = StoreCore(
            configuration: F.storeConfiguration(), snapshot: nil, effectClientID: 7, now: F.at(0), logger: F.logger
        ) { Counter.app().makeRuntime { _, _, _ in } }
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        _ = core.takeCommands()
        core.receivedFromDispatcher(Self.action(1, app: "counter", "incrementTapped"), now: F.at(2))
        core.tick(now: F.at(2))
        #expect(core.takeCommands().compactMap(\.published).filter { $0.kind == .state }.map(\.header.seq) == [1])
        core.receivedFromDispatcher(Self.action(2, app: "todo", "addTodo", #"{"title":"tea"}"#), now: F.at(3))
        core.receivedFromDispatcher(Self.action(3, app: "counter", "addTapped", #"{"amount":0}"#), now: F.at(3))
        core.tick(now: F.at(3))
        #expect(core.version == 3)
        #expect(core.takeCommands().compactMap(\.published).filter { $0.kind == .state }.isEmpty, "count is still 1: nothing to say")
        core.tick(now: F.at(1000))
        let heartbeat = try #require(core.takeCommands().compactMap(\.published).first { $0.kind == .heartbeat })
        #expect(heartbeat.header.seq == 1 && heartbeat.header.ref == 3, "the state of version 1, current through 3")
        core.receivedRequest(Message(header: Header(kind: .snapshotRequest)), from: [1], now: F.at(1001))
        let reply = try #require(core.takeCommands().compactMap(\.snapshotReply).first?.message)
        #expect(reply.header.seq == 1 && reply.header.ref == 3)
        core.receivedFromDispatcher(Self.action(4, app: "counter", "incrementTapped"), now: F.at(1002))
        core.tick(now: F.at(1002))
        let update = try #require(core.takeCommands().compactMap(\.published).first { $0.kind == .state })
        #expect(update.header.seq == 4 && update.header.ref == 1, "the next change follows the last one published")
    }

    @Test("a view learns from heartbeats how far its state is current, and shows it")
    func view() {
        let view = ViewCore(configuration: .init(store: "counter", state: "", snapshot: ""), now: F.at(0), logger: F.logger)
        view.start(now: F.at(0))
        view.receivedSnapshot(
            Message(topic: "counter", header: Header(kind: .snapshot, flags: .fullState, seq: 2, ref: 4), payload: Array("2".utf8)), now: F.at(1))
        #expect(view.takeCommands().compactMap(\.shown).last.map { ($0.version, $0.currentThrough) } ?? (0, 0) == (2, 4))
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 2, ref: 9)), now: F.at(2))
        #expect(view.takeCommands().compactMap(\.shown).map(\.currentThrough) == [9])
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 2, ref: 9)), now: F.at(3))
        #expect(view.takeCommands().compactMap(\.shown).isEmpty, "nothing new: nothing shown again")
        view.receivedUpdate(Message(topic: "counter", header: Header(kind: .heartbeat, seq: 10, ref: 12)), now: F.at(4))
        #expect(view.takeCommands().contains { $0.asksForSnapshot }, "a change it never received")
    }
}

@Suite("Dispatcher middleware")
struct DispatcherMiddlewareTests {
    typealias F = CoreFixtures

    @Test("the chain runs before sequencing: what it rewrites is journaled and published, what it refuses is NACKed, counts show in STATUS")
    func chain() throws {
        let core = DispatcherCore(
            configuration: .init(intake: "", actions: "", replay: "", apps: [Todo.app(environment: .mock())]), head: 0, history: F.history,
            now: F.at(0), logger: F.logger)
        func dispatch(_ seq: UInt64, _ title: String) {
            let payload = try! JSONPayloadCodec().encode(Todo.Action.addTodo(title: title))
            core.receivedIntake(
                .success(
                    Message(topic: "todo", header: Header(kind: .dispatch, clientID: 1, clientSeq: seq, actionType: "addTodo"), payload: payload)),
                from: [1], now: F.at(0))
        }
        dispatch(1, "  Buy milk  ")
        dispatch(2, " ab ")
        core.endOfBurst()
        let commands = core.takeCommands()
        let nack = try #require(commands.compactMap(\.intakeReply).first { $0.kind == .nack })
        #expect(String(decoding: nack.payload, as: UTF8.self) == "a todo title needs at least 3 characters (not counting spaces at its ends)")
        let journaled = try #require(commands.compactMap(\.appended).first?.first)
        #expect(try WireCodec().decode(Todo.Action.self, from: journaled.payload) == .addTodo(title: "Buy milk"))
        #expect(
            core.status(now: F.at(1), pid: 1, subscribers: 0, journalBytes: 0).middlewareCounts == [MiddlewareCount(key: "todo.addTodo", count: 1)])
    }
}

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
        var configuration = ViewNode.Configuration(store: "ledger", state: "", snapshot: "", app: app)
        configuration.codec = .binary
        let view = ViewCore(configuration: configuration, now: F.at(0), logger: F.logger)
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

@Suite("Identity: dedup and rate limits follow the authenticated peer")
struct PeerIdentityTests {
    typealias F = CoreFixtures
    static let scope = ClientScope(k0: 0x0706_0504_0302_0100, k1: 0x0F0E_0D0C_0B0A_0908)
    let victim = Array("victim-public-key".utf8), attacker = Array("attacker-public-key".utf8)

    func makeDispatcher(rate: Int? = nil, head: UInt64 = 0) -> DispatcherCore {
        var configuration = DispatcherNode.Configuration(intake: "", actions: "", replay: "", apps: [Counter.app()])
        configuration.clientRate = rate
        return DispatcherCore(
            configuration: configuration, head: head, history: F.history, now: F.at(0), logger: F.logger, clientScope: Self.scope)
    }

    func dispatch(_ core: DispatcherCore, principal: [UInt8], peer: [UInt8], client: UInt64, seq: UInt64) -> Message? {
        let message = Message(
            topic: "counter", header: Header(kind: .dispatch, clientID: client, clientSeq: seq, actionType: "incrementTapped"), payload: F.increment)
        core.receivedIntake(.success(message), from: peer, principal: principal, now: F.at(1))
        core.endOfBurst()
        var commands = core.takeCommands()
        if let last = commands.compactMap(\.appended).flatMap({ $0 }).last { core.durable(through: last.header.seq) }
        commands += core.takeCommands()
        return commands.compactMap(\.intakeReply).last
    }

    @Test("another key's (client id, client seq) sent first does not capture the victim's action")
    func spoofedClientID() throws {
        let core = makeDispatcher()
        let stolen = try #require(dispatch(core, principal: attacker, peer: [1], client: 42, seq: 1))
        #expect(stolen.kind == .ack && stolen.header.seq == 1 && stolen.header.clientID == 42)
        let honest = try #require(dispatch(core, principal: victim, peer: [2], client: 42, seq: 1))
        #expect(honest.kind == .ack && honest.header.seq == 2, "the victim's action is sequenced, not answered with the attacker's seq")
        #expect(honest.header.clientID == 42, "answers carry the client's own id")
        let retry = try #require(dispatch(core, principal: victim, peer: [3], client: 42, seq: 1))
        #expect(retry.header.seq == 2, "the victim's own retry, from a new connection, is deduplicated")
    }

    @Test("journaled scoped ids make a retry after a restart find its seq")
    func retryAfterRestart() throws {
        let first = makeDispatcher()
        _ = dispatch(first, principal: victim, peer: [1], client: 42, seq: 7)
        let journaled = Message(header: Header(kind: .action, seq: 1, clientID: Self.scope.clientID(victim, 42), clientSeq: 7))
        let restarted = makeDispatcher(head: 1)
        restarted.remember(journaled.header)
        let retry = try #require(dispatch(restarted, principal: victim, peer: [9], client: 42, seq: 7))
        #expect(retry.kind == .ack && retry.header.seq == 1)
    }

    @Test("rotating client ids does not escape the rate limit of a key")
    func rotatingIDs() {
        let core = makeDispatcher(rate: 2)
        let kinds = (1...10).compactMap { dispatch(core, principal: attacker, peer: [1], client: UInt64($0), seq: 1)?.kind }
        #expect(kinds.filter { $0 == .ack }.count == 2, "\(kinds)")
        #expect(dispatch(core, principal: victim, peer: [2], client: 1, seq: 1)?.kind == .ack, "another key has its own budget")
    }

    @Test("a key flooding new client ids evicts only its own dedup entries")
    func dedupQuotaPerPeer() {
        let core = makeDispatcher()
        _ = dispatch(core, principal: victim, peer: [2], client: 9, seq: 1)
        for client in 1...20_000 { _ = dispatch(core, principal: attacker, peer: [1], client: UInt64(client), seq: 1) }
        #expect(dispatch(core, principal: victim, peer: [2], client: 9, seq: 1)?.header.seq == 1, "the victim's retry is still recognised")
    }
}

@Suite("SipHash")
struct SipHashTests {
    @Test("SipHash-2-4 gives the paper's test vector: key 00…0f, message 00…0e")
    func paperVector() {
        let k0 = UInt64(0x0706_0504_0302_0100), k1 = UInt64(0x0F0E_0D0C_0B0A_0908)
        #expect(SipHash.hash(Array(0..<15), k0: k0, k1: k1) == 0xa129_ca61_49be_45e5)
        #expect(SipHash.hash([], k0: k0, k1: k1) == 0x726f_db47_dd0e_0e31)
    }
}

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
