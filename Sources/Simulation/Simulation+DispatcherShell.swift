@_spi(Simulation) import FluxCore
@_spi(Simulation) import FluxCores

/// The dispatcher's shell in the simulation. Its start and its replay serving are the real shell's
/// (`DispatcherLoop`'s): it opens its journal on the simulated disk, starts from it with
/// `DispatcherBoot`, and serves replays a slice per turn with a `ReplayScheduler`. What it models
/// itself is the timing of the disk (an fsync takes time, one at a time, and batches written
/// meanwhile wait for the next: group commit) and the network its messages go out on.
extension Simulation {
    final class DispatcherShell {
        var core: DispatcherCore?
        var incarnation: UInt64 = 0
        /// Its journal on the simulated disk: it outlives the process (a power cut takes what is not
        /// synced); an operator may put an older copy back.
        var journal = SimJournal()
        var fsyncInFlight = false
        /// Replay answers being served, a slice per turn: the process's, gone with it.
        var replays = ReplayScheduler()
        var frozenUntil: UInt64 = 0
        var turnPending = false
    }

    /// Bytes of replay the dispatcher serves per turn: scaled down with its batches (16 actions, 4 per
    /// answer, where a real dispatcher has 512 and 64), to about a batch per turn, so that an answer
    /// takes several turns and answers to several stores take turns, as they do in a real dispatcher
    /// under `ReplayScheduler.bytesPerTurn`.
    static let replayBytesPerTurn = 1024

    func startDispatcher() {
        dispatcher.incarnation += 1
        dispatcher.fsyncInFlight = false
        dispatcher.turnPending = false
        dispatcher.replays = ReplayScheduler()
        let journal = dispatcher.journal
        let records = journal.open(syncOnOpen: options.canary != .syncJournalOnOpen, wallNanoseconds: time(.dispatcher).wallNanoseconds) {
            HistoryID.newCluster(using: &rng)
        }
        checkJournal(records, when: "the dispatcher recovered its journal")
        var rules = DispatcherRules(apps: Array(apps.values))
        rules.heartbeatMilliseconds = 100
        rules.replayBatchSize = 16
        rules.replayBatchesPerRequest = 4
        note("the dispatcher starts: journal head \(journal.lastSeq), history \(journal.history)")
        epochsServed.insert(journal.history.epoch)
        let core: DispatcherCore
        do {
            core = try DispatcherBoot.core(rules: rules, log: journal, now: time(.dispatcher), logger: logger)
        } catch {
            fail("the dispatcher starts", "its journal could not be read: \(error)")
            return
        }
        if let canary = options.canary { core.brokenRules = [canary] }
        dispatcher.core = core
        scheduleTimer(.dispatcher, deadlineMilliseconds: 0)
    }

    func dispatcherReceives(_ delivery: Delivery, incarnation: UInt64) {
        guard let core = dispatcher.core, dispatcher.incarnation == incarnation else { return }
        switch delivery {
        case .intake(let peer, let message):
            record(
                10, Node.dispatcher.code, message.header.clientSeq,
                "dispatcher receives DISPATCH from \(sender(of: message)) (client seq \(message.header.clientSeq))")
            core.receivedIntake(.success(message), from: peer, now: time(.dispatcher))
        case .replayRequest(let peer, let message):
            record(11, Node.dispatcher.code, message.header.seq, "dispatcher asked to replay from seq \(message.header.seq)")
            core.receivedReplayRequest(message, from: peer)
        default: return
        }
        scheduleTurn(.dispatcher)
    }

    /// Carries out the core's commands, then serves this turn's slice of the replays in progress, as
    /// the real loop does at the end of each turn.
    func carryOutDispatcher() {
        guard let core = dispatcher.core else { return }
        for command in core.takeCommands() {
            switch command {
            case .reply(let route, let peer, let message):
                guard let (code, incarnation) = Simulation.node(fromPeer: peer), let target = node(code: code) else { continue }
                switch route {
                case .intake: send(.intakeReply(message), from: .dispatcher, to: target, incarnation: incarnation)
                case .replay: send(.replayReply(message), from: .dispatcher, to: target, incarnation: incarnation)
                case .replication: continue  // no standby in this model yet
                }
            case .replyStatus:
                continue
            case .publish(let message):
                for action in (try? ActionBatch.unpack(message)) ?? [] where action.kind == .action { witness(action) }
                for index in stores.indices { send(.action(message), from: .dispatcher, to: .store(index)) }
            case .append(let actions):
                dispatcher.journal.append(actions)
                if fsync == .none {
                    if let last = actions.last { core.durable(through: last.header.seq) }
                } else {
                    startFsyncIfNeeded()
                }
            case .serveReplay(let plan):
                dispatcher.replays.queue(plan, now: time(.dispatcher).milliseconds)
            case .replicateFromLog, .stepDown:
                continue  // no standby in this model yet
            }
        }
        serveReplays()
    }

    /// This turn's slice of the replays in progress, read from the journal and sent on the network
    /// (which takes every message: a peer that is gone loses it in transit). With more to serve, the
    /// next turn comes at once, as the real loop then polls without waiting.
    func serveReplays() {
        guard !dispatcher.replays.isEmpty else { return }
        let journal = dispatcher.journal
        dispatcher.replays.serve(
            budget: Simulation.replayBytesPerTurn, now: time(.dispatcher).milliseconds,
            batches: { try journal.replayBatch(from: $0, limit: $1, maxBytes: $2) },
            send: { peer, message in
                if message.kind == .replayBatch, let actions = try? ReplayBatch.decode(message.payload) {
                    for action in actions { witness(action) }
                }
                guard let (code, incarnation) = Simulation.node(fromPeer: peer), let target = node(code: code) else { return true }
                send(.replayReply(message), from: .dispatcher, to: target, incarnation: incarnation)
                return true
            }, logger: logger)
        if !dispatcher.replays.isEmpty && !dispatcher.turnPending {
            dispatcher.turnPending = true
            queue.schedule(.turn(.dispatcher, incarnation: dispatcher.incarnation), at: max(now, dispatcher.frozenUntil))
        }
    }

    /// One fsync at a time; what is written meanwhile waits for the next (group commit).
    func startFsyncIfNeeded() {
        guard let core = dispatcher.core, !dispatcher.fsyncInFlight, core.head > core.durableHead else { return }
        guard dispatcher.journal.bytes.count > dispatcher.journal.durableLength || options.canary == .syncJournalOnOpen else { return }
        dispatcher.fsyncInFlight = true
        queue.schedule(
            .fsyncDone(incarnation: dispatcher.incarnation, length: dispatcher.journal.bytes.count, through: core.head),
            at: now + rng.micros(100...3_000))
    }

    /// The fsync issued when the journal was `length` bytes long has returned: that much is on the disk.
    func fsyncDone(incarnation: UInt64, length: Int, through: UInt64) {
        record(2, 1, through, "journal durable through seq \(through)")
        guard let core = dispatcher.core, dispatcher.incarnation == incarnation else { return }
        dispatcher.journal.sync(upTo: length)
        dispatcher.fsyncInFlight = false
        core.durable(through: through)
        carryOutDispatcher()
        startFsyncIfNeeded()
    }
}
