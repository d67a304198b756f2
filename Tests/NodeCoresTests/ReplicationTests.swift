import Examples
import FluxCore
import NodeCores
import Testing

extension DispatcherCore.Command {
    /// A message for the standby, on the replication ROUTER.
    var toStandby: Message? { if case .reply(.replication, _, let m) = self { m } else { nil } }
    var fromLog: ClosedRange<UInt64>? { if case .replicateFromLog(_, let from, let through) = self { from...through } else { nil } }
    var stepsDown: String? { if case .stepDown(let reason) = self { reason } else { nil } }
    var claim: String? { if case .verifyLeadership(let claim) = self { claim } else { nil } }
}

extension StandbyCore.Command {
    var sent: Message? { if case .send(let m) = self { m } else { nil } }
}

/// A leading `DispatcherCore` and a `StandbyCore` wired by hand, each over a journal in memory: the
/// test plays both shells (as `DispatcherLoop` and the simulator do) and the network between them,
/// one step at a time, so every schedule here is exact.
@Suite("Replication: a leader and its standby (issue 27)")
struct ReplicationTests {
    typealias F = CoreFixtures
    static let peer: [UInt8] = [7, 7]
    static let cluster: UInt32 = 0xC1
    static func epoch(_ revision: Int64) -> HistoryID { HistoryID.leading(cluster: cluster, revision: revision) }

    /// A journal in memory whose records carry their own stamps, and can be cut (`Journal.truncate`).
    final class Log: ActionLog {
        var records: [Message] = []
        let history: HistoryID
        let clientScope = ClientScope(k0: 0, k1: 0)
        init(history: HistoryID, records: [Message] = []) {
            self.history = history
            self.records = records
        }
        var lastSeq: UInt64 { UInt64(records.count) }
        var firstSeq: UInt64 { 1 }
        var sizeInBytes: Int { 0 }
        func append(_ actions: [Message]) { records += actions }
        func commit() {}
        func read(from: UInt64, limit: Int) -> [Message] {
            let start = Int(max(from, 1) - 1)
            guard start < records.count else { return [] }
            return Array(records[start..<min(records.count, start + limit)])
        }
        func stamp(at seq: UInt64) -> UInt64? { seq >= 1 && seq <= lastSeq ? records[Int(seq - 1)].header.history : nil }
        func firstSeqOfRun(endingAt seq: UInt64) -> UInt64 {
            var start = seq
            while start > 1 && stamp(at: start - 1) == stamp(at: seq) { start -= 1 }
            return start
        }
        func truncate(after seq: UInt64) { records.removeLast(records.count - Int(seq)) }
    }

    /// Actions `seqs` stamped `history`.
    static func records(_ seqs: ClosedRange<UInt64>, _ history: HistoryID) -> [Message] {
        seqs.map {
            var action = F.action($0, clientID: 900, clientSeq: $0)
            action.header.history = history.rawValue
            return action
        }
    }

    static func dispatch(_ clientSeq: UInt64) -> Result<Message, ProtocolError> {
        .success(
            Message(
                topic: "counter", header: Header(kind: .dispatch, clientID: 1, clientSeq: clientSeq, actionType: "incrementTapped"),
                payload: F.increment))
    }

    /// The two cores and their shells.
    final class Pair {
        let leader: DispatcherCore
        let leaderLog: Log
        var standby: StandbyCore
        let standbyLog: Log
        /// What the leader's shell did not deliver itself: client replies, publications, step-downs.
        var leaderOut: [DispatcherCore.Command] = []
        /// Messages in flight, each way.
        var toStandby: [Message] = []
        var toLeader: [Message] = []
        var now: UInt64 = 0
        /// The quarantine list the standby's shell keeps beside its journal (nil: none written yet).
        var standbyQuarantine: [Quarantine]?
        /// The record bytes each side handed its journal, in order.
        var leaderRecordBytes: [UInt8] = []
        var standbyRecordBytes: [UInt8] = []

        init(
            replication: DispatcherRules.Replication = .sync, leaderRecords: [Message] = [], standbyRecords: [Message] = [],
            standbyEpoch: UInt64 = 0, leading: HistoryID = ReplicationTests.epoch(5), memberToken: UInt64? = nil
        ) {
            var rules = DispatcherRules(apps: [Counter.app()])
            rules.replication = replication
            rules.memberToken = memberToken
            var standbyRules = StandbyCore.Rules()
            standbyRules.memberToken = memberToken
            leaderLog = Log(history: leading, records: leaderRecords)
            leader = DispatcherCore(rules: rules, head: leaderLog.lastSeq, history: leading, now: F.at(0), logger: F.logger)
            standbyLog = Log(history: HistoryID(cluster: ReplicationTests.cluster, epoch: standbyEpoch), records: standbyRecords)
            standby = StandbyCore(
                rules: standbyRules, lastSeq: standbyLog.lastSeq, lastStamp: standbyRecords.last?.header.history ?? 0,
                newestEpoch: max(standbyEpoch, HistoryID(rawValue: standbyRecords.last?.header.history ?? 0).epoch), now: F.at(0), logger: F.logger)
        }

