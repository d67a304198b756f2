@_spi(Simulation) import FluxCore
@_spi(Simulation) import FluxCores

/// The dispatcher's shell in the simulation. Its start and its replay serving are the real shell's
/// (`DispatcherLoop`'s): it opens its journal on the simulated disk, starts from it with
/// `DispatcherBoot`, and serves replays a slice per turn with a `ReplayScheduler`. What it models
/// itself is the timing of the disk (an fsync takes time, one at a time, and batches written
/// meanwhile wait for the next: group commit) and the network its messages go out on.
///
/// With HA (`+HA`), the same shell plays either role: leading (a `DispatcherCore` with a `sync`
/// standby: it streams its journal to the standby, and steps down when its lease runs out) or
/// standing by (a `StandbyCore` following the leader's journal).
extension Simulation {
    final class DispatcherShell {
        let index: Int
        /// The core while it leads (the only dispatcher, or the HA leader).
        var core: DispatcherCore?
        /// The core while it stands by (HA).
        var standby: StandbyCore?
        var incarnation: UInt64 = 0
        /// Its journal on the simulated disk: it outlives the process (a power cut takes what is not
        /// synced); an operator may put an older copy back.
        var journal = SimJournal()
        var fsyncInFlight = false
        /// Replay answers being served, a slice per turn: the process's, gone with it.
        var replays = ReplayScheduler()
        var frozenUntil: UInt64 = 0
        var turnPending = false
        // HA
        /// Its monotonic clock, by which it judges its lease.
        var clock = DriftingClock(ppm: 1_000_000)
        /// The standby's replication connection: a new identity on every start and reconnect.
        var connection: UInt64 = 0
        /// The dispatcher the standby connects to.
        var following = 0
        /// The lease it leads by.
        var lease: HeldLease?
        /// It stepped down and is on its way to standing by.
        var steppingDown = false
        init(index: Int) { self.index = index }
    }

    /// Bytes of replay the dispatcher serves per turn: scaled down with its batches (16 actions, 4 per
    /// answer, where a real dispatcher has 512 and 64), to about a batch per turn, so that an answer
    /// takes several turns and answers to several stores take turns, as they do in a real dispatcher
    /// under `ReplayScheduler.bytesPerTurn`.
    static let replayBytesPerTurn = 1024

    func dispatcherRules() -> DispatcherRules {
        var rules = DispatcherRules(apps: Array(apps.values))
        rules.heartbeatMilliseconds = 100
        rules.replayBatchSize = 16
        rules.replayBatchesPerRequest = 4
        return rules
    }

    func startDispatcher() {
        let node = Node.dispatcher(0)
        dispatcher.incarnation += 1
        dispatcher.fsyncInFlight = false
        dispatcher.turnPending = false
        dispatcher.replays = ReplayScheduler()
        let journal = dispatcher.journal
        let records = journal.open(syncOnOpen: options.canary != .syncJournalOnOpen, wallNanoseconds: time(node).wallNanoseconds) {
            HistoryID.newCluster(using: &rng)
        }
        checkJournal(records, when: "the dispatcher recovered its journal")
        note("the dispatcher starts: journal head \(journal.lastSeq), history \(journal.history)")
        epochsServed.insert(journal.history.epoch)
        let core: DispatcherCore
        do {
            core = try DispatcherBoot.core(rules: dispatcherRules(), log: journal, now: time(node), logger: logger)
        } catch {
            fail("the dispatcher starts", "its journal could not be read: \(error)")
            return
        }
        core.quarantined(Array(journal.quarantine.values))
        if let canary = options.canary { core.brokenRules = [canary] }
        dispatcher.core = core
        scheduleTimer(node, deadlineMilliseconds: 0)
    }

