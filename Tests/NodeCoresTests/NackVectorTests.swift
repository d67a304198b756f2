import Examples
import FluxCore
import Foundation
import NodeCores
import Testing

private typealias F = CoreFixtures

/// The NACKs of docs/protocol-vectors/vectors.json are what a dispatcher sends, byte for byte: a client
/// written from the vectors matches the refusals it will really get. (ProtocolVectorTests checks the
/// bytes against their meaning; this checks the meaning against the dispatcher.)
@Suite("The NACK vectors are the dispatcher's own")
struct NackVectorTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/protocol-vectors/vectors.json")

    /// The message vector named `name`, as its three frames.
    static func vector(_ name: String) throws -> Message {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        let messages = try #require(object?["messages"] as? [[String: Any]], "vectors.json has messages")
        let found = try #require(messages.first { $0["name"] as? String == name }, "vectors.json has a message named \(name)")
        let topic = try #require(found["topic"] as? String), header = try #require(found["headerHex"] as? String)
        let payload = try #require(found["payloadHex"] as? String)
        return try Message(frames: [Array(topic.utf8), try bytes(header), try bytes(payload)])
    }

    static func bytes(_ hex: String) throws -> [UInt8] {
        let digits = Array(hex.utf8)
        return try stride(from: 0, to: digits.count, by: 2).map { at in
            try #require(UInt8(String(decoding: digits[at..<min(at + 2, digits.count)], as: UTF8.self), radix: 16), "hex at \(at)")
        }
    }

    /// What the dispatcher answers `received`.
    static func answer(_ core: DispatcherCore, _ received: Result<Message, ProtocolError>) -> [Message] {
        core.receivedIntake(received, from: [1], now: F.at(0))
        core.endOfBurst()
        return core.takeCommands().compactMap(\.intakeReply)
    }

    static func dispatch(to app: String, like nack: Message) -> Result<Message, ProtocolError> {
        .success(
            Message(
                topic: app,
                header: Header(kind: .dispatch, clientID: nack.header.clientID, clientSeq: nack.header.clientSeq, actionType: "addTapped"),
                payload: Array("{}".utf8)))
    }

    @Test("the unknown-app NACK: a dispatcher of counter and todo refuses a DISPATCH to 'countr' with the vector's frames")
    func unknownApp() throws {
        let vector = try Self.vector("NACK")
        let core = F.makeDispatcher(apps: [Counter.app(), Todo.app(environment: .mock())])
        #expect(Self.answer(core, Self.dispatch(to: "countr", like: vector)) == [vector])
    }

    @Test("the not-leader NACK: a dispatcher whose lease ran out refuses a DISPATCH with the vector's frames")
    func notLeader() throws {
        let vector = try Self.vector("NACK from a dispatcher that does not lead")
        let core = F.makeDispatcher()
        core.leaseExpired()
        _ = core.takeCommands()
        #expect(Self.answer(core, Self.dispatch(to: "counter", like: vector)) == [vector])
    }

    @Test("the unreadable-message NACK: a header without the magic gets the vector's frames")
    func unreadable() throws {
        let vector = try Self.vector("NACK for a message that could not be read")
        var header = Header(kind: .dispatch, clientID: 7, clientSeq: 1, actionType: "incrementTapped").encoded()
        header[1] = 0x47
        let received: Result<Message, ProtocolError>
        do {
            received = .success(try Message(frames: [Array("counter".utf8), header, F.increment]))
        } catch {
            received = .failure(error)
        }
        #expect(Self.answer(F.makeDispatcher(), received) == [vector])
    }

    @Test("a DISPATCH-BATCH refused whole: one NACK for client id 0 and client seq 0, whose words name a DISPATCH batch, not a replay")
    func wholeBatch() throws {
        let core = F.makeDispatcher()
        let holdsAnAck = Message(
            header: Header(kind: .dispatchBatch, flags: .batchReplies, seq: 1), payload: ReplayBatch.encode([Message(header: Header(kind: .ack))]))
        var claims: [UInt8] = []
        claims.appendLittleEndian(UInt32(100))
        claims += [UInt8](repeating: 0, count: 20)
        let claimsTooMany = Message(header: Header(kind: .dispatchBatch, flags: .batchReplies, seq: 100), payload: claims)
        let replies = Self.answer(core, .success(holdsAnAck)) + Self.answer(core, .success(claimsTooMany))
        #expect(replies.map(\.kind) == [.nack, .nack])
        #expect(replies.allSatisfy { $0.header.clientID == 0 && $0.header.clientSeq == 0 }, "the whole batch's NACK names no client")
        #expect(
            replies.map { String(decoding: $0.payload, as: UTF8.self) } == [
                "bad message: a batch of DISPATCH messages holds one of kind ACK",
                "bad message: a batch of DISPATCH messages claims 100 entries in 24 bytes",
            ])
        #expect(core.head == 0, "nothing in a batch refused whole is sequenced")
    }
}