        /// The leader's shell: replication goes on the wire, catch-up is read from its log; the rest is kept.
        func runLeader() {
            for command in leader.takeCommands() {
                switch command {
                case .reply(.replication, _, let message): toStandby.append(message)
                case .replicateFromLog(_, let from, let through):
                    var next = from
                    while next <= through, let batch = try? leaderLog.replayBatch(from: next, limit: Int(through - next + 1), maxBytes: 1 << 20) {
                        toStandby.append(leader.replicaAppend(first: next, batchPayload: batch.payload))
                        next = batch.last + 1
                    }
                case .append(let records):
                    leaderRecordBytes += records.bytes
                    leaderLog.append((try? records.messages()) ?? [])
                    leaderOut.append(command)
                default: leaderOut.append(command)
                }
            }
        }

        /// The standby's shell, with its fsync done at once when `sync` is true (else left for later).
        func runStandby(sync: Bool = true) {
            while true {
                let commands = standby.takeCommands()
                guard !commands.isEmpty else { return }
                for command in commands {
                    switch command {
                    case .send(let message): toLeader.append(message)
                    case .append(let records):
                        standbyRecordBytes += records.bytes
                        standbyLog.append((try? records.messages()) ?? [])
                        if sync { standby.durable(through: standbyLog.lastSeq) }
                    case .dropRun(let seq):
                        standbyLog.truncate(after: standbyLog.firstSeqOfRun(endingAt: seq) - 1)
                        standby.truncated(lastSeq: standbyLog.lastSeq, lastStamp: standbyLog.stamp(at: standbyLog.lastSeq) ?? 0, now: F.at(now))
                    case .truncate(let after):
                        standbyLog.truncate(after: after)
                        standby.truncated(lastSeq: standbyLog.lastSeq, lastStamp: standbyLog.stamp(at: standbyLog.lastSeq) ?? 0, now: F.at(now))
                    case .keepQuarantine(let entries, let digest):
                        standbyQuarantine = entries
                        standby.quarantineKept(digest: digest)
                    case .adopt, .reconnect: continue
                    }
                }
            }
        }

        /// Delivers what is in flight, both ways, until nothing moves.
        func settle(standbySyncs: Bool = true) {
            runLeader()
            runStandby(sync: standbySyncs)
            while !toStandby.isEmpty || !toLeader.isEmpty {
                for message in toStandby { standby.received(message, now: F.at(now)) }
                toStandby.removeAll()
                runStandby(sync: standbySyncs)
                let log = leaderLog
                for message in toLeader {
                    leader.receivedReplication(message, from: ReplicationTests.peer, now: F.at(now), stampAt: { log.stamp(at: $0) })
                }
                toLeader.removeAll()
                runLeader()
            }
        }

        /// Client replies the leader sent since last asked.
        func acks() -> [UInt64] {
            defer { leaderOut.removeAll { $0.intakeReply != nil } }
            return leaderOut.compactMap(\.intakeReply).filter { $0.kind == .ack }.map(\.header.seq)
        }

        func published() -> [UInt64] {
            defer { leaderOut.removeAll { $0.published != nil } }
            return leaderOut.compactMap(\.published).filter { $0.kind != .heartbeat }.flatMap { (try? ActionBatch.unpack($0)) ?? [] }.map(
                \.header.seq)
        }
    }

    @Test(
        "with a member token, a hello without its proof gets nothing (no welcome, no client secret, no look at its epoch), at epoch 0 or claiming a newer one; the member's hello, with the proof, is welcomed"
    )
    func helloNeedsTheMemberTokensProof() {
        let token: UInt64 = 0xC0FF_EE00_1234
        let pair = Pair(leaderRecords: ReplicationTests.records(1...3, ReplicationTests.epoch(5)), memberToken: token)
        let log = pair.leaderLog
        let impostor: [UInt8] = [0x66]
        for hello in [
            Header(kind: .replicaHello, seq: 0),
            Header(kind: .replicaHello, seq: 0, ref: 1 << 39),
            Header(kind: .replicaHello, seq: 0, clientID: StandbyLink.helloProof(token: token ^ 1, seq: 0, seen: 0, history: 0)),
            // A proof for other fields than the hello's.
            Header(kind: .replicaHello, seq: 3, clientID: StandbyLink.helloProof(token: token, seq: 0, seen: 0, history: 0)),
        ] {
            pair.leader.receivedReplication(Message(header: hello), from: impostor, now: F.at(0), stampAt: { log.stamp(at: $0) })
            let commands = pair.leader.takeCommands()
            #expect(commands.isEmpty, "\(hello): \(commands.count) commands")
        }
        #expect(pair.leader.standby == nil)
        pair.settle()
        #expect(pair.leader.standby?.peer == ReplicationTests.peer && pair.standby.phase == .following)
        #expect(pair.standbyLog.lastSeq == 3, "the member follows")
    }

