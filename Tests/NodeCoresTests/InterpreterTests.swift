import Examples
import FluxCore
import Logging
import Testing

@_spi(Simulation) @testable import NodeCores

/// The interpreters the real loops and the simulator share: the order in which they carry out a core's
/// commands against the world, watched through an I/O that records each call.
@Suite("The loops' interpreters: the order of the steps")
struct InterpreterTests {
    typealias F = CoreFixtures

    /// A dispatcher's world that writes down what it is asked, in order. Its sync returns at once or,
    /// `syncsLater`, is left under way for the test to finish.
    final class RecordingIO: DispatcherIO {
        var calls: [String] = []
        var sent: [Message] = []
        var syncsLater = false
        var quarantineKept: [[Quarantine]] = []
        /// The monotonic clock: 1,000 ms unless a test moves it.
        var clock: () -> UInt64 = { 1_000 }
        func monotonicMilliseconds() -> UInt64 { clock() }
        func time() -> NodeTime { F.at(1) }
        func send(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> Bool {
            calls.append("send \(route) \(message.kind) \(message.header.seq)")
            sent.append(message)
            return true
        }
        func publish(_ message: Message) { calls.append("publish \(message.kind)") }
        func sync(through seq: UInt64) throws -> Bool {
            calls.append("sync \(seq)")
            return !syncsLater
        }
        func keepQuarantine(_ entries: [Quarantine]) throws { quarantineKept.append(entries) }
        func outOfSpace(_ error: any Error) -> String? { nil }
        func verifyLeadership(claim: String) { calls.append("verify") }
        func steppedDown(reason: String) { calls.append("stepped down") }
        /// What the host tells of its journal's syncs.
        var syncs: SyncTimes?
        func statusFacts() -> DispatcherStatusFacts { DispatcherStatusFacts(pid: 42, subscribers: 0, syncs: syncs) }
    }

    func dispatch(_ clientSeq: UInt64, to core: DispatcherCore) {
        let message = Message(
            topic: "counter", header: Header(kind: .dispatch, clientID: 9, clientSeq: clientSeq, actionType: "incrementTapped"),
            payload: F.increment)
        core.receivedIntake(.success(message), from: [1], now: F.at(1))
    }

    func interpreter(_ io: any DispatcherIO) throws -> (DispatcherInterpreter, MemoryLog) {
        let log = MemoryLog(history: F.history, clientScope: ClientScope(k0: 1, k1: 2))
        let core = try DispatcherBoot.core(rules: DispatcherRules(apps: [Counter.app()]), log: log, now: F.at(0), logger: F.logger)
        return (DispatcherInterpreter(core: core, log: log, io: io, logger: F.logger), log)
    }

    @Test("a burst is appended and synced before anything of it is published or acknowledged")
    func syncBeforeRelease() throws {
        let io = RecordingIO()
        let (interpreter, log) = try interpreter(io)
        dispatch(1, to: interpreter.core)
        dispatch(2, to: interpreter.core)
        interpreter.core.endOfBurst()
        try interpreter.carryOut()
        #expect(log.lastSeq == 2)
        #expect(io.calls.first == "sync 2", "\(io.calls)")
        #expect(io.calls.filter { $0.hasPrefix("send intake") } == ["send intake ACK 1", "send intake ACK 2"], "\(io.calls)")
        #expect(io.calls.contains { $0.hasPrefix("publish") })
    }

    @Test("with the sync under way nothing is released; it is once the host says the sync returned")
    func syncUnderWay() throws {
        let io = RecordingIO()
        io.syncsLater = true
        let (interpreter, _) = try interpreter(io)
        dispatch(1, to: interpreter.core)
        interpreter.core.endOfBurst()
        try interpreter.carryOut()
        #expect(io.calls == ["sync 1"])
        #expect(interpreter.core.durableHead == 0)
        try interpreter.synced(through: 1)
        #expect(interpreter.core.durableHead == 1)
        #expect(io.calls.contains("send intake ACK 1"), "\(io.calls)")
    }

