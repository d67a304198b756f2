import Examples
import FluxCore
import NodeCores
import Testing

extension DispatcherCore.Command {
    var appended: [Message]? { if case .append(let records) = self { try? records.messages() } else { nil } }
    var published: Message? { if case .publish(let m) = self { m } else { nil } }
    var intakeReply: Message? { if case .reply(.intake, _, let m) = self { m } else { nil } }
    var replayPlan: ReplayPlan? { if case .serveReplay(let plan) = self { plan } else { nil } }
}

@Suite("Dispatcher core: sequencing, durability, dedup, refusals, replay")
struct DispatcherCoreTests {
    typealias F = CoreFixtures

    func dispatch(clientID: UInt64 = 1, clientSeq: UInt64, app: String = "counter", payload: [UInt8] = F.increment) -> Result<Message, ProtocolError>
    {
        .success(
            Message(
                topic: app, header: Header(kind: .dispatch, clientID: clientID, clientSeq: clientSeq, actionType: "incrementTapped"), payload: payload
            ))
    }

    @Test("nothing is published or acknowledged before the journal says it is durable")
    func durableBeforeAck() {
        let core = F.makeDispatcher()
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
        let core = F.makeDispatcher()
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

        let restarted = F.makeDispatcher(head: 1)
        restarted.remember(F.action(1, clientID: 1, clientSeq: 1).header)
        restarted.receivedIntake(dispatch(clientSeq: 1), from: [1], now: F.at(2))
        restarted.endOfBurst()
        #expect(restarted.takeCommands().compactMap(\.intakeReply).map(\.header.seq) == [1])
        #expect(restarted.head == 1)
    }

    @Test("bad input is refused with a reason and changes nothing")
    func refusals() {
        let core = F.makeDispatcher()
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
        let core = F.makeDispatcher()
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
        let core = F.makeDispatcher(head: 20, firstSeq: 11)
        core.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: 1)), from: [9])
        let end = try #require(core.takeCommands().compactMap { if case .reply(.replay, _, let m) = $0 { m } else { nil } }.first)
        #expect(end.kind == .replayEnd && end.header.flags.contains(.historyTruncated) && end.header.ref == 11 && end.header.seq == 20)
        core.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: 11)), from: [9])
        #expect(core.takeCommands().compactMap(\.replayPlan).first?.from == 11, "from the first seq on, replay as usual")
    }

    @Test("heartbeats announce the durable head once per interval")
    func heartbeats() {
        let core = F.makeDispatcher(head: 4)
        core.tick(now: F.at(0))
        core.tick(now: F.at(100))
        core.tick(now: F.at(200))
        #expect(core.takeCommands().compactMap(\.published).map(\.header.seq) == [4, 4])
    }
}

extension DispatcherCoreTests {
    @Test(
        "an app with neither validate nor middleware: a binary payload that names a case of its catalog and holds together is sequenced without a decode, and its store refuses it if it does not decode; a malformed one, or an app with validate, is decoded and refused at the intake as before"
    )
    func admissionChecksStructureInPlace() throws {
        let core = F.makeDispatcher(apps: [Counter.app(), Ledger.app()])
        // Holds together and names addTapped, but its amount is a string.
        let wrongType = try BinaryPayloadCodec(generated: false).encode(["addTapped": ["amount": "five"]])
        let negative = try BinaryPayloadCodec().encode(Ledger.Action.post(account: -1, amount: 1, memo: ""))
        func dispatch(_ app: String, _ type: String, _ payload: [UInt8], _ clientSeq: UInt64) -> Result<Message, ProtocolError> {
            .success(Message(topic: app, header: Header(kind: .dispatch, clientID: 1, clientSeq: clientSeq, actionType: type), payload: payload))
        }
        core.receivedIntake(dispatch("counter", "addTapped", wrongType, 1), from: [1], now: F.at(0))
        core.receivedIntake(dispatch("counter", "addTapped", Array(wrongType.dropLast()), 2), from: [1], now: F.at(0))
        core.receivedIntake(dispatch("counter", "incrementTapped", wrongType, 3), from: [1], now: F.at(0))
        core.receivedIntake(dispatch("ledger", "post", negative, 4), from: [1], now: F.at(0))
        core.endOfBurst()
        let burst = core.takeCommands()
        #expect(burst.compactMap(\.appended).flatMap { $0 }.map(\.payload) == [wrongType], "only the well-formed one is sequenced, as it came")
        core.durable(through: core.head)
        let replies = (burst + core.takeCommands()).compactMap(\.intakeReply)
        let answers = replies.map { ($0.header.clientSeq, $0.header.kind, String(decoding: $0.payload, as: UTF8.self)) }
        #expect(answers.first { $0.0 == 1 }?.1 == .ack)
        #expect(answers.first { $0.0 == 2 }?.1 == .nack, "truncated: decoded, and refused")
        #expect(answers.first { $0.0 == 3 }?.1 == .nack, "a payload that names another case than the header's: decoded, and refused")
        #expect(answers.first { $0.0 == 4 }.map { $0.1 == .nack && $0.2.contains("account must not be negative") } == true, "\(answers)")

        // Each store of the app refuses it the same way, leaving its state as it was.
        let runtime = Counter.app().makeRuntime { _, _, _ in }
        let before = try runtime.encodedState()
        #expect(throws: ActionError.self) {
            _ = try runtime.reduce(app: "counter", actionType: "addTapped", payload: wrongType, stamp: Stamp(seq: 1, wallNanoseconds: 0))
        }
        #expect(try runtime.encodedState() == before)
    }
}