    @Test("sync: an ACK and a publication wait until the standby holds the action durable, not only the leader's journal")
    func syncWaitsForStandby() {
        let pair = Pair()
        pair.settle()
        #expect(pair.standby.phase == .following && pair.leader.standby != nil)
        pair.leader.receivedIntake(Self.dispatch(1), from: [1], now: F.at(1))
        pair.leader.endOfBurst()
        pair.runLeader()
        #expect(pair.toStandby.map(\.kind) == [.replicaAppend], "the live record goes to the standby with the journal write")
        pair.leader.durable(through: 1)
        pair.runLeader()
        #expect(pair.acks().isEmpty && pair.published().isEmpty, "the leader's journal alone is not enough under sync")
        // The standby writes it but its fsync has not returned: still nothing.
        pair.settle(standbySyncs: false)
        #expect(pair.standbyLog.lastSeq == 1 && pair.acks().isEmpty)
        pair.standby.durable(through: 1)
        pair.settle()
        #expect(pair.acks() == [1] && pair.published() == [1])
        #expect(pair.leader.durableHead == 1)
    }

    @Test("the standby journals the leader's live records byte for byte as the leader does: it writes the entries as they came, decoding none")
    func standbyWritesTheLeadersBytes() throws {
        let pair = Pair()
        pair.settle()
        for burst in 0..<4 {
            for index in 1...5 { pair.leader.receivedIntake(Self.dispatch(UInt64(burst * 5 + index)), from: [1], now: F.at(UInt64(burst))) }
            pair.leader.endOfBurst()
            pair.runLeader()
            pair.leader.durable(through: pair.leader.head)
            pair.settle()
        }
        #expect(pair.acks().count == 20 && pair.standbyLog.lastSeq == 20)
        #expect(!pair.standbyRecordBytes.isEmpty && pair.standbyRecordBytes == pair.leaderRecordBytes)
    }

    @Test(
        "a standby whose queue was full misses appends: the shell says so (standbyMissed), and the next heartbeat feeds it again from the log, so it ends holding every record once, with no hole"
    )
    func missedAppendsAreFedFromTheLog() {
        let pair = Pair()
        pair.settle()
        func dispatch(_ clientSeq: UInt64) {
            pair.leader.receivedIntake(Self.dispatch(clientSeq), from: [1], now: F.at(1))
            pair.leader.endOfBurst()
            pair.leader.durable(through: clientSeq)
            pair.runLeader()
        }
        dispatch(1)
        pair.settle()
        #expect(pair.acks() == [1])
        dispatch(2)
        dispatch(3)
        // The shell could not queue the first of these live appends (nor, then, the next): lost on the way.
        #expect(pair.toStandby.map(\.header.seq) == [2, 3])
        pair.toStandby.removeAll()
        pair.leader.standbyMissed(peer: Self.peer, from: 2)
        pair.leader.standbyMissed(peer: [9, 9], from: 1)  // another peer's miss changes nothing
        #expect(pair.leader.standby?.sentThrough == 1)
        pair.settle()
        #expect(pair.acks().isEmpty && pair.standbyLog.lastSeq == 1, "under sync only what the standby holds is acknowledged")
        pair.leader.tick(now: F.at(10_000))
        let commands = pair.leader.takeCommands()
        #expect(commands.compactMap(\.fromLog) == [2...3], "the heartbeat resumes the feed at the missed seq, from the log")
        pair.leaderOut += commands.filter { $0.fromLog == nil && $0.toStandby == nil }
        for command in commands {
            if let range = command.fromLog, let batch = try? pair.leaderLog.replayBatch(from: range.lowerBound, limit: 16, maxBytes: 1 << 20) {
                pair.toStandby.append(pair.leader.replicaAppend(first: range.lowerBound, batchPayload: batch.payload))
            } else if let message = command.toStandby {
                pair.toStandby.append(message)
            }
        }
        pair.settle()
        #expect(pair.standbyLog.records.map(\.header.seq) == [1, 2, 3])
        #expect(pair.acks() == [2, 3] && pair.leader.durableHead == 3)
    }

