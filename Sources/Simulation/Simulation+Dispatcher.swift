@_spi(Simulation) import FluxCore
import Journaling
@_spi(Simulation) import NodeCores

/// The dispatcher in the simulation: the real loop's interpreter (``DispatcherInterpreter``, which
/// `DispatcherLoop` runs too) carries out the real core's commands against the simulated network and
/// disk (``DispatcherHost``). It starts from its journal as the real one does, with `DispatcherBoot`.
/// What the simulation adds is the timing of the disk (an fsync takes time, one at a time, and batches
/// written meanwhile wait for the next: group commit) and the network its messages go out on.
///
/// With HA (`+HA`), the same process plays either role: leading (a `DispatcherCore` with a `sync`
/// standby: it streams its journal to the standby, and steps down when its lease runs out) or
/// standing by (a `StandbyCore` following the leader's journal).
extension Simulation {
    final class DispatcherProcess {
        let index: Int
        /// The real interpreter, over the core, while it leads (the only dispatcher, or the HA leader).
        var interpreter: DispatcherInterpreter?
        /// The core while it leads.
        var core: DispatcherCore? { interpreter?.core }
        /// What the interpreter reaches: this simulation's network, disk and clock.
        var host: DispatcherHost?
        /// A claim of a newer epoch that the lease service, asked while commands were carried out, did
        /// not back: acted on once they are.
        var deposedBy: String?
        /// The real interpreter, over the standby's core, while it stands by (HA).
        var standbyInterpreter: StandbyInterpreter?
        /// The core while it stands by.
        var standby: StandbyCore? { standbyInterpreter?.core }
        var standbyHost: StandbyHost?
        var incarnation: UInt64 = 0
        /// Its disk: it outlives the process (a power cut takes what is not synced); an operator may
        /// put an older copy of the journal's directory back.
        var disk = SimDisk()
        /// The real journal on it, while the process runs.
        var journal: Journal?
        /// Truncations of the journal (a standby dropping a run): an fsync issued before one reports nothing.
        var cuts: UInt64 = 0
        /// When the next try of what the journal had no room for is due, once one is.
        var retryAt: UInt64 = 0
        /// A standby's journal had no room for an append: until it follows again, nothing is written.
        var standbyDiskFull = false
        var fsyncInFlight = false
        /// While it leads with `--sync-threads`: its journal's sync lanes, and the real loop's
        /// pipelined group commit over them.
        var syncLanes: SimSyncLanes?
        var pipelined: PipelinedSync?
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
        /// When, as a standby with an empty journal in a pair that has not led, it first asked to
        /// campaign (``CampaignRule/Member/emptyAskingMilliseconds``).
        var emptyAskingSince: UInt64?
        /// The operator stopped it, and starts it again only once the other member leads (a member that
        /// refused to drop acknowledged records: ``Simulation/refusedToDrop(_:_:)``). Nothing else restarts it.
        var heldDown = false
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

    /// Where every dispatcher keeps its journal on its disk.
    static let journalDirectory = "/journal"

    /// Opens the real journal on the dispatcher's disk, as its process does when it starts: its
    /// segments small, so that seeds roll them and seal their index files; its clock and entropy the
    /// simulation's. Batches are synced when the simulation's fsync returns (``fsyncDone``), so under
    /// `always` too the journal is given `batch` and the simulation times each sync.
    func openJournal(_ index: Int, opensEpoch: Bool) throws -> Journal {
        let process = dispatchers[index]
        // The process that had it open is gone, with its descriptors and its lock.
        process.journal = nil
        let node = Node.dispatcher(index)
        let environment = JournalEnvironment(
            storage: process.disk, wallNanoseconds: { [unowned self] in time(node).wallNanoseconds },
            monotonicNanoseconds: { [unowned self] in time(node).milliseconds &* 1_000_000 }, randomWord: { [unowned self] in rng.next() },
            brokenRules: options.canary.map { [$0] } ?? [])
        let journal = try Journal(
            directory: Simulation.journalDirectory, policy: fsync == .none ? .none : .batch, segmentBytes: Simulation.segmentBytes,
            opensEpoch: opensEpoch, environment: environment)
        if journal.recovery.trimmedBytes > 0 { note("\(name(of: node))'s journal: \(journal.recovery)") }
        process.journal = journal
        return journal
    }

