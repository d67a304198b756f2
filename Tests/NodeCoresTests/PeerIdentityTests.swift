import FluxCore
import NodeCores
import Testing

@Suite("Identity: dedup and rate limits follow the authenticated peer")
struct PeerIdentityTests {
    typealias F = CoreFixtures
    static let scope = ClientScope(k0: 0x0706_0504_0302_0100, k1: 0x0F0E_0D0C_0B0A_0908)
    let victim = Array("victim-public-key".utf8), attacker = Array("attacker-public-key".utf8)

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
        let core = F.makeDispatcher(clientScope: Self.scope)
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
        let first = F.makeDispatcher(clientScope: Self.scope)
        _ = dispatch(first, principal: victim, peer: [1], client: 42, seq: 7)
        let journaled = Message(header: Header(kind: .action, seq: 1, clientID: Self.scope.clientID(victim, 42), clientSeq: 7))
        let restarted = F.makeDispatcher(head: 1, clientScope: Self.scope)
        restarted.remember(journaled.header)
        let retry = try #require(dispatch(restarted, principal: victim, peer: [9], client: 42, seq: 7))
        #expect(retry.kind == .ack && retry.header.seq == 1)
    }

    @Test("rotating client ids does not escape the rate limit of a key")
    func rotatingIDs() {
        let core = F.makeDispatcher(rate: 2, clientScope: Self.scope)
        let kinds = (1...10).compactMap { dispatch(core, principal: attacker, peer: [1], client: UInt64($0), seq: 1)?.kind }
        #expect(kinds.filter { $0 == .ack }.count == 2, "\(kinds)")
        #expect(dispatch(core, principal: victim, peer: [2], client: 1, seq: 1)?.kind == .ack, "another key has its own budget")
    }

    @Test("a key flooding new client ids evicts only its own dedup entries")
    func dedupQuotaPerPeer() {
        let core = F.makeDispatcher(clientScope: Self.scope)
        _ = dispatch(core, principal: victim, peer: [2], client: 9, seq: 1)
        for client in 1...20_000 { _ = dispatch(core, principal: attacker, peer: [1], client: UInt64(client), seq: 1) }
        #expect(dispatch(core, principal: victim, peer: [2], client: 9, seq: 1)?.header.seq == 1, "the victim's retry is still recognised")
    }
}