    @Test("async: the leader ACKs once its own journal holds the action; the standby follows")
    func asyncDoesNotWait() {
        let pair = Pair(replication: .async)
        pair.settle()
        pair.leader.receivedIntake(Self.dispatch(1), from: [1], now: F.at(1))
        pair.leader.endOfBurst()
        pair.leader.durable(through: 1)
        pair.runLeader()
        #expect(pair.acks() == [1], "no wait for the standby")
        pair.settle()
        #expect(pair.standbyLog.lastSeq == 1)
    }

    @Test(
        "a standby behind catches up from the log; a new leader serves and announces nothing it inherited until the standby holds it, then serves the replay asked for meanwhile"
    )
    func catchUpFromLog() {
        let leading = Self.epoch(5)
        let pair = Pair(leaderRecords: Self.records(1...40, Self.epoch(3)), leading: leading)
        // Before the standby is there: no heartbeat, no replay (its tail may be on this disk alone).
        pair.leader.tick(now: F.at(0))
        pair.leader.receivedReplayRequest(Message(header: Header(kind: .replayRequest, seq: 1)), from: [2])
        #expect(pair.leader.takeCommands().isEmpty)
        #expect(pair.leader.durableHead == 0)
        // The standby says hello from nothing: welcomed at 0, fed 1…40 from the log.
        pair.runStandby()
        pair.runLeader()
        for message in pair.toLeader {
            pair.leader.receivedReplication(message, from: Self.peer, now: F.at(1), stampAt: { pair.leaderLog.stamp(at: $0) })
        }
        pair.toLeader.removeAll()
        let commands = pair.leader.takeCommands()
        #expect(commands.compactMap(\.fromLog) == [1...40])
        #expect(commands.compactMap(\.toStandby).map(\.kind) == [.replicaWelcome, .replicaQuarantine], "the welcome, then the quarantine list")
        #expect(
            pair.leader.durableHead == 0 && commands.compactMap(\.published).isEmpty, "welcomed is not holding: nothing inherited is committed yet")
        pair.leaderOut += commands.filter { $0.toStandby == nil && $0.fromLog == nil }
        for command in commands {
            if case .replicateFromLog(_, let from, let through) = command {
                var next = from
                while next <= through, let batch = try? pair.leaderLog.replayBatch(from: next, limit: 16, maxBytes: 1 << 20) {
                    pair.toStandby.append(pair.leader.replicaAppend(first: next, batchPayload: batch.payload))
                    next = batch.last + 1
                }
            } else if let message = command.toStandby {
                pair.toStandby.append(message)
            }
        }
        #expect(pair.toStandby.count == 1 + 1 + 3, "a welcome, the quarantine list, then 40 records in batches of 16")
        #expect(pair.toStandby.first?.header.ref == 0 && pair.toStandby.first?.payload.count == 24)
        pair.settle()
        #expect(pair.standbyLog.records.map(\.header.seq) == Array(1...40))
        // Nothing was committed when it was welcomed, yet it lacked what earlier epochs acknowledged:
        // the welcome says where the leader began, which the standby must hold before it may lead.
        #expect(pair.standby.leaderBegan == 40)
        // The replay asked for while it settled is served now, not when the store would have asked again.
        let served = pair.leaderOut.compactMap { command -> ReplayPlan? in
            if case .serveReplay(let plan) = command { return plan } else { return nil }
        }
        #expect(served.map(\.peer) == [[2]] && served.first?.from == 1 && served.first?.through == 40)
        #expect(pair.leader.standby?.durableThrough == 40 && pair.leader.durableHead == 40)
        pair.leader.tick(now: F.at(1_000))
        let heartbeat = pair.leader.takeCommands().compactMap(\.published).first { $0.kind == .heartbeat }
        #expect(heartbeat?.header.seq == 40 && heartbeat?.header.ref == 41, "announced once committed, from the epoch's first seq")
    }

    @Test("mismatch: the standby drops only what the leader does not hold, says hello again, and is welcomed")
    func mismatchKeepsTheMatchedPrefix() {
        let old = Self.epoch(3), leading = Self.epoch(5)
        // The standby led epoch 3: 1…3 were committed (the other dispatcher holds them), 4…5 were not, and
        // the other went on from 3 in epoch 5. The run of epoch 3 the standby holds is 1…5.
        let pair = Pair(
            leaderRecords: Self.records(1...3, old) + Self.records(4...6, leading), standbyRecords: Self.records(1...5, old),
            standbyEpoch: old.epoch, leading: leading)
        pair.runStandby()
        let hello = pair.toLeader.removeFirst()
        #expect(hello.kind == .replicaHello && hello.header.seq == 5)
        pair.leader.receivedReplication(hello, from: Self.peer, now: F.at(0), stampAt: { pair.leaderLog.stamp(at: $0) })
        let mismatch = pair.leader.takeCommands().compactMap(\.toStandby).first
        #expect(mismatch?.kind == .replicaMismatch && mismatch?.header.ref == 4, "the run matches through 3")
        pair.standby.received(mismatch ?? Message(header: Header(kind: .nack)), now: F.at(0))
        let commands = pair.standby.takeCommands()
        #expect(commands == [.truncate(after: 3)], "the committed 1…3 stay on this disk")
        pair.standbyLog.truncate(after: 3)
        pair.standby.truncated(lastSeq: 3, lastStamp: old.rawValue, now: F.at(0))
        pair.settle()
        #expect(pair.standbyLog.records.map(\.header.history) == [old, old, old, leading, leading, leading].map(\.rawValue))
        #expect(pair.standby.phase == .following && pair.leader.durableHead == 6)
    }

    @Test("how far a standby's run matches: found by bisection, also while the core's head runs ahead of its log")
    func matchedThrough() {
        let e1 = Self.epoch(1).rawValue, e3 = Self.epoch(3).rawValue, e4 = Self.epoch(4).rawValue
        // The log: 1…59 of epoch 1, 60…71 of epoch 3; the core has sequenced up to 80, not yet written.
        let stamp: (UInt64) -> UInt64? = { $0 <= 59 ? e1 : $0 <= 71 ? e3 : nil }
        #expect(StandbyLink.matchedThrough(seq: 71, history: e1, firstSeq: 1, head: 80, stampAt: stamp) == 59)
        #expect(StandbyLink.matchedThrough(seq: 40, history: e1, firstSeq: 1, head: 80, stampAt: stamp) == 40)
        #expect(StandbyLink.matchedThrough(seq: 75, history: e4, firstSeq: 1, head: 80, stampAt: stamp) == nil, "no record of epoch 4 here")
        #expect(StandbyLink.matchedThrough(seq: 90, history: e3, firstSeq: 1, head: 80, stampAt: stamp) == 71)
        // A log written through 35 only (1…30 of epoch 1), the core at 80: the bisection's first probe finds nothing there.
        let short: (UInt64) -> UInt64? = { $0 <= 30 ? e1 : $0 <= 35 ? e3 : nil }
        #expect(StandbyLink.matchedThrough(seq: 71, history: e1, firstSeq: 1, head: 80, stampAt: short) == 30)
    }

    @Test("mismatch on a run the leader holds nothing of: the whole run goes, then hello, then welcome")
    func mismatchDropsAForeignRun() {
        let old = Self.epoch(3), mine = Self.epoch(4), leading = Self.epoch(5)
        let pair = Pair(
            leaderRecords: Self.records(1...2, old) + Self.records(3...6, leading),
            standbyRecords: Self.records(1...2, old) + Self.records(3...4, mine),
            standbyEpoch: mine.epoch, leading: leading)
        pair.runStandby()
        let hello = pair.toLeader.removeFirst()
        pair.leader.receivedReplication(hello, from: Self.peer, now: F.at(0), stampAt: { pair.leaderLog.stamp(at: $0) })
        let mismatch = pair.leader.takeCommands().compactMap(\.toStandby).first
        #expect(mismatch?.kind == .replicaMismatch && mismatch?.header.seq == 4 && mismatch?.header.ref == 0)
        pair.standby.received(mismatch ?? Message(header: Header(kind: .nack)), now: F.at(0))
        #expect(pair.standby.takeCommands().first == .dropRun(endingAt: 4))
        // The shell drops the run of epoch 4 (3…4): the standby says hello from 2 and is welcomed.
        pair.standbyLog.truncate(after: pair.standbyLog.firstSeqOfRun(endingAt: 4) - 1)
        pair.standby.truncated(lastSeq: 2, lastStamp: old.rawValue, now: F.at(0))
        #expect(pair.standby.takeCommands().compactMap(\.sent).map { [$0.header.seq] } == [[2]])
        pair.toLeader.append(Message(header: Header(kind: .replicaHello, seq: 2, ref: mine.epoch, history: old.rawValue)))
        pair.settle()
        #expect(pair.standbyLog.lastSeq == 6 && pair.standby.phase == .following && pair.leader.durableHead == 6)
    }

    @Test("fencing: a peer that claims a newer epoch makes the leader ask etcd, never step down on its word; etcd's answer decides")
    func refuseOlderEpoch() {
        let older = Self.epoch(3), newer = Self.epoch(5)
        // A hello that names the newer epoch: the older leader asks etcd (the shell's work), and serves on.
        let claimed = Pair(standbyEpoch: newer.epoch, leading: older)
        claimed.settle()
        #expect(claimed.leaderOut.compactMap(\.claim).count >= 1 && claimed.leaderOut.compactMap(\.stepsDown).isEmpty)
        #expect(claimed.leader.steppedDown == nil)
        // A forged hello naming the largest epoch there is: a question for etcd, nothing more.
        claimed.leader.receivedReplication(
            Message(header: Header(kind: .replicaHello, seq: 0, ref: (1 << 40) - 1)), from: [9, 9], now: F.at(2), stampAt: { _ in nil })
        let forged = claimed.leader.takeCommands()
        #expect(forged.compactMap(\.claim).count == 1 && forged.compactMap(\.stepsDown).isEmpty && claimed.leader.steppedDown == nil)
        // A standby following the newer leader gets an append of the older one: it refuses; the older
        // leader asks etcd, and steps down once etcd names the other (the shell calls leaseExpired).
        let pair = Pair(leading: older)
        let standby = StandbyCore(lastSeq: 0, lastStamp: 0, newestEpoch: newer.epoch, now: F.at(0), logger: F.logger)
        _ = standby.takeCommands()
        standby.received(
            Message(header: Header(kind: .replicaWelcome, seq: 0, history: newer.rawValue), payload: Array(repeating: 0, count: 24)), now: F.at(0))
        _ = standby.takeCommands()
        standby.received(pair.leader.replicaAppend(first: 1, records: Self.records(1...1, older)), now: F.at(1))
        let refusal = standby.takeCommands().compactMap(\.sent)
        #expect(refusal.map(\.kind) == [.replicaRefuse] && standby.lastSeq == 0, "nothing of the older epoch is written")
        pair.leader.receivedReplication(refusal[0], from: Self.peer, now: F.at(1), stampAt: { _ in nil })
        let asked = pair.leader.takeCommands()
        #expect(asked.compactMap(\.claim).count == 1 && asked.compactMap(\.stepsDown).isEmpty)
        pair.leader.leaseExpired("etcd names another leader")
        #expect(pair.leader.takeCommands().compactMap(\.stepsDown).count == 1)
        pair.leader.receivedIntake(Self.dispatch(1), from: [1], now: F.at(2))
        let nack = pair.leader.takeCommands().compactMap(\.intakeReply).first
        #expect(nack?.kind == .nack && nack?.header.flags.contains(.retryLater) == true)
    }

    @Test("a lease that runs out: NACK retry-later for new dispatches, and no ACK for what was in flight")
    func leaseExpired() {
        let pair = Pair()
        pair.settle()
        pair.leader.receivedIntake(Self.dispatch(1), from: [1], now: F.at(1))
        pair.leader.endOfBurst()
        pair.runLeader()
        pair.leader.leaseExpired()
        pair.runLeader()
        #expect(pair.leaderOut.compactMap(\.stepsDown) == ["its lease ran out"])
        pair.leader.durable(through: 1)
        pair.settle()
        #expect(pair.standbyLog.lastSeq == 1, "what was sent before may still arrive")
        #expect(pair.acks().isEmpty && pair.published().isEmpty, "but nothing is acknowledged or published any more")
        pair.leader.receivedIntake(Self.dispatch(2), from: [1], now: F.at(2))
        pair.leader.endOfBurst()
        let replies = pair.leader.takeCommands()
        #expect(
            replies.compactMap(\.intakeReply).map(\.kind) == [.nack]
                && replies.compactMap(\.intakeReply).first?.header.flags.contains(.retryLater) == true)
        #expect(replies.compactMap(\.appended).isEmpty && pair.leader.head == 1)
    }

    @Test("records lost on the way: the next heartbeat shows the gap, the standby says hello again and is fed again")
    func heartbeatShowsLostRecords() {
        let pair = Pair()
        pair.settle()
        pair.leader.receivedIntake(Self.dispatch(1), from: [1], now: F.at(1))
        pair.leader.endOfBurst()
        pair.runLeader()
        pair.toStandby.removeAll()  // the live append is lost
        pair.leader.durable(through: 1)
        pair.leader.tick(now: F.at(500))
        pair.settle()
        #expect(pair.standbyLog.lastSeq == 1 && pair.acks() == [1])
    }

    @Test("an append whose records skip a seq or carry a newer epoch than the leader's is refused whole: nothing written, hello again")
    func malformedAppendRefusedWhole() throws {
        /// What a standby that follows (welcomed by a leader of epoch 5, holding nothing) does with an
        /// append of `records`.
        func append(_ records: (HistoryID) -> [Message]) throws -> [StandbyCore.Command] {
            let pair = Pair()
            pair.settle()
            let leader = try #require(pair.standby.leader)
            var header = Header(kind: .replicaAppend, seq: 1)
            header.history = leader.rawValue
            pair.standby.received(Message(header: header, payload: ReplayBatch.encode(records(leader))), now: F.at(10))
            return pair.standby.takeCommands()
        }
        func refused(_ commands: [StandbyCore.Command]) -> Bool {
            !commands.contains { if case .append = $0 { true } else { false } } && commands.compactMap(\.sent).map(\.kind) == [.replicaHello]
        }
        // Seqs 1, 2 and 4: the journal's own check used to stop the standby on seq 4 (exit 132).
        let skipping = try append { Self.records(1...2, $0) + Self.records(4...4, $0) }
        #expect(refused(skipping), "\(skipping)")
        // A record stamped with an epoch past the leader's own.
        let newer = try append { Self.records(1...1, $0) + Self.records(2...2, HistoryID(cluster: $0.cluster, epoch: $0.epoch + 1)) }
        #expect(refused(newer), "\(newer)")
        // A record older than the one before it.
        let older = try append { Self.records(1...1, $0) + Self.records(2...2, HistoryID(cluster: $0.cluster, epoch: $0.epoch - 1)) }
        #expect(refused(older), "\(older)")
        // The same records, whole and in order, are written.
        let good = try append { Self.records(1...3, $0) }
        #expect(good.contains { if case .append(let records) = $0 { records.records.map(\.seq) == [1, 2, 3] } else { false } }, "\(good)")
    }

    @Test("a lost REPLICA-ACK is said again on the next heartbeat; a welcome counts nothing the standby has not ACKed")
    func lostAckIsRepeated() {
        let pair = Pair()
        pair.settle()
        pair.leader.receivedIntake(Self.dispatch(1), from: [1], now: F.at(1))
        pair.leader.endOfBurst()
        pair.leader.durable(through: 1)
        pair.runLeader()
        for message in pair.toStandby { pair.standby.received(message, now: F.at(1)) }
        pair.toStandby.removeAll()
        pair.runStandby()
        #expect(pair.toLeader.map(\.kind) == [.replicaAck])
        pair.toLeader.removeAll()  // lost
        #expect(pair.acks().isEmpty)
        pair.leader.tick(now: F.at(500))
        pair.settle()
        #expect(pair.acks() == [1])
        // A standby that says hello again holding records its fsync has not covered: welcomed, not counted.
        let slow = Pair(leaderRecords: Self.records(1...3, Self.epoch(5)))
        slow.settle(standbySyncs: false)
        #expect(slow.standbyLog.lastSeq == 3 && slow.standby.durableSeq == 0 && slow.leader.durableHead == 0)
        slow.standby.tick(now: F.at(5_000))  // the leader fell silent: it connects again and says hello from 3
        slow.settle(standbySyncs: false)
        #expect(slow.standby.phase == .following && slow.leader.durableHead == 0, "its hello named seq 3, which is not on its disk")
        slow.standby.durable(through: 3)
        slow.settle()
        #expect(slow.leader.durableHead == 3)
    }

    @Test(
        "a pair's standby keeps the leader's quarantine list: sent after the welcome and on each change, sent again at the next heartbeat while the standby's ACKs name another list, never taken from an old epoch or when its digest does not match"
    )
    func quarantineListReachesTheStandby() {
        let pair = Pair(leaderRecords: ReplicationTests.records(1...3, ReplicationTests.epoch(5)))
        pair.settle()
        #expect(pair.standbyQuarantine == [], "the empty list is sent too: the standby may hold an older one")
        #expect(pair.leader.standby?.quarantineHeld == QuarantineList.digest(QuarantineList.encode([])))

        // A change goes at the next heartbeat.
        let first = Quarantine(seq: 2, app: "counter", actionType: "incrementTapped", reason: "died 2 times in a row")
        pair.leader.quarantined([first])
        pair.now += 1_000
        pair.leader.tick(now: F.at(pair.now))
        pair.settle()
        #expect(pair.standbyQuarantine == [first])
        let held = QuarantineList.digest(QuarantineList.encode([first]))
        #expect(pair.standby.quarantineHeld == held && pair.leader.standby?.quarantineHeld == held)

        // Lost on the way: sent again at the next heartbeat, since the standby's ACKs name the old list.
        let second = Quarantine(seq: 3, app: "counter", actionType: "incrementTapped", reason: "died 2 times in a row")
        pair.leader.quarantined([second])
        pair.now += 1_000
        pair.leader.tick(now: F.at(pair.now))
        pair.runLeader()
        let lost = pair.toStandby.filter { $0.kind == .replicaQuarantine }
        #expect(lost.count == 1)
        pair.toStandby.removeAll { $0.kind == .replicaQuarantine }
        pair.settle()
        #expect(pair.standbyQuarantine == [first])
        pair.now += 1_000
        pair.leader.tick(now: F.at(pair.now))
        pair.settle()
        #expect(pair.standbyQuarantine == [first, second])
        // Held: nothing more is sent.
        pair.now += 1_000
        pair.leader.tick(now: F.at(pair.now))
        pair.runLeader()
        #expect(!pair.toStandby.contains { $0.kind == .replicaQuarantine })
        pair.settle()

        // What is not the followed leader's list is never kept.
        let forged = QuarantineList.encode([first])
        let leaderStamp = ReplicationTests.epoch(5).rawValue
        for message in [
            // a digest that does not match its bytes
            Message(header: Header(kind: .replicaQuarantine, ref: 42, history: leaderStamp), payload: forged),
            // bytes that are not a list, under their own digest
            Message(header: Header(kind: .replicaQuarantine, ref: QuarantineList.digest([1, 2, 3]), history: leaderStamp), payload: [1, 2, 3]),
            // an older epoch's leader, and a history the standby does not follow
            Message(
                header: Header(kind: .replicaQuarantine, ref: QuarantineList.digest(forged), history: ReplicationTests.epoch(4).rawValue),
                payload: forged),
            Message(
                header: Header(kind: .replicaQuarantine, ref: QuarantineList.digest(forged), history: HistoryID(cluster: 9, epoch: 5).rawValue),
                payload: forged),
        ] {
            pair.standby.received(message, now: F.at(pair.now))
            #expect(!pair.standby.takeCommands().contains { if case .keepQuarantine = $0 { true } else { false } }, "\(message.header)")
        }
        #expect(pair.standby.quarantineHeld == QuarantineList.digest(QuarantineList.encode([first, second])))
    }

    @Test(
        "under sync a quarantine release waits for the standby: refused (retry later) until the standby holds the list, and its ACK waits until the standby holds the list that records the release"
    )
    func releaseWaitsForTheStandbysList() throws {
        let pair = Pair(leaderRecords: ReplicationTests.records(1...3, ReplicationTests.epoch(5)))
        pair.settle()
        let entry = Quarantine(seq: 2, app: "counter", actionType: "incrementTapped", reason: "died 2 times in a row")
        pair.leader.quarantined([entry])
        let client: [UInt8] = [9]
        func release(_ clientSeq: UInt64) -> [DispatcherCore.Command] {
            pair.leader.receivedIntake(
                .success(Message(header: Header(kind: .quarantineRelease, seq: 2, clientID: 77, clientSeq: clientSeq))), from: client,
                now: F.at(pair.now))
            return pair.leader.takeCommands()
        }
        // The standby has not been sent the list yet.
        let early = release(1).compactMap(\.intakeReply)
        #expect(early.map(\.kind) == [.nack] && early.first?.header.flags.contains(.retryLater) == true)
        let reason = String(decoding: early.first?.payload ?? [], as: UTF8.self)
        #expect(reason.contains("standby does not hold the quarantine list"))
        pair.now += 1_000
        pair.leader.tick(now: F.at(pair.now))
        pair.settle()
        #expect(pair.standbyQuarantine == [entry])

        // Now it is taken: the shell reads the record and offers it again.
        #expect(release(2).contains { if case .releaseQuarantined(seq: 2, _, _) = $0 { true } else { false } })
        let record = pair.leaderLog.records[1]
        let dispatch = Message(
            topic: record.topic, header: Header(kind: .dispatch, clientID: 77, clientSeq: 2, actionType: record.header.actionType),
            payload: record.payload)
        let again = try #require(pair.leader.releaseQuarantined(2, dispatch: dispatch, from: client, now: F.at(pair.now)))
        #expect(again == 4)
        // Replicated and durable on both, but the list that records the release is lost on its way: no ACK.
        pair.leader.durable(through: 4)
        pair.runLeader()
        pair.runStandby()
        while !pair.toStandby.isEmpty || !pair.toLeader.isEmpty {
            pair.toStandby.removeAll { $0.kind == .replicaQuarantine }
            for message in pair.toStandby { pair.standby.received(message, now: F.at(pair.now)) }
            pair.toStandby.removeAll()
            pair.runStandby()
            for message in pair.toLeader {
                pair.leader.receivedReplication(message, from: Self.peer, now: F.at(pair.now), stampAt: { pair.leaderLog.stamp(at: $0) })
            }
            pair.toLeader.removeAll()
            pair.runLeader()
        }
        #expect(pair.standbyLog.lastSeq == 4 && pair.leader.durableHead == 4)
        #expect(pair.acks().isEmpty, "the release's ACK waits for the standby's list")
        #expect(pair.standbyQuarantine?.first?.releasedAs == nil)
        // The next heartbeat sends the list again; the standby keeps it, and the ACK goes.
        pair.now += 1_000
        pair.leader.tick(now: F.at(pair.now))
        pair.settle()
        #expect(pair.standbyQuarantine?.first?.releasedAs == 4)
        #expect(pair.acks() == [4])
    }
}