    @Test("the canary release-before-sync acknowledges before the sync is asked for: the order the simulator must catch")
    func canaryReordersTheSteps() throws {
        let io = RecordingIO()
        io.syncsLater = true
        let (interpreter, _) = try interpreter(io)
        interpreter.brokenRules = [.releaseBeforeSync]
        dispatch(1, to: interpreter.core)
        interpreter.core.endOfBurst()
        try interpreter.carryOut()
        let ack = try #require(io.calls.firstIndex(of: "send intake ACK 1"), "\(io.calls)")
        let sync = try #require(io.calls.firstIndex(of: "sync 1"), "\(io.calls)")
        #expect(ack < sync)
    }

    @Test("a STATUS request is answered on the route it came by, at the durable head")
    func status() throws {
        let io = RecordingIO()
        let (interpreter, _) = try interpreter(io)
        interpreter.core.receivedIntake(.success(Message(header: Header(kind: .statusRequest))), from: [3], now: F.at(1))
        try interpreter.carryOut()
        #expect(io.calls == ["send intake STATUS 0"])
        // Its journal had not synced: no sync fields.
        let quiet = try NodeStatus.decode(try #require(io.sent.last).payload)
        #expect(quiet.journalSyncs == nil && quiet.journalSyncP50Us == nil && quiet.pid == 42)
        // Once it has, the host's timings are in the answer.
        var syncs = SyncTimes()
        for micros: UInt64 in [300, 100, 200] { syncs.record(nanoseconds: micros * 1000) }
        io.syncs = syncs
        interpreter.core.receivedIntake(.success(Message(header: Header(kind: .statusRequest))), from: [4], now: F.at(1))
        try interpreter.carryOut()
        let told = try NodeStatus.decode(try #require(io.sent.last).payload)
        #expect(told.journalSyncs == 3 && told.journalSyncP50Us == 200 && told.journalSyncP99Us == 300 && told.journalSyncMaxUs == 300)
    }

    @Test("STATUS requests are answered a few a second per peer and a few hundred in all; the rest cost no status")
    func statusRateLimited() throws {
        let io = RecordingIO()
        let (interpreter, _) = try interpreter(io)
        // One peer's burst of 2,000: only a second's share is answered.
        for _ in 0..<2000 { interpreter.core.receivedIntake(.success(Message(header: Header(kind: .statusRequest))), from: [3], now: F.at(1)) }
        try interpreter.carryOut()
        #expect(io.calls.count == StatusReplies.perPeerPerSecond, "\(io.calls.count) answered")
        // Ever new peers: the rate in all holds them.
        io.calls = []
        for peer in 0..<2000 {
            interpreter.core.receivedIntake(
                .success(Message(header: Header(kind: .statusRequest))), from: [4, UInt8(peer & 0xFF), UInt8(peer >> 8)], now: F.at(1))
        }
        try interpreter.carryOut()
        #expect(io.calls.count <= StatusReplies.perSecond, "\(io.calls.count) answered")
        // A second later the first peer is answered again.
        io.clock = { 2_000 }
        io.calls = []
        interpreter.core.receivedIntake(.success(Message(header: Header(kind: .statusRequest))), from: [3], now: F.at(2))
        try interpreter.carryOut()
        #expect(io.calls.count == 1)
    }

    @Test("STATUS replies held by peers that never read stay within the budget, and come back once a probe finds the peer gone")
    func statusBudget() throws {
        let io = GoneAwareIO()
        let (interpreter, _) = try self.interpreter(io)
        var now: UInt64 = 1_000
        io.clock = { now }
        // Ever new peers that never read, over many seconds.
        for second in 0..<60 {
            now = 1_000 + UInt64(second) * 1_000
            for peer in 0..<300 {
                interpreter.core.receivedIntake(
                    .success(Message(header: Header(kind: .statusRequest))), from: [5, UInt8(second), UInt8(peer & 0xFF), UInt8(peer >> 8)],
                    now: F.at(now))
            }
            try interpreter.carryOut()
            interpreter.newTurn()
            #expect(interpreter.statusReplies.queued.total <= StatusReplies.maxQueuedBytes)
        }
        #expect(interpreter.statusReplies.queued.total > 0)
        // They leave: probes find them gone.
        io.gone = true
        for _ in 0..<20 {
            now += 10_000
            interpreter.newTurn()
        }
        #expect(interpreter.statusReplies.queued.total == 0 && interpreter.statusReplies.queued.peerCount == 0)
        #expect(interpreter.takeReleasedBytes() > 0)
    }

    /// A world whose peers read nothing until they leave (`gone`).
    final class GoneAwareIO: DispatcherIO {
        var gone = false
        var clock: () -> UInt64 = { 1_000 }
        func monotonicMilliseconds() -> UInt64 { clock() }
        func time() -> NodeTime { F.at(1) }
        func send(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> Bool { !gone }
        func deliver(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> QueuedBytes.Delivery { gone ? .gone : .sent }
        func probe(_ route: DispatcherCore.Route, peer: [UInt8]) -> QueuedBytes.Delivery { gone ? .gone : .sent }
        func publish(_ message: Message) {}
        func sync(through seq: UInt64) throws -> Bool { true }
        func keepQuarantine(_ entries: [Quarantine]) throws {}
        func outOfSpace(_ error: any Error) -> String? { nil }
        func verifyLeadership(claim: String) {}
        func steppedDown(reason: String) {}
        func statusFacts() -> DispatcherStatusFacts { DispatcherStatusFacts(pid: 42, subscribers: 0) }
    }

    /// A store's world that writes down what it is asked.
    final class RecordingStoreIO: StoreIO {
        var calls: [String] = []
        func requestReplay(_ message: Message) { calls.append("\(message.kind) \(message.header.seq)") }
        func publish(_ message: Message) {}
        func reply(to peer: [UInt8], _ message: Message) {}
        func replyStatus(to peer: [UInt8]) {}
        func dispatch(_ message: Message) {}
        func runEffects(_ effects: PendingEffects) {}
        func cancelEffects() {}
        func reconnect() throws { calls.append("reconnect") }
        func writeSnapshot(_ snapshot: StoreSnapshot) {}
    }

    @Test("a store that died twice on an action asks for its quarantine before the replay request that would reach it")
    func quarantineBeforeReplay() throws {
        let io = RecordingStoreIO()
        let core = StoreCore(
            rules: StoreRules(name: "counter", app: Counter.app()), snapshot: nil, effectClientID: 5, now: F.at(0), logger: F.logger
        ) { Counter.app().makeRuntime(format: .binary) { _, _, _ in } }
        let interpreter = StoreInterpreter(
            core: core, io: io, logger: F.logger, name: "counter", app: "counter", effectToken: 0, quarantineAsked: (3, "died twice"))
        core.start(now: F.at(0))
        try interpreter.carryOut()
        #expect(io.calls == ["QUARANTINE-REQUEST 3", "REPLAY-REQUEST 1"], "\(io.calls)")
        #expect(interpreter.quarantineAsked?.seq == 3)
    }

    @Test("a host that reports durable what was never written stops the node at that step (the cores' preconditions)")
    func wrongStepTraps() async {
        await #expect(processExitsWith: .failure) {
            let log = MemoryLog(history: HistoryID(cluster: 0xC1, epoch: 1), clientScope: ClientScope(k0: 1, k1: 2))
            let core = try DispatcherBoot.core(
                rules: DispatcherRules(apps: []), log: log, now: NodeTime(milliseconds: 0, wallNanoseconds: 0),
                logger: Logger(label: "trap") { _ in SwiftLogNoOpLogHandler() })
            core.durable(through: 1)
        }
        await #expect(processExitsWith: .failure) {
            let core = StandbyCore(
                lastSeq: 3, lastStamp: HistoryID(cluster: 0xC1, epoch: 1).rawValue, newestEpoch: 1,
                now: NodeTime(milliseconds: 0, wallNanoseconds: 0), logger: Logger(label: "trap") { _ in SwiftLogNoOpLogHandler() })
            core.durable(through: 4)
        }
    }

    @Test("a broken invariant goes to the simulator's report when one is set, and stops the process when none is")
    func invariantReport() async {
        var reported: [String] = []
        invariant(true, "holds", report: { reported.append($0) })
        invariant(false, "broken", report: { reported.append($0) })
        #expect(reported == ["broken"])
        await #expect(processExitsWith: .failure) {
            invariant(false, "broken", report: nil)
        }
    }

    @Test("two quarantine requests decided in one turn with room for one: the second is not kept (the list stays within its bound)")
    func quarantineStaysBounded() throws {
        let io = RecordingIO()
        let (interpreter, log) = try interpreter(io)
        for clientSeq in 1...2 { dispatch(UInt64(clientSeq), to: interpreter.core) }
        interpreter.core.endOfBurst()
        try interpreter.carryOut()
        #expect(log.lastSeq == 2 && interpreter.core.durableHead == 2)
        // Room for one more, as if the list had grown to its bound less one.
        let filler = (0..<UInt64(DispatcherCore.maxQuarantined - 1)).map {
            Quarantine(seq: 1_000 + $0, app: "counter", actionType: "incrementTapped", reason: "filler")
        }
        interpreter.core.quarantined(filler)
        for seq: UInt64 in 1...2 {
            let request = Message(topic: "counter", header: Header(kind: .quarantineRequest, seq: seq), payload: Array("died twice".utf8))
            interpreter.core.receivedReplayRequest(request, from: [seq == 1 ? 7 : 8])
        }
        var clock: UInt64 = 1_000
        io.clock = {
            clock += 200; return clock
        }
        try interpreter.carryOut()
        #expect(interpreter.core.quarantine.count == DispatcherCore.maxQuarantined)
        #expect(io.quarantineKept.count == 1 && io.quarantineKept.last?.count == DispatcherCore.maxQuarantined)
    }

    @Test(
        "a quarantine request is judged by the apps the asking store's app reads in the dispatcher's catalog: food may quarantine the login action that crashed it, no store may name an app it neither is nor reads"
    )
    func quarantineOfAnAppRead() throws {
        let io = RecordingIO()
        let log = MemoryLog(history: F.history, clientScope: ClientScope(k0: 1, k1: 2))
        let core = try DispatcherBoot.core(
            rules: DispatcherRules(apps: [Login.app(), Food.app(), Counter.app()]), log: log, now: F.at(0), logger: F.logger)
        let interpreter = DispatcherInterpreter(core: core, log: log, io: io, logger: F.logger)
        let login = Message(
            topic: "login", header: Header(kind: .dispatch, clientID: 9, clientSeq: 1, actionType: "loginTapped"),
            payload: try Login.app().wirePayload(type: "loginTapped", argumentsJSON: Array("{}".utf8)))
        core.receivedIntake(.success(login), from: [1], now: F.at(1))
        dispatch(2, to: core)
        core.endOfBurst()
        try interpreter.carryOut()
        #expect(log.lastSeq == 2 && core.durableHead == 2)
        var clock: UInt64 = 1_000
        io.clock = {
            clock += 200; return clock
        }
        func ask(_ app: String, _ seq: UInt64) throws {
            core.receivedReplayRequest(
                Message(topic: app, header: Header(kind: .quarantineRequest, seq: seq), payload: Array("died twice".utf8)), from: [7])
            try interpreter.carryOut()
        }
        // A store of counter naming login's action, and a store of food naming counter's: neither is its
        // app nor one it reads.
        try ask("counter", 1)
        try ask("food", 2)
        #expect(core.quarantine.isEmpty, "\(core.quarantine)")
        // A store of food, which reads login, dies on login's action in onOtherAction: it is quarantined.
        try ask("food", 1)
        #expect(core.quarantine[1]?.app == "login" && core.quarantine[1]?.actionType == "loginTapped", "\(core.quarantine)")
        #expect(core.quarantine[1]?.reason.contains("a store of food") == true)
        // An app the dispatcher does not host names no apps it reads.
        try ask("nosuchapp", 2)
        #expect(core.quarantine.count == 1)
    }
}
