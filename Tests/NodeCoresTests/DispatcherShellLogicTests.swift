import Examples
import FluxCore
import NodeCores
import Testing

/// The dispatcher's shell logic that the real loop and the simulator share: how it starts from its log
/// (`DispatcherBoot`) and how it serves replays a slice per turn (`ReplayScheduler`).
@Suite("Dispatcher start and replay scheduling, shared by the shell and the simulator")
struct DispatcherShellLogicTests {
    typealias F = CoreFixtures

    /// A log holding `count` actions of client 7 (client seq = seq).
    func log(_ count: UInt64) -> MemoryLog {
        let log = MemoryLog(history: F.history, clientScope: ClientScope(k0: 3, k1: 4))
        log.append((1...count).map { F.action($0, clientID: 7, clientSeq: $0) })
        return log
    }

    func plan(peer: UInt8, from: UInt64 = 1, through: UInt64, batchSize: Int = 2, maxBatches: Int = 64) -> ReplayPlan {
        ReplayPlan(peer: [peer], from: from, through: through, head: through, batchSize: batchSize, maxBatches: maxBatches, history: F.history)
    }

    @Test("a new history's epoch follows the recorded one, even when the clock went back; a cluster id is made once")
    func history() {
        var made = 0
        let first = DispatcherBoot.history(cluster: 0, previousEpoch: 0, wallNanoseconds: 1_800_000_000_000_000_000) {
            made += 1
            return 0xABC
        }
        #expect(first.cluster == 0xABC && made == 1)
        let back = DispatcherBoot.history(cluster: first.cluster, previousEpoch: first.epoch, wallNanoseconds: 1_700_000_000_000_000_000) {
            made += 1
            return 1
        }
        #expect(back.cluster == 0xABC && back.epoch == first.epoch + 1 && made == 1, "the clock went back: the epoch still moves on")
    }

    @Test("the core continues the log: head, first seq, history, client scope, and retries from before the restart")
    func continuesTheLog() throws {
        let log = log(3)
        let core = try DispatcherBoot.core(rules: DispatcherRules(apps: [Counter.app()]), log: log, now: F.at(0), logger: F.logger)
        #expect(core.head == 3 && core.durableHead == 3 && core.firstSeq == 1 && core.history == F.history)
        #expect(core.clientScope == ClientScope(k0: 3, k1: 4))
        let retry = Message(
            topic: "counter", header: Header(kind: .dispatch, clientID: 7, clientSeq: 2, actionType: "incrementTapped"), payload: F.increment)
        core.receivedIntake(.success(retry), from: [1], now: F.at(1))
        core.endOfBurst()
        let commands = core.takeCommands()
        #expect(commands.compactMap(\.appended).isEmpty, "a retry is not sequenced again")
        #expect(commands.compactMap(\.intakeReply).map(\.header.seq) == [2], "it is answered with its first seq")
    }

    @Test("only the newest dispatches are remembered, and none the log no longer holds")
    func rememberedWindow() {
        let window = DispatcherCore.dedupRecoveryRecords
        final class Held: ActionLog {
            var lastSeq: UInt64
            var firstSeq: UInt64
            init(first: UInt64, last: UInt64) {
                firstSeq = first
                lastSeq = last
            }
            var history: HistoryID { HistoryID(rawValue: 0) }
            var clientScope: ClientScope { ClientScope(k0: 0, k1: 0) }
            var sizeInBytes: Int { 0 }
            func append(_ actions: [Message]) {}
            func commit() {}
            func read(from: UInt64, limit: Int) -> [Message] { [] }
        }
        #expect(DispatcherBoot.rememberedFrom(Held(first: 1, last: 10)) == 1)
        #expect(DispatcherBoot.rememberedFrom(Held(first: 1, last: window + 10)) == 11)
        #expect(DispatcherBoot.rememberedFrom(Held(first: 500, last: 1000)) == 500)
    }