    /// A few dozen records a segment.
    static let segmentBytes = 4096

    /// Every record the journal holds, read through it.
    func records(of journal: Journal) -> [Message] {
        var records: [Message] = []
        do {
            try journal.forEach { records.append($0) }
        } catch {
            fail("the journal reads back", "\(error)")
        }
        return records
    }

    func startDispatcher() {
        let node = Node.dispatcher(0)
        dispatcher.incarnation += 1
        dispatcher.fsyncInFlight = false
        dispatcher.turnPending = false
        dispatcher.retryAt = 0
        let before = dispatcher.disk.image(in: Simulation.journalDirectory)
        let journal: Journal
        do {
            journal = try openJournal(0, opensEpoch: true)
        } catch let error as JournalError where error.corruptFromSeq != nil {
            refusesToServe(error, before: before)
            return
        } catch {
            startAgainLater(0, "it cannot open its journal: \(error)")
            return
        }
        let records = records(of: journal)
        checkJournal(records, when: "the dispatcher recovered its journal")
        note("the dispatcher starts: journal head \(journal.lastSeq), history \(journal.history)")
        restoredAwaitingStart = false
        epochsServed.insert(journal.history.epoch)
        let core: DispatcherCore
        do {
            core = try DispatcherBoot.core(
                rules: dispatcherRules(), log: journal, now: time(node), logger: logger,
                crossCheck: options.canary == .scheduleFiresTwice ? nil : { [unowned self] in fail("checkpoint", "\(name(of: node)): \($0)") })
            try forgetFiresIfCanary(core, log: journal)
            core.quarantined(try journal.quarantine())
        } catch {
            fail("the dispatcher starts", "its journal could not be read: \(error)")
            return
        }
        guard lead(0, core: core) else { return }
        scheduleTimer(node, deadlineMilliseconds: 0)
    }

    /// The process exits on an error of its disk (its loop throws), and the supervisor starts it
    /// again: what it had not synced is not trusted, and it opens its journal from the disk.
    func startAgainLater(_ index: Int, _ why: String) {
        let node = Node.dispatcher(index)
        note("\(name(of: node)) exits: \(why); it is started again")
        result.diskErrorRestarts += 1
        kill(node)
        queue.schedule(.restart(node), at: now + rng.micros(50_000...400_000))
    }

    /// A single dispatcher whose journal has a corrupt record (intact records after it, so not a torn
    /// tail) refuses to serve, as `zflux cluster up` does: the seed ends with it stopped, for an
    /// operator. What the checker holds it to: the open changed no byte (the records from the bad one
    /// on are all still on the disk, for a restore), and every action acknowledged below the bad
    /// record is in the intact ones. (No wrong data was served: the stores' states were checked all along.)
    func refusesToServe(_ error: JournalError, before: [String: [UInt8]]) {
        let from = error.corruptFromSeq ?? 0
        note("the dispatcher refuses to serve: its journal is corrupt from seq \(from)")
        result.invariantChecks += 1
        guard dispatcher.disk.image(in: Simulation.journalDirectory) == before else {
            fail("a corrupt journal is kept whole", "opening it changed its files: \(error.message)")
            return
        }
        checkJournal(dispatcher.disk.records(in: Simulation.journalDirectory), when: "the dispatcher refused its corrupt journal", below: from)
        guard result.failure == nil else { return }
        result.stopped = "the dispatcher refused to serve a journal corrupt from seq \(from)"
        queue = EventQueue()
    }

    /// The `schedule-fires-twice` canary: the new core reads the schedules its log makes and cancels,
    /// but not those it fired, and so fires them again.
    func forgetFiresIfCanary(_ core: DispatcherCore, log: any ActionLog) throws {
        guard options.canary == .scheduleFiresTwice else { return }
        try core.rebuildSchedules(from: log, forgettingFires: true)
    }

