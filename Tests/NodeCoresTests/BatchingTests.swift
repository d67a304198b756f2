import Examples
import FluxCore
import NodeCores
import Testing

/// Protocol 3's batches: what a durable burst publishes and answers, and what a store makes of it.
@Suite("Batching: ACTION-BATCH per run of one app, ACK-BATCH per asking client")
struct BatchingTests {
    typealias F = CoreFixtures

    static let addTodo: [UInt8] = {
        do {
            return try Todo.app(environment: .mock()).wirePayload(type: "addTodo", argumentsJSON: Array(#"{"title":"milk"}"#.utf8))
        } catch {
            Issue.record(error, "todo's addTodo payload")
            return []
        }
    }()

    func dispatch(_ clientSeq: UInt64, client: UInt64 = 1, app: String = "counter", batched: Bool = false) -> Result<Message, ProtocolError> {
        let payload = app == "counter" ? F.increment : BatchingTests.addTodo
        return .success(
            Message(
                topic: app,
                header: Header(
                    kind: .dispatch, flags: batched ? .batchReplies : [], clientID: client, clientSeq: clientSeq,
                    actionType: app == "counter" ? "incrementTapped" : "addTodo"), payload: payload))
    }

    @Test("a durable burst goes out as one message per run of one app's actions, in seq order; a lone action stays an ACTION")
    func actionBatches() throws {
        let core = F.makeDispatcher(apps: [Counter.app(), Todo.app(environment: .mock())])
        for (seq, app) in ["counter", "counter", "counter", "todo", "counter"].enumerated() {
            core.receivedIntake(dispatch(UInt64(seq + 1), app: app), from: [1], now: F.at(0))
        }
        core.endOfBurst()
        let refusals = core.takeCommands().compactMap(\.intakeReply).map { String(decoding: $0.payload, as: UTF8.self) }
        try #require(core.head == 5, "refused: \(refusals)")
        core.durable(through: 5)
        let published = core.takeCommands().compactMap(\.published)
        #expect(published.map(\.kind) == [.actionBatch, .action, .action])
        #expect(published.map(\.topicString) == ["counter", "todo", "counter"])
        let batch = try #require(published.first)
        #expect(batch.header.seq == 1 && batch.header.ref == 3 && batch.header.history == F.history.rawValue)
        let unpacked = try published.flatMap { try ActionBatch.unpack($0) }
        #expect(unpacked.map(\.header.seq) == [1, 2, 3, 4, 5], "the same ACTIONs, in the same order, as unbatched")
        #expect(unpacked.allSatisfy { $0.kind == .action })
    }

    @Test(
        "a DISPATCH-BATCH's entries, admitted where they lie in the batch, are journaled byte for byte as the same DISPATCHes sent alone, and published the same; a bad entry is refused alone"
    )
    func batchEntriesInPlace() throws {
        let apps: [any AnyApp] = [Counter.app(), Todo.app(environment: .mock())]
        let sequence = ["counter", "todo", "counter", "counter", "todo"]
        func journaled(_ core: DispatcherCore) throws -> (records: [UInt8], published: [Message]) {
            core.endOfBurst()
            let commands = core.takeCommands()
            let records = try #require(commands.compactMap { if case .append(let r) = $0 { r } else { nil } }.first)
            core.durable(through: core.head)
            return (records.bytes, core.takeCommands().compactMap(\.published))
        }
        let alone = F.makeDispatcher(apps: apps)
        for (index, app) in sequence.enumerated() {
            alone.receivedIntake(dispatch(UInt64(index + 1), app: app, batched: true), from: [1], now: F.at(0))
        }
        let batched = F.makeDispatcher(apps: apps)
        var entries = try sequence.enumerated().map { index, app in try dispatch(UInt64(index + 1), app: app).get() }
        // One entry whose payload is not the action its header names: refused, and the others taken.
        entries.insert(
            Message(
                topic: "counter", header: Header(kind: .dispatch, clientID: 1, clientSeq: 99, actionType: "incrementTapped"), payload: [0xB1, 0x09]),
            at: 2)
        batched.receivedIntake(.success(DispatchBatch.message(entries)), from: [1], now: F.at(0))
        let (one, many) = (try journaled(alone), try journaled(batched))
        #expect(batched.head == 5 && batched.rejected == 1)
        #expect(many.records == one.records, "the same records, byte for byte")
        #expect(many.published == one.published)
    }

    @Test("a batch closes at 512 actions")
    func batchCap() throws {
        let actions = (1...1100).map { F.action(UInt64($0)) }
        let messages = ActionBatch.messages(for: actions, history: 9)
        #expect(messages.map(\.kind) == [.actionBatch, .actionBatch, .actionBatch])
        #expect(try messages.map { try ActionBatch.actions(of: $0).count } == [512, 512, 76])
    }

    @Test("a client that asks gets one ACK-BATCH per burst; one that does not gets an ACK each")
    func ackBatches() throws {
        let core = F.makeDispatcher()
        for clientSeq: UInt64 in 1...3 { core.receivedIntake(dispatch(clientSeq, client: 7, batched: true), from: [7], now: F.at(1)) }
        for clientSeq: UInt64 in 1...2 { core.receivedIntake(dispatch(clientSeq, client: 8), from: [8], now: F.at(1)) }
        core.endOfBurst()
        _ = core.takeCommands()
        core.durable(through: 5)
        let replies = core.takeCommands().compactMap(\.intakeReply)
        #expect(replies.map(\.kind) == [.ackBatch, .ack, .ack])
        let batch = try AckBatch(try #require(replies.first))
        #expect(batch.entries.map(\.clientSeq) == [1, 2, 3] && batch.entries.map(\.seq) == [1, 2, 3])
        #expect(batch.entries.allSatisfy { $0.clientID == 7 && $0.timestamp > 0 } && batch.history == F.history.rawValue)
        #expect(replies.dropFirst().map(\.header.clientID) == [8, 8])
        // A lone ACK is sent as an ACK, even to a client that reads batches.
        core.receivedIntake(dispatch(4, client: 7, batched: true), from: [7], now: F.at(1))
        core.endOfBurst()
        core.durable(through: 6)
        #expect(core.takeCommands().compactMap(\.intakeReply).map(\.kind) == [.ack])
    }

    @Test("ACK-BATCH round-trips, and a count that disagrees with the bytes is refused")
    func ackBatchCoding() throws {
        let batch = AckBatch(
            entries: [.init(seq: 5, clientID: 1, clientSeq: 2, timestamp: -3), .init(seq: 6, clientID: 1, clientSeq: 3, timestamp: 4)], history: 11)
        #expect(try AckBatch(batch.message) == batch)
        #expect(batch.acks.map(\.header.seq) == [5, 6] && batch.acks.allSatisfy { $0.kind == .ack && $0.header.history == 11 })
        var short = batch.message
        short.payload.removeLast()
        #expect(throws: ProtocolError.self) { try AckBatch(short) }
        var lying = batch.message
        lying.header.seq = 3
        #expect(throws: ProtocolError.self) { try AckBatch(lying) }
    }

    @Test("an ACTION-BATCH whose header disagrees with its actions, or that mixes apps, is refused")
    func actionBatchChecks() throws {
        let good = try #require(ActionBatch.messages(for: [F.action(1), F.action(2)], history: 0).first)
        var wrongRange = good
        wrongRange.header.ref = 3
        #expect(throws: ProtocolError.self) { try ActionBatch.actions(of: wrongRange) }
        var otherTopic = good
        otherTopic.topic = Array("todo".utf8)
        #expect(throws: ProtocolError.self) { try ActionBatch.actions(of: otherTopic) }
        let backwards = Message(
            topic: "counter", header: Header(kind: .actionBatch, seq: 2, ref: 1), payload: ReplayBatch.encode([F.action(2), F.action(1)]))
        #expect(throws: ProtocolError.self) { try ActionBatch.actions(of: backwards) }
    }

    @Test("a store applies a batch's actions as if each had come alone, and repairs a batch that does not decode as a gap")
    func storeReadsBatches() throws {
        var made: [RecordingRuntime] = []
        let core = StoreCore(rules: F.storeRules(), snapshot: nil, effectClientID: 7, now: F.at(0), logger: F.logger) {
            let runtime = RecordingRuntime()
            made.append(runtime)
            return runtime
        }
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        _ = core.takeCommands()
        let batches = ActionBatch.messages(for: (1...3).map { F.action($0) }, history: 0)
        core.receivedFromDispatcher(try #require(batches.first), now: F.at(2))
        #expect(core.version == 3 && made.last?.count == 3)
        var broken = try #require(ActionBatch.messages(for: (4...5).map { F.action($0) }, history: 0).first)
        broken.payload[0] = 0xFF
        core.receivedFromDispatcher(broken, now: F.at(3))
        #expect(core.version == 3, "nothing of a malformed batch applies")
        core.receivedFromDispatcher(F.action(6), now: F.at(4))
        #expect(core.version == 3 && core.takeCommands().compactMap(\.replayFrom) == [4], "the next action shows the gap, and a replay fills it")
    }

    @Test("the effects' actions of one turn go to the intake as one DISPATCH-BATCH, and one ACK-BATCH answers them all")
    func effectsBatch() throws {
        let core = StoreCore(rules: F.storeRules(), snapshot: nil, effectClientID: 7, now: F.at(0), logger: F.logger) { RecordingRuntime() }
        core.start(now: F.at(0))
        _ = core.takeCommands()
        core.effectSent(app: "counter", type: "incrementTapped", payload: F.increment, now: F.at(1))
        let lone = core.takeCommands().compactMap(\.dispatched)
        #expect(lone.map(\.kind) == [.dispatch], "one effect's action alone is a DISPATCH")
        for _ in 0..<3 { core.effectSent(app: "counter", type: "incrementTapped", payload: F.increment, now: F.at(2)) }
        let sent = core.takeCommands().compactMap(\.dispatched)
        try #require(sent.count == 1)
        let entries = try DispatchBatch.dispatches(of: sent[0])
        #expect(entries.map(\.header.clientSeq) == [2, 3, 4] && entries.allSatisfy { $0.header.clientID == 7 })
        #expect(core.status(now: F.at(3), subscribers: 0, pid: 1).effectsUnanswered == 4)
        let acks = AckBatch(entries: (1...4).map { AckBatch.Entry(seq: $0, clientID: 7, clientSeq: $0, timestamp: 0) }, history: 0)
        core.receivedIntakeReply(acks.message)
        #expect(core.status(now: F.at(4), subscribers: 0, pid: 1).effectsUnanswered == 0, "the ACK-BATCH answers every one")
    }

    @Test(
        "batches of DISPATCHes close at 1,024 or about 1 MiB, a large one goes alone, and a batch that claims fewer than it holds is refused before it is read"
    )
    func dispatchBatchLimits() throws {
        let small = try dispatch(1).get()
        #expect(DispatchBatch.messages(for: Array(repeating: small, count: 2_500)).map(\.header.seq) == [1024, 1024, 452])
        var large = small
        large.payload = Array(repeating: 7, count: 700_000)
        let split = DispatchBatch.messages(for: [small, large, large, small])
        #expect(split.map(\.kind) == [.dispatchBatch, .dispatchBatch], "700 kB each: two to a batch would pass 1 MiB")
        #expect(split.map(\.header.seq) == [2, 2])
        var liar = DispatchBatch.message(Array(repeating: small, count: 3))
        liar.header.seq = 1
        #expect(throws: ProtocolError.self) { try DispatchBatch.dispatches(of: liar) }
    }

    @Test("a store whose batch of effects a dispatcher cannot read (older than DISPATCH-BATCH) sends them one at a time from then on")
    func effectsFallBack() throws {
        let core = StoreCore(rules: F.storeRules(), snapshot: nil, effectClientID: 7, now: F.at(0), logger: F.logger) { RecordingRuntime() }
        core.start(now: F.at(0))
        _ = core.takeCommands()
        for _ in 0..<2 { core.effectSent(app: "counter", type: "incrementTapped", payload: F.increment, now: F.at(1)) }
        #expect(core.takeCommands().compactMap(\.dispatched).map(\.kind) == [.dispatchBatch])
        // What a dispatcher of protocol 3 before kind 25 answers: a NACK for no client.
        core.receivedIntakeReply(Message(header: Header(kind: .nack), payload: Array("bad message: message kind 25 is unknown".utf8)))
        core.tick(now: F.at(10_000))
        let again = core.takeCommands().compactMap(\.dispatched)
        #expect(again.map(\.kind) == [.dispatch, .dispatch] && again.map(\.header.clientSeq) == [1, 2])
    }

    @Test("the new kinds are written as protocol 3, the others still as 2, and a reader takes 1 to 3")
    func versions() throws {
        #expect(Header(kind: .actionBatch).encoded()[2] == 3 && Header(kind: .ackBatch).encoded()[2] == 3)
        #expect(Header(kind: .ack).encoded()[2] == 2 && Header(kind: .action).encoded()[2] == 2)
        var four = Header(kind: .ack).encoded()
        four[2] = 4
        #expect(throws: ProtocolError.self) { try Header(decoding: four) }
    }

    @Test(
        "a DISPATCH-BATCH is taken as its DISPATCHes one by one: the good ones sequenced in order and answered by one ACK-BATCH, a bad one NACKed alone by its client seq, a resent batch sequencing nothing twice"
    )
    func dispatchBatches() throws {
        let core = F.makeDispatcher(apps: [Counter.app(), Todo.app(environment: .mock())])
        var refused = try dispatch(2, client: 4, app: "todo").get()
        refused.header.actionType = "noSuchAction"
        let entries = [try dispatch(1, client: 4).get(), refused, try dispatch(3, client: 4, app: "todo").get(), try dispatch(4, client: 4).get()]
        let batch = DispatchBatch.message(entries)
        #expect(try DispatchBatch.dispatches(of: batch) == entries, "what was packed is what is read")
        core.receivedIntake(.success(batch), from: [1], now: F.at(0))
        core.endOfBurst()
        let nacks = core.takeCommands().compactMap(\.intakeReply)
        #expect(nacks.map(\.kind) == [.nack] && nacks.first?.header.clientSeq == 2, "only the bad entry is refused, by its own client seq")
        #expect(core.head == 3)
        core.durable(through: 3)
        let replies = core.takeCommands().compactMap(\.intakeReply)
        #expect(replies.map(\.kind) == [.ackBatch], "the three ACKs come together, though no entry asked for ACK-BATCH itself")
        let acks = try AckBatch(try #require(replies.first)).entries
        #expect(acks.map(\.clientSeq) == [1, 3, 4] && acks.map(\.seq) == [1, 2, 3])

        // The same batch again (a client that heard nothing): answered from the dedup table.
        core.receivedIntake(.success(batch), from: [1], now: F.at(1))
        core.endOfBurst()
        #expect(core.head == 3, "nothing is sequenced twice")
        let again = core.takeCommands().compactMap(\.intakeReply)
        #expect(again.filter { $0.kind == .nack }.count == 1)
        let repeated = try again.filter { $0.kind != .nack }.flatMap { try AckBatch.unpack($0) }
        #expect(repeated.map(\.header.seq) == [1, 2, 3])
    }

    @Test("a DISPATCH-BATCH that is not what it says is refused whole, and nothing in it is sequenced")
    func malformedDispatchBatches() throws {
        let core = F.makeDispatcher()
        let good = DispatchBatch.message([try dispatch(1).get(), try dispatch(2).get()])
        var miscounted = good
        miscounted.header.seq = 3
        var holdsAnAction = good
        holdsAnAction.payload = ReplayBatch.encode([F.action(1), F.action(2)])
        var empty = good
        empty.header.seq = 0
        empty.payload = ReplayBatch.encode([])
        for bad in [miscounted, holdsAnAction, empty] {
            #expect(throws: ProtocolError.self) { try DispatchBatch.dispatches(of: bad) }
            core.receivedIntake(.success(bad), from: [1], now: F.at(0))
            core.endOfBurst()
            let replies = core.takeCommands().compactMap(\.intakeReply)
            #expect(replies.map(\.kind) == [.nack] && String(decoding: replies[0].payload, as: UTF8.self).hasPrefix("bad message"))
        }
        #expect(core.head == 0)
    }
}
