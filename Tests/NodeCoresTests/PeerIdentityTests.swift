import FluxCore
import Testing

@testable import NodeCores

@Suite("Identity: dedup and rate limits follow the authenticated peer")
struct PeerIdentityTests {
    typealias F = CoreFixtures
    static let scope = ClientScope(k0: 0x0706_0504_0302_0100, k1: 0x0F0E_0D0C_0B0A_0908)
    let victim = Array("victim-public-key".utf8), attacker = Array("attacker-public-key".utf8)

    func dispatch(_ core: DispatcherCore, principal: [UInt8]?, peer: [UInt8], client: UInt64, seq: UInt64) -> Message? {
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

    @Test("ten connections flooding 1,024 fresh client ids each do not evict an honest client: its retry gets its first seq")
    func dedupFloodOfConnections() throws {
        // Without CURVE an owner is a connection: each flooder is one, under its per-owner cap.
        let core = F.makeDispatcher()
        let first = try #require(dispatch(core, principal: nil, peer: [200], client: 9, seq: 1))
        #expect(first.kind == .ack && first.header.seq == 1)
        for connection in 1...10 {
            for id in 1...1024 { _ = dispatch(core, principal: nil, peer: [UInt8(connection)], client: UInt64(connection << 16 | id), seq: 1) }
        }
        let retry = try #require(dispatch(core, principal: nil, peer: [200], client: 9, seq: 1))
        #expect(retry.kind == .ack && retry.header.seq == 1, "the honest retry is answered with its first seq, not sequenced again: \(retry.header)")
        let next = try #require(dispatch(core, principal: nil, peer: [200], client: 9, seq: 2))
        #expect(next.kind == .ack && next.header.seq == core.head, "its next dispatch is sequenced")
    }

    @Test("a retry of a client id the dedup table let go is refused with 'dedup window passed', never sequenced again")
    func dedupForgottenIsNacked() throws {
        let core = F.makeDispatcher()
        #expect(dispatch(core, principal: nil, peer: [200], client: 9, seq: 1)?.header.seq == 1)
        // One id per connection, 9,000 of them: the table is full of owners holding one id each, and
        // the least recently seen (the first client) goes.
        for connection in 1...9000 {
            _ = dispatch(core, principal: nil, peer: withUnsafeBytes(of: UInt32(connection)) { Array($0) }, client: UInt64(1000 + connection), seq: 1)
        }
        let head = core.head
        let retry = try #require(dispatch(core, principal: nil, peer: [200], client: 9, seq: 1))
        let reason = String(decoding: retry.payload, as: UTF8.self)
        #expect(retry.kind == .nack && reason.contains("dedup window passed"), "\(retry.header.kind) \(reason)")
        #expect(core.head == head, "nothing was sequenced")
        // Its next client seq is new: sequenced, and the retry of the first is still refused.
        #expect(dispatch(core, principal: nil, peer: [200], client: 9, seq: 2)?.header.seq == head + 1)
        #expect(dispatch(core, principal: nil, peer: [200], client: 9, seq: 1)?.kind == .nack)
    }

    @Test("a key over its 1,024 client ids loses its own oldest, and their retries are refused, not sequenced again")
    func dedupOwnOldestNacked() throws {
        let core = F.makeDispatcher(clientScope: Self.scope)
        for client in 1...1100 { _ = dispatch(core, principal: attacker, peer: [1], client: UInt64(client), seq: 1) }
        let head = core.head
        #expect(dispatch(core, principal: attacker, peer: [1], client: 1, seq: 1)?.kind == .nack)
        #expect(dispatch(core, principal: attacker, peer: [1], client: 1100, seq: 1)?.header.seq == 1100, "its newest are remembered")
        #expect(core.head == head)
    }

    @Test("a retry older than a client's window of 4,096 client seqs is refused, not sequenced again")
    func dedupWindowSlide() throws {
        let core = F.makeDispatcher()
        for seq in 1...4100 { _ = dispatch(core, principal: nil, peer: [1], client: 5, seq: UInt64(seq)) }
        let head = core.head
        let old = try #require(dispatch(core, principal: nil, peer: [1], client: 5, seq: 2))
        let reason = String(decoding: old.payload, as: UTF8.self)
        #expect(old.kind == .nack && reason.contains("may already be sequenced"), "\(reason)")
        #expect(dispatch(core, principal: nil, peer: [1], client: 5, seq: 10)?.header.seq == 10, "within the window: its seq")
        #expect(core.head == head)
    }

    @Test("the dedup table stays bounded under a flood: at most 8,192 clients and 65,536 tombstones")
    func dedupBounded() {
        var table = DedupTable(window: 4096)
        table.record(client: 1, clientSeq: 1, seq: 1, owner: 77)
        for id in UInt64(2)...200_000 { table.record(client: id, clientSeq: 1, seq: id, owner: id % 40 + 1) }
        #expect(table.clientCount <= table.maxClients)
        #expect(table.tombstoneCount == table.maxTombstones)
        #expect(table.lookup(client: 1, clientSeq: 1) == .sequenced(1), "an owner holding one id is not reached by forty holding 1,024")
        #expect(table.lookup(client: 199_999, clientSeq: 1) == .sequenced(199_999))
        #expect(table.lookup(client: 150_000, clientSeq: 1) == .forgotten)
    }

    @Test("rebuilt from the journal at start, the table remembers every client the journal names up to its own bound, not one owner's 1,024")
    func dedupRebuildKeepsClients() {
        var table = DedupTable(window: 4096)
        // As DispatcherCore.remember records the journal's newest records: owner 0.
        for id in UInt64(1)...5_000 { table.record(client: id, clientSeq: 7, seq: id) }
        #expect(table.clientCount == 5_000)
        #expect(table.lookup(client: 1, clientSeq: 7) == .sequenced(1), "a retry after a restart finds its seq")
        #expect(table.tombstoneCount == 0)
    }

    @Test("the dedup table's entries stay bounded: owners flooding client seqs lose their own, an owner within its window keeps all of its")
    func dedupEntriesBounded() {
        var table = DedupTable(window: 4096)
        for clientSeq in UInt64(1)...4096 { table.record(client: 1, clientSeq: clientSeq, seq: clientSeq, owner: 77) }
        var seq: UInt64 = 4096
        for owner in UInt64(1)...10 {
            for client in UInt64(1)...200 {
                for clientSeq in UInt64(1)...600 {
                    seq += 1
                    table.record(client: owner << 32 | client, clientSeq: clientSeq, seq: seq, owner: owner)
                }
            }
        }
        #expect(table.entryCount <= table.maxEntries)
        #expect(table.lookup(client: 1, clientSeq: 1) == .sequenced(1) && table.lookup(client: 1, clientSeq: 4096) == .sequenced(4096))
        #expect(table.lookup(client: 1 << 32 | 1, clientSeq: 1) == .forgotten, "a flooder's oldest went, and say so")
    }
}