    func dispatcherReceives(_ delivery: Delivery, dispatcher index: Int, incarnation: UInt64) {
        let process = dispatchers[index]
        let node = Node.dispatcher(index)
        guard process.incarnation == incarnation else { return }
        if options.ha {
            leaseCheck(index)
            switch delivery {
            case .leaseAnswer(let answer):
                leaseAnswered(index, answer)
                return
            case .replicationReply(let connection, let message):
                guard let standby = process.standby, connection == process.connection else { return }
                record(21, node.code, message.header.seq, "\(name(of: node)) receives \(message.kind) seq \(message.header.seq)")
                standby.received(message, now: time(node))
                carryOutStandby(index)
                return
            default: break
            }
        }
        guard let core = process.core else { return }
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
            let journal = process.journal
            core.receivedReplication(message, from: peer, now: time(node), stampAt: { try? journal?.history(at: $0) })
            carryOutDispatcher(index)
        default: return
        }
        scheduleTurn(node)
    }

    /// The core leads: the real interpreter carries out its commands here. False when it could not
    /// (its journal's sync lanes did not open, and the process exits).
    @discardableResult
    func lead(_ index: Int, core: DispatcherCore) -> Bool {
        let process = dispatchers[index]
        let host = DispatcherHost(simulation: self, index: index)
        guard let journal = process.journal else { preconditionFailure("a dispatcher leads with its journal open") }
        let interpreter = DispatcherInterpreter(core: core, log: journal, io: host, logger: logger, replicaBatch: (16, 4096))
        core.onBrokenInvariant = { [unowned self] in fail("core invariant", "\(name(of: .dispatcher(index)))'s core: \($0)") }
        if let canary = options.canary {
            core.brokenRules = [canary]
            interpreter.brokenRules = [canary]
        }
        process.host = host
        process.deposedBy = nil
        process.interpreter = interpreter
        return useSyncLanes(index, journal: journal, durable: core.durableHead)
    }

    /// Carries out the core's commands with the real interpreter, then serves this turn's slice of the
    /// replays in progress, as the real loop does at the end of each turn.
    func carryOutDispatcher(_ index: Int = 0) {
        let process = dispatchers[index]
        guard let interpreter = process.interpreter else { return }
        do {
            try interpreter.retryUnwritten()
            try interpreter.carryOut()
        } catch let error as JournalError {
            startAgainLater(index, "its journal failed: \(error.message)")
            return
        } catch {
            fail("dispatcher", "\(name(of: .dispatcher(index))) could not carry out its core's commands: \(error)")
        }
        // A sync the loop waited for proved something the interpreter has not heard: the real loop's
        // next turn comes at once and tells it first.
        if process.pipelined?.pipeline.hasNews == true { scheduleTurn(.dispatcher(index)) }
        if interpreter.hasUnwritten && process.retryAt <= now {
            // The real loop polls again within the interval at which it tries the disk again.
            process.retryAt = now + DispatcherInterpreter.journalRetryMilliseconds * 1000
            queue.schedule(.turn(.dispatcher(index), incarnation: process.incarnation), at: process.retryAt)
        }
        if let deposedBy = process.deposedBy, process.interpreter === interpreter {
            process.deposedBy = nil
            interpreter.core.leaseExpired("the lease service names another leader (and \(deposedBy))")
            carryOutDispatcher(index)
            return
        }
        serveReplays(index)
    }

    /// This turn's slice of the replays in progress. With more to serve, the next turn comes at once,
    /// as the real loop then polls without waiting.
    func serveReplays(_ index: Int) {
        let process = dispatchers[index]
        guard let interpreter = process.interpreter, !interpreter.replays.isEmpty else { return }
        interpreter.serveReplays(budget: Simulation.replayBytesPerTurn)
        if !interpreter.replays.isEmpty && !process.turnPending {
            process.turnPending = true
            queue.schedule(.turn(.dispatcher(index), incarnation: process.incarnation), at: max(now, process.frozenUntil))
        }
    }