    func dispatcherReceives(_ delivery: Delivery, dispatcher index: Int, incarnation: UInt64) {
        let shell = dispatchers[index]
        let node = Node.dispatcher(index)
        guard shell.incarnation == incarnation else { return }
        if options.ha {
            leaseCheck(index)
            switch delivery {
            case .leaseAnswer(let answer):
                leaseAnswered(index, answer)
                return
            case .replicationReply(let connection, let message):
                guard let standby = shell.standby, connection == shell.connection else { return }
                record(21, node.code, message.header.seq, "\(name(of: node)) receives \(message.kind) seq \(message.header.seq)")
                standby.received(message, now: time(node))
                carryOutStandby(index)
                return
            default: break
            }
        }
        guard let core = shell.core else { return }
        switch delivery {
        case .intake(let peer, let message) where message.kind == .dispatchBatch:
            let entries = (try? DispatchBatch.dispatches(of: message)) ?? []
            let first =
                entries.first.map { "\(sender(of: $0)), client seqs \($0.header.clientSeq)…\(entries[entries.count - 1].header.clientSeq)" } ?? "?"
            record(
                10, node.code, entries.first?.header.clientSeq ?? 0, "\(name(of: node)) receives a DISPATCH-BATCH of \(entries.count) from \(first)")
            core.receivedIntake(.success(message), from: peer, now: time(node))
        case .intake(let peer, let message):
            record(
                10, node.code, message.header.clientSeq,
                "\(name(of: node)) receives DISPATCH from \(sender(of: message)) (client seq \(message.header.clientSeq))")
            core.receivedIntake(.success(message), from: peer, now: time(node))
        case .replayRequest(let peer, let message):
            record(11, node.code, message.header.seq, "\(name(of: node)) asked to replay from seq \(message.header.seq)")
            core.receivedReplayRequest(message, from: peer)
        case .replication(let peer, let message):
            record(20, node.code, message.header.seq, "\(name(of: node)) receives \(message.kind) seq \(message.header.seq) from its standby")
            let journal = shell.journal
            core.receivedReplication(message, from: peer, now: time(node), stampAt: { journal.stamp(at: $0) })
            carryOutDispatcher(index)
        default: return
        }
        scheduleTurn(node)
    }

    /// Carries out the core's commands, then serves this turn's slice of the replays in progress, as
    /// the real loop does at the end of each turn.
    func carryOutDispatcher(_ index: Int = 0) {
        let shell = dispatchers[index]
        let me = Node.dispatcher(index)
        guard let core = shell.core else { return }
        var deposedBy: String?
        defer {
            if let deposedBy, shell.core === core {
                core.leaseExpired("the lease service names another leader (and \(deposedBy))")
                carryOutDispatcher(index)
            }
        }
        for command in core.takeCommands() {
            switch command {
            case .reply(let route, let peer, let message):
                guard let (code, tag) = Simulation.node(fromPeer: peer), let target = node(code: code) else { continue }
                switch route {
                case .intake:
                    if options.ha { checkAcks(message, from: index) }
                    send(.intakeReply(message), from: me, to: target, incarnation: tag)
                case .replay: send(.replayReply(message), from: me, to: target, incarnation: tag)
                case .replication: send(.replicationReply(connection: tag, message), from: me, to: target)
                }
            case .replyStatus:
                continue
            case .publish(let message):
                for action in (try? ActionBatch.unpack(message)) ?? [] where action.kind == .action { witness(action) }
                for store in stores.indices { send(.action(message), from: me, to: .store(store)) }
            case .append(let records):
                // The simulated disk keeps messages; the records are the core's, and decode.
                let actions = (try? records.messages()) ?? []
                if actions.count != records.count { fail("dispatcher", "\(name(of: me)) stamped records that do not decode") }
                shell.journal.append(actions)
                if fsync == .none {
                    if let last = actions.last { core.durable(through: last.header.seq) }
                } else {
                    startFsyncIfNeeded(index)
                }
            case .serveReplay(let plan):
                shell.replays.queue(plan, now: time(me).milliseconds)
            case .replicateFromLog(let peer, let from, let through):
                guard let (code, tag) = Simulation.node(fromPeer: peer), let target = node(code: code) else { continue }
                var next = from
                while next <= through,
                    let batch = try? shell.journal.replayBatch(from: next, limit: min(16, Int(through - next + 1)), maxBytes: 4096)
                {
                    send(.replicationReply(connection: tag, core.replicaAppend(first: next, batchPayload: batch.payload)), from: me, to: target)
                    next = batch.last + 1
                }
            case .stepDown(let reason):
                steppedDown(index, reason: reason)
            case .verifyLeadership(let claim):
                // The lease service answers as etcd would (an oracle: no answer while it is down or frozen,
                // and then the lease's own clock decides). A peer's word alone deposes no one. The answer
                // is acted on once this batch of commands is carried out, as the real loop goes on
                // serving while its question is out.
                let service = leaseService
                guard service.up, service.frozenUntil <= now else { continue }
                if service.key?.owner != index || service.key?.lease != shell.lease?.id {
                    deposedBy = deposedBy ?? claim
                }
            case .quarantine(let seq, let app, let reason):
                // Kept with the simulated journal, as the real shell keeps it with the real one.
                guard let record = shell.journal.read(from: seq, limit: 1).first, record.topicString == app else { continue }
                let entry = Quarantine(seq: seq, app: app, actionType: record.header.actionType, reason: reason)
                shell.journal.quarantine[seq] = entry
                result.quarantined += 1
                note("\(name(of: me)) quarantines seq \(seq) (\(app).\(record.header.actionType)): \(reason)")
                core.quarantined([entry])
            case .releaseQuarantined:
                continue
            }
        }
        serveReplays(index)
    }