    @Test("replays share each turn's budget in turn, and an answer continues on the next turn")
    func slicesInTurn() throws {
        let log = log(12)
        var scheduler = ReplayScheduler()
        scheduler.queue(plan(peer: 1, through: 12), now: 0)
        scheduler.queue(plan(peer: 2, through: 12), now: 0)
        var sent: [(peer: UInt8, kind: MessageKind)] = []
        func turn() {
            scheduler.serve(
                budget: 1, now: 0, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) },
                deliver: { peer, message in
                    sent.append((peer[0], message.kind))
                    return .sent
                }, probe: { _ in (.gone, 0) }, logger: F.logger)
        }
        turn()
        #expect(sent.map(\.peer) == [1], "a budget of one byte serves one batch")
        turn()
        #expect(sent.map(\.peer) == [1, 2], "then the other peer's turn")
        for _ in 0..<20 where !scheduler.isEmpty { turn() }
        #expect(scheduler.isEmpty)
        for peer: UInt8 in [1, 2] {
            let kinds = sent.filter { $0.peer == peer }.map(\.kind)
            #expect(kinds == Array(repeating: .replayBatch, count: 6) + [.replayEnd], "peer \(peer): six batches of two, then the end")
        }
    }

    @Test("a newer request from a peer replaces its answer in progress")
    func newerReplaces() {
        let log = log(12)
        var scheduler = ReplayScheduler()
        scheduler.queue(plan(peer: 1, through: 12), now: 0)
        scheduler.queue(plan(peer: 1, from: 9, through: 12), now: 0)
        #expect(scheduler.inProgress.map(\.from) == [9])
        var first: UInt64?
        scheduler.serve(
            budget: .max, now: 0, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) },
            deliver: { _, message in
                if message.kind == .replayBatch && first == nil { first = message.header.seq }
                return .sent
            }, probe: { _ in (.gone, 0) }, logger: F.logger)
        #expect(first == 9)
    }

    @Test("a peer that does not read keeps its answer waiting for a second, then loses it, and its requests are dropped for a while")
    func stalledPeer() {
        let log = log(12)
        var scheduler = ReplayScheduler()
        scheduler.queue(plan(peer: 1, through: 12), now: 100)
        var attempts = 0
        func turn(_ now: UInt64) {
            scheduler.serve(
                budget: .max, now: now, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) },
                deliver: { _, _ in
                    attempts += 1
                    return .full
                }, probe: { _ in (.full, 0) }, logger: F.logger)
        }
        turn(100)
        #expect(attempts == 1 && !scheduler.isEmpty && scheduler.nextServiceMs(now: 100) == ReplayScheduler.retryMilliseconds, "it waits")
        turn(100 + StalledPeers.pauseMilliseconds - 1)
        #expect(attempts == 2 && !scheduler.isEmpty)
        turn(100 + StalledPeers.pauseMilliseconds)
        #expect(attempts == 3 && scheduler.isEmpty, "after a pause without a delivery the answer is dropped")
        scheduler.queue(plan(peer: 1, through: 12), now: 100 + 2 * StalledPeers.pauseMilliseconds - 1)
        #expect(scheduler.isEmpty, "asked again too soon: dropped")
        scheduler.queue(plan(peer: 1, through: 12), now: 100 + 2 * StalledPeers.pauseMilliseconds)
        #expect(!scheduler.isEmpty, "after the pause, served again")
    }

    @Test("an answer whose queue was full goes on from the batch that did not go, with nothing skipped or sent twice")
    func fullQueueResumes() throws {
        let log = log(12)
        var scheduler = ReplayScheduler()
        scheduler.queue(plan(peer: 1, through: 12), now: 0)
        var delivered: [UInt64] = []
        var room = 2
        for now: UInt64 in 0..<20 where !scheduler.isEmpty {
            scheduler.serve(
                budget: 1, now: now, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) },
                deliver: { _, message in
                    guard room > 0 else { return .full }
                    room -= 1
                    if message.kind == .replayBatch { delivered.append(message.header.seq) }
                    return .sent
                }, probe: { _ in (.sent, 0) }, logger: F.logger)
            if now.isMultiple(of: 3) { room += 1 }
        }
        #expect(scheduler.isEmpty)
        #expect(delivered == [1, 3, 5, 7, 9, 11])
    }

    @Test("replay bytes held in libzmq stay within the budget across peers that never read, and come back when they leave")
    func budgetAcrossPeers() throws {
        // Actions of 500 KB: each batch of two is about 1 MB, and forty peers' windows of five would hold 200 MB.
        let big = [UInt8](repeating: 7, count: 500_000)
        let log = MemoryLog(history: F.history, clientScope: ClientScope(k0: 3, k1: 4))
        log.append(
            (1...100).map { seq in
                Message(
                    topic: Array("counter".utf8), header: Header(kind: .action, seq: seq, actionType: "incrementTapped", history: F.history.rawValue),
                    payload: big)
            })
        var scheduler = ReplayScheduler()
        // Forty peers that take every message into a queue they never read, up to its high-water mark.
        var queues: [UInt8: Int] = [:]
        var gone: Set<UInt8> = []
        func deliver(_ peer: [UInt8]) -> QueuedBytes.Delivery {
            if gone.contains(peer[0]) { return .gone }
            guard queues[peer[0], default: 0] < ReplayScheduler.queueMessages else { return .full }
            queues[peer[0], default: 0] += 1
            return .sent
        }
        var most = 0
        for now: UInt64 in 0..<3000 {
            if now.isMultiple(of: 50) { for peer: UInt8 in 1...40 { scheduler.queue(plan(peer: peer, through: 100), now: now) } }
            scheduler.serve(
                budget: ReplayScheduler.bytesPerTurn, now: now, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) },
                deliver: { peer, _ in deliver(peer) }, probe: { peer in (deliver(peer), 0) }, logger: F.logger)
            most = max(most, scheduler.queued.total)
            #expect(scheduler.queued.total <= ReplayScheduler.maxQueuedBytes)
            for peer: UInt8 in 1...40 { #expect(scheduler.queued.held(by: [peer]) <= ReplayScheduler.maxQueuedBytesPerPeer) }
        }
        #expect(most > ReplayScheduler.maxQueuedBytes / 2, "the flood filled the budget (\(most) bytes)")
        // They leave: probes find them gone, and the budget is empty again.
        for peer: UInt8 in 1...40 { gone.insert(peer) }
        for now: UInt64 in 3000..<(3000 + 2 * StalledPeers.pauseMilliseconds) {
            scheduler.serve(
                budget: ReplayScheduler.bytesPerTurn, now: now, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) },
                deliver: { peer, _ in deliver(peer) }, probe: { peer in (deliver(peer), 0) }, logger: F.logger)
        }
        #expect(scheduler.queued.total == 0 && scheduler.queued.peerCount == 0)
        #expect(scheduler.takeReleased() > 0)
    }

    @Test("a peer that reads large batches is held back by its share only until a probe shows what it took: a turn or two, not a probe's gap")
    func shareDoesNotSlowAReader() throws {
        let big = [UInt8](repeating: 7, count: 500_000)
        let log = MemoryLog(history: F.history, clientScope: ClientScope(k0: 3, k1: 4))
        log.append(
            (1...80).map { seq in
                Message(
                    topic: Array("counter".utf8), header: Header(kind: .action, seq: seq, actionType: "incrementTapped", history: F.history.rawValue),
                    payload: big)
            })
        var scheduler = ReplayScheduler()
        scheduler.queue(plan(peer: 1, through: 80, maxBatches: 1000), now: 0)
        var turns: UInt64 = 0
        var batches = 0
        while !scheduler.isEmpty && turns < 10_000 {
            scheduler.serve(
                budget: ReplayScheduler.bytesPerTurn, now: turns, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) },
                deliver: { _, message in
                    if message.kind == .replayBatch { batches += 1 }
                    return .sent
                }, probe: { _ in (.sent, 0) }, logger: F.logger)
            turns += 1
        }
        // One answer: nine batches of about 1 MB (it ends past 8 MiB); four fit the peer's 4 MiB share
        // at a time. Waiting a probe's gap each time the share is full took over 40 turns.
        #expect(batches == 9 && scheduler.isEmpty, "\(batches) batches")
        #expect(turns <= 20, "\(turns) turns")
    }

    @Test("a peer that reads releases what it held: after its answer, probes move the window on until nothing is counted")
    func readerReleases() throws {
        let log = log(12)
        var scheduler = ReplayScheduler()
        scheduler.queue(plan(peer: 1, through: 12), now: 0)
        var now: UInt64 = 0
        while now < 5000 && (!scheduler.isEmpty || scheduler.queued.total > 0) {
            scheduler.serve(
                budget: .max, now: now, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) }, deliver: { _, _ in .sent },
                probe: { _ in (.sent, 10) }, logger: F.logger)
            now += 1
        }
        #expect(scheduler.isEmpty && scheduler.queued.total == 0 && scheduler.queued.peerCount == 0, "released by \(now) ms")
    }

    @Test("answers in progress are bounded")
    func bounded() {
        var scheduler = ReplayScheduler(maxConcurrent: 2)
        for peer: UInt8 in 1...3 { scheduler.queue(plan(peer: peer, through: 4), now: 0) }
        #expect(scheduler.inProgress.map(\.peer) == [[1], [2]])
    }
}