    /// One fsync at a time; what is written meanwhile waits for the next (group commit).
    func startFsyncIfNeeded(_ index: Int) {
        let process = dispatchers[index]
        let head: UInt64
        if let core = process.core {
            // (A leader that pipelines its syncs never syncs this way.)
            guard process.pipelined == nil else { return }
            // What the fsync covers is what is written: the core's head may count actions stamped in
            // this burst and not yet handed to the journal, or that a full disk has not taken.
            let written = process.journal.map { $0.lastSeq } ?? 0
            guard written > core.localDurableHead else { return }
            head = written
        } else if let standby = process.standby {
            guard standby.lastSeq > standby.durableSeq else { return }
            head = standby.lastSeq
        } else {
            return
        }
        guard !process.fsyncInFlight else { return }
        // (A segment's roll may have synced the records already: the core still hears it from here.)
        process.fsyncInFlight = true
        // With storage faults, now and then a slow one (a busy or failing disk).
        let slow = options.storageFaults && rng.chance(0.03)
        queue.schedule(
            .fsyncDone(dispatcher: index, incarnation: process.incarnation, length: 0, through: head, cuts: process.cuts),
            at: now + (slow ? rng.micros(20_000...400_000) : rng.micros(100...3_000)))
    }

    /// The fsync has returned: the journal's sync runs now, on the simulated disk (which may fail it).
    func fsyncDone(_ index: Int, incarnation: UInt64, length: Int, through: UInt64, cuts: UInt64) {
        let process = dispatchers[index]
        record(2, Node.dispatcher(index).code, through, "\(name(of: .dispatcher(index)))'s journal durable through seq \(through)")
        guard process.incarnation == incarnation, process.core != nil || process.standby != nil else { return }
        if options.ha && process.frozenUntil > now {
            // The process runs again before it hears the fsync returned.
            queue.schedule(
                .fsyncDone(dispatcher: index, incarnation: incarnation, length: length, through: through, cuts: cuts), at: process.frozenUntil)
            return
        }
        // A cut since (a standby dropping a run) synced what it kept; this fsync reports nothing.
        guard process.cuts == cuts else {
            process.fsyncInFlight = false
            startFsyncIfNeeded(index)
            return
        }
        process.fsyncInFlight = false
        guard let journal = process.journal else { return }
        // What the journal holds now is all a sync can make durable (a standby's core may be ahead of
        // a journal that had no room).
        let through = min(through, journal.lastSeq)
        do {
            try journal.commit()
        } catch {
            guard let interpreter = process.interpreter else {
                startAgainLater(index, "its journal's sync failed: \(error)")
                return
            }
            do {
                // The rule of the shared interpreter: a failed sync is never trusted (a canary retries it).
                try interpreter.syncFailed(through: through, error) {
                    try journal.commit()
                    return true
                }
            } catch {
                startAgainLater(index, "its journal's sync failed: \(error)")
                return
            }
            carryOutDispatcher(index)
            startFsyncIfNeeded(index)
            return
        }
        if let interpreter = process.interpreter {
            leaseCheck(index)
            do {
                try interpreter.synced(through: through)
            } catch let error as JournalError {
                startAgainLater(index, "its journal failed: \(error.message)")
                return
            } catch {
                fail("dispatcher", "\(name(of: .dispatcher(index))) could not carry out its core's commands: \(error)")
            }
            carryOutDispatcher(index)
        } else if let interpreter = process.standbyInterpreter {
            do {
                try interpreter.synced(through: through)
            } catch let error as JournalError {
                startAgainLater(index, "its journal failed: \(error.message)")
                return
            } catch {
                fail("standby", "\(name(of: .dispatcher(index))) could not carry out its core's commands: \(error)")
            }
        }
        startFsyncIfNeeded(index)
    }
}

/// What the dispatcher's interpreter reaches in the simulation: the network (every message is taken;
/// a peer that has gone loses it in transit), the simulated disk, whose fsync returns later, and the
/// lease service as an oracle.
final class DispatcherHost: SimulatedHost, DispatcherIO {
    var node: Simulation.Node { .dispatcher(index) }
    var process: Simulation.DispatcherProcess { simulation.dispatchers[index] }