    /// This turn's slice of the replays in progress, read from the journal and sent on the network
    /// (which takes every message: a peer that is gone loses it in transit). With more to serve, the
    /// next turn comes at once, as the real loop then polls without waiting.
    func serveReplays(_ index: Int) {
        let shell = dispatchers[index]
        let me = Node.dispatcher(index)
        guard !shell.replays.isEmpty else { return }
        let journal = shell.journal
        let quarantine = shell.core?.quarantine ?? [:]
        shell.replays.serve(
            budget: Simulation.replayBytesPerTurn, now: time(me).milliseconds,
            batches: { from, limit, maxBytes in
                try journal.replayBatch(from: from, limit: limit, maxBytes: maxBytes).map { batch in
                    ReplayPlan.tombstoned(batch, from: from, quarantine: quarantine) { journal.read(from: $0, limit: $1) }
                }
            },
            send: { peer, message in
                if message.kind == .replayBatch, let actions = try? ReplayBatch.decode(message.payload) {
                    // A tombstone stands for the action witnessed when it was first sent.
                    for action in actions where !action.header.flags.contains(.quarantined) { witness(action) }
                }
                guard let (code, incarnation) = Simulation.node(fromPeer: peer), let target = node(code: code) else { return true }
                send(.replayReply(message), from: me, to: target, incarnation: incarnation)
                return true
            }, logger: logger)
        if !shell.replays.isEmpty && !shell.turnPending {
            shell.turnPending = true
            queue.schedule(.turn(me, incarnation: shell.incarnation), at: max(now, shell.frozenUntil))
        }
    }

    /// One fsync at a time; what is written meanwhile waits for the next (group commit).
    func startFsyncIfNeeded(_ index: Int) {
        let shell = dispatchers[index]
        let head: UInt64
        if let core = shell.core {
            // What the fsync covers is what is written: the core's head may count actions stamped in
            // this burst and not yet handed to the journal. (Without HA the shell keeps its old
            // reckoning, so that seeds replay as they always have: see the report of this change.)
            let written = options.ha ? shell.journal.lastSeq : core.head
            guard written > core.localDurableHead else { return }
            head = written
        } else if let standby = shell.standby {
            guard standby.lastSeq > standby.durableSeq else { return }
            head = standby.lastSeq
        } else {
            return
        }
        guard !shell.fsyncInFlight else { return }
        guard shell.journal.bytes.count > shell.journal.durableLength || options.canary == .syncJournalOnOpen else { return }
        shell.fsyncInFlight = true
        queue.schedule(
            .fsyncDone(dispatcher: index, incarnation: shell.incarnation, length: shell.journal.bytes.count, through: head, cuts: shell.journal.cuts),
            at: now + rng.micros(100...3_000))
    }

    /// The fsync issued when the journal was `length` bytes long has returned: that much is on the disk.
    func fsyncDone(_ index: Int, incarnation: UInt64, length: Int, through: UInt64, cuts: UInt64) {
        let shell = dispatchers[index]
        record(2, Node.dispatcher(index).code, through, "\(name(of: .dispatcher(index)))'s journal durable through seq \(through)")
        guard shell.incarnation == incarnation, shell.core != nil || shell.standby != nil else { return }
        if options.ha && shell.frozenUntil > now {
            // The process runs again before it hears the fsync returned.
            queue.schedule(
                .fsyncDone(dispatcher: index, incarnation: incarnation, length: length, through: through, cuts: cuts), at: shell.frozenUntil)
            return
        }
        // A cut since (a standby dropping a run) synced what it kept; this fsync reports nothing.
        guard shell.journal.cuts == cuts else {
            shell.fsyncInFlight = false
            startFsyncIfNeeded(index)
            return
        }
        shell.journal.sync(upTo: length)
        shell.fsyncInFlight = false
        if let core = shell.core {
            leaseCheck(index)
            core.durable(through: through)
            carryOutDispatcher(index)
        } else if let standby = shell.standby {
            standby.durable(through: through)
            carryOutStandby(index)
        }
        startFsyncIfNeeded(index)
    }
}