    func monotonicMilliseconds() -> UInt64 { simulation.time(node).milliseconds }
    func time() -> NodeTime { simulation.time(node) }

    func send(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> Bool {
        guard let (code, tag) = Simulation.node(fromPeer: peer), let target = simulation.node(code: code) else { return true }
        // With storage faults, a send now and then finds the peer's queue full: nothing goes.
        if simulation.options.storageFaults && simulation.rng.chance(0.02) {
            simulation.record(
                12, node.code, message.header.seq,
                "\(simulation.name(of: node))'s \(message.kind) to \(simulation.name(of: target)) finds its queue full")
            return false
        }
        switch route {
        case .intake:
            if simulation.options.ha { simulation.checkAcks(message, from: index) }
            simulation.send(.intakeReply(message), from: node, to: target, incarnation: tag)
        case .replay:
            if message.kind == .replayBatch, let actions = try? ReplayBatch.decode(message.payload) {
                // A tombstone stands for the action witnessed when it was first sent.
                for action in actions where !action.header.flags.contains(.quarantined) { simulation.witness(action) }
            }
            simulation.send(.replayReply(message), from: node, to: target, incarnation: tag)
        case .replication:
            simulation.send(.replicationReply(connection: tag, message), from: node, to: target)
        }
        return true
    }

    func publish(_ message: Message) {
        for action in (try? ActionBatch.unpack(message)) ?? [] where action.kind == .action { simulation.witness(action) }
        for store in simulation.stores.indices { simulation.send(.action(message), from: node, to: .store(store)) }
    }

    /// Under `none` the journal is never synced and the core is told at once; otherwise the fsync
    /// takes a while, and ``Simulation/fsyncDone(_:incarnation:length:through:cuts:)`` tells the interpreter.
    func sync(through seq: UInt64) throws -> Bool {
        if simulation.fsync == .none { return true }
        if let pipelined = process.pipelined, let lanes = process.syncLanes, let journal = process.journal, let interpreter = process.interpreter {
            // The real loop's pipelined group commit, its lanes the simulated disk's.
            return try pipelined.sync(through: seq, journal: journal, lanes: lanes, interpreter: interpreter)
        }
        simulation.startFsyncIfNeeded(index)
        return false
    }

    /// Kept with the journal on the simulated disk, as the real shell keeps it with the real one.
    func keepQuarantine(_ entries: [Quarantine]) throws {
        guard let journal = process.journal else { throw JournalError("the journal is closed") }
        let kept = Set(try journal.quarantine().map(\.seq))
        try journal.keepQuarantine(entries)
        for entry in entries where !kept.contains(entry.seq) {
            simulation.result.quarantined += 1
            simulation.note("\(simulation.name(of: node)) quarantines seq \(entry.seq) (\(entry.app).\(entry.actionType)): \(entry.reason)")
        }
    }

    /// A full simulated disk, as the real shell tells one (``JournalError/isOutOfSpace``).
    func outOfSpace(_ error: any Error) -> String? {
        guard let error = error as? JournalError, error.isOutOfSpace else { return nil }
        if process.syncLanes?.inFlight.isEmpty == false { simulation.result.lanes.fullWhileInFlight += 1 }
        return error.message
    }

    /// The lease service answers as etcd would (an oracle: no answer while it is down or frozen, and
    /// then the lease's own clock decides). A peer's word alone deposes no one. The answer is acted on
    /// once the commands are carried out, as the real loop goes on serving while its question is out.
    func verifyLeadership(claim: String) {
        let service = simulation.leaseService
        guard service.up, service.frozenUntil <= simulation.now else { return }
        if service.key?.owner != index || service.key?.lease != process.lease?.id {
            process.deposedBy = process.deposedBy ?? claim
        }
    }

    func steppedDown(reason: String) { simulation.steppedDown(index, reason: reason) }
    func statusFacts() -> DispatcherStatusFacts { DispatcherStatusFacts(pid: 0, subscribers: 0) }
}
