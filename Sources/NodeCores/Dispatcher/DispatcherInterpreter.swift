@_spi(Simulation) import FluxCore
import Logging

/// What only a dispatcher's host knows, for a STATUS answer.
package struct DispatcherStatusFacts {
    package var pid: Int
    /// Peers subscribed to the action stream.
    package var subscribers: Int
    /// How long the journal's syncs took (nil: no journal).
    package var syncs: SyncTimes?

    package init(pid: Int, subscribers: Int, syncs: SyncTimes? = nil) { (self.pid, self.subscribers, self.syncs) = (pid, subscribers, syncs) }
}

/// What a dispatcher's interpreter needs of the world it runs in: sockets, a disk, a clock. The real
/// loop (`DispatcherLoop`) gives it libzmq sockets and the journal's fsync; the simulator gives it its
/// network, its disk (whose fsync takes time) and its clock. Everything else, the order in which the
/// core's commands are carried out included, is ``DispatcherInterpreter``'s, and so the same in both.
package protocol DispatcherIO: AnyObject {
    /// The monotonic clock, in milliseconds.
    func monotonicMilliseconds() -> UInt64
    /// The time the core is told.
    func time() -> NodeTime
    /// Sends to one peer of a ROUTER. False when the peer has gone or its queue is full.
    func send(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> Bool
    /// Publishes on the actions PUB.
    func publish(_ message: Message)
    /// Makes what the log holds durable under its fsync policy. True when it is durable on return;
    /// false when the sync is under way, and the host calls ``DispatcherInterpreter/synced(through:)``
    /// once it has returned.
    func sync(through seq: UInt64) throws -> Bool
    /// Keeps the quarantine list (whole) durable beside the log.
    func keepQuarantine(_ entries: [Quarantine]) throws
    /// Why `error` means the disk has no room, or nil when it means something else.
    func outOfSpace(_ error: any Error) -> String?
    /// A peer claims a newer epoch: the host asks the lease service (a pair member) and calls
    /// ``DispatcherCore/leaseExpired(_:)`` only if it names another leader.
    func verifyLeadership(claim: String)
    /// The core stepped down: the host stops leading.
    func steppedDown(reason: String)
    /// What only the host knows, for a STATUS answer.
    func statusFacts() -> DispatcherStatusFacts
    /// What the cluster's stores need of the journal to start again: each one's snapshot's version + 1
    /// (the first seq of a store with none). Nil when that cannot be known here, and then retention
    /// removes nothing.
    func storeNeeds() -> [JournalRetention.Need]?
    /// Sends to one peer of a ROUTER, saying whether it was queued, found the peer's queue full, or
    /// found the peer gone (libzmq then holds nothing more for it).
    func deliver(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> QueuedBytes.Delivery
    /// Sends `peer` a message every reader ignores (``DispatcherInterpreter/probe``), to learn whether
    /// it reads and whether it is still there.
    func probe(_ route: DispatcherCore.Route, peer: [UInt8]) -> QueuedBytes.Delivery
}

extension DispatcherIO {
    /// A network that cannot tell a peer gone from one that does not read.
    package func deliver(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> QueuedBytes.Delivery {
        send(route, to: peer, message) ? .sent : .full
    }

    /// A host that cannot tell what its stores need (the simulator's): retention removes nothing.
    package func storeNeeds() -> [JournalRetention.Need]? { nil }

    /// A network that holds nothing for a peer once it has delivered or dropped a message (the
    /// simulator's): whatever was handed to a peer has left it.
    package func probe(_ route: DispatcherCore.Route, peer: [UInt8]) -> QueuedBytes.Delivery { .gone }
}

/// Carries out a ``DispatcherCore``'s commands, in the order the core gave them, against a
/// ``DispatcherIO``: the journal's append and sync before the core hears an action is durable, the
/// replies, the publishes, the replication feed, quarantines, and replay answers a slice per turn.
///
/// It is the one interpreter of the dispatcher's commands: the real loop and the simulator both run it,
/// so a mistake in it (a step carried out too early, say) is a mistake the simulator's seeds can find,
/// on the paths the simulator takes. With storage faults (`zflux simulate --storage-faults`) those
/// include sends that fail, a full disk and syncs that fail; the real-process tests (HostilePeerTests,
/// DiskFullTests, PairDiskFullTests) take the same paths on real sockets and files.
package final class DispatcherInterpreter {
    package let core: DispatcherCore
    package let log: any ActionLog
    unowned let io: any DispatcherIO
    let logger: Logger
    /// The pair member's name, for the status; nil for a single dispatcher.
    let memberName: String?
    /// The most records, and bytes, of one REPLICA-APPEND read from the log for a standby catching up.
    let replicaBatch: (records: Int, bytes: Int)
    /// Replay answers being served, a slice per turn.
    package var replays = ReplayScheduler()
    /// Which STATUS requests are answered, and what their replies hold.
    package private(set) var statusReplies = StatusReplies()
    /// Why this leader stopped leading, once it has.
    package private(set) var steppedDown: String?
    /// The peer whose replication queue was full on the last append: later appends to it are dropped
    /// until the core feeds it again from the log (``newTurn()`` forgets it).
    private var stalledStandby: [UInt8]?
    /// Sequenced actions the journal had no room for (a full disk), tried again every
    /// ``journalRetryMilliseconds``; none are published or acknowledged until written.
    private var unwritten: [StampedRecords] = []
    private var nextJournalRetryMs: UInt64 = 0
    private var nextQuarantineCheckMs: UInt64 = 0
    package static let journalRetryMilliseconds: UInt64 = 250
    /// Rules broken on purpose by the simulator's canaries (``Canary/releaseBeforeSync``).
    @_spi(Simulation) public var brokenRules: Set<Canary> = []

    package init(
        core: DispatcherCore, log: any ActionLog, io: any DispatcherIO, logger: Logger, memberName: String? = nil,
        replicaBatch: (records: Int, bytes: Int) = (4096, DispatcherCore.replicaAppendBytes)
    ) {
        self.core = core
        self.log = log
        self.io = io
        self.logger = logger
        self.memberName = memberName
        self.replicaBatch = replicaBatch
    }

    /// Actions wait in memory for room on the disk.
    package var hasUnwritten: Bool { !unwritten.isEmpty }

    /// The start of a loop turn: a standby whose queue was full last turn is fed again from this one.
    package func newTurn() {
        checkpointIfDue()
        stalledStandby = nil
        let io = io
        statusReplies.probe(now: io.monotonicMilliseconds()) { route, peer in io.probe(route, peer: peer) }
    }

    /// A turn of the loop before it waits, in one order for the real loop and the simulator: a standby
    /// whose queue was full is fed again and peers holding STATUS replies are probed (``newTurn()``), the
    /// core's timers run (heartbeats, schedules due), what it decided is carried out, and actions the
    /// journal had no room for are tried again (``retryUnwritten()``). Returns the latest the loop may
    /// wait until (monotonic ms): the core's deadline, or sooner for replays to serve or a write to retry.
    package func turn() throws -> UInt64 {
        newTurn()
        let now = io.time()
        core.tick(now: now)
        try carryOut()
        try retryUnwritten()
        retainIfHeldBack()
        var deadline = core.nextDeadlineMs(now: now)
        let monotonic = io.monotonicMilliseconds()
        if let retry = retentionRetryMs { deadline = min(deadline, retry) }
        if let service = nextServiceMs() { deadline = min(deadline, monotonic + service) }
        if hasUnwritten { deadline = min(deadline, monotonic + DispatcherInterpreter.journalRetryMilliseconds) }
        return deadline
    }

    /// How long the loop may wait before it serves replays or probes again (0: at once); nil when
    /// only its other events matter.
    package func nextServiceMs() -> UInt64? {
        let now = io.monotonicMilliseconds()
        let status = statusReplies.queued.nextProbeMs.map { $0 > now ? $0 - now : 0 }
        switch (replays.nextServiceMs(now: now), status) {
        case (let replay?, let status?): return min(replay, status)
        case (let replay?, nil): return replay
        case (nil, let status): return status
        }
    }

    /// Bytes that went back from the replay and STATUS budgets since the last call: what the shell
    /// may return to the system.
    package func takeReleasedBytes() -> Int { replays.takeReleased() + statusReplies.takeReleased() }

    /// Carries out what the core has decided so far.
    package func carryOut() throws { try carryOut(core.takeCommands()) }

    func carryOut(_ commands: [DispatcherCore.Command]) throws {
        for command in commands {
            switch command {
            case .reply(.replication, let peer, let message) where message.kind == .replicaAppend: sendToStandby(peer, message)
            case .reply(let route, let peer, let message): reply(route, to: peer, message)
            case .replyStatus(let route, let peer):
                // Built only for a request that is answered: within the rates and the budget.
                let now = io.monotonicMilliseconds()
                guard statusReplies.takes(route, peer: peer, now: now) else { continue }
                statusReplies.send(statusMessage(), route, to: peer, now: now) { io.deliver(route, to: peer, $0) }
            case .publish(let message): io.publish(message)
            case .append(let actions): try append(actions)
            case .serveReplay(let plan): replays.queue(plan, now: io.monotonicMilliseconds())
            case .replicateFromLog(let peer, let from, let through): try replicateFromLog(to: peer, from: from, through: through)
            case .stepDown(let reason):
                steppedDown = reason
                io.steppedDown(reason: reason)
            case .verifyLeadership(let claim): io.verifyLeadership(claim: claim)
            case .quarantine(let seq, let asker, let apps, let reason): try quarantine(seq, asker: asker, apps: apps, reason: reason)
            case .releaseQuarantined(let seq, let peer, let header): try releaseQuarantined(seq, to: peer, header: header)
            }
        }
    }

    /// Durable before anything is published or acknowledged: the core releases both only once it
    /// hears so. Actions that arrive during the sync wait in the intake and share the next one (group
    /// commit by drained burst). Behind actions the journal had no room for, they wait their turn.
    private func append(_ actions: StampedRecords) throws {
        guard unwritten.isEmpty else {
            unwritten.append(actions)
            return
        }
        do {
            try log.append(records: [actions])
        } catch {
            guard let problem = io.outOfSpace(error) else { throw error }
            // Undone whole: kept, and written once there is room; until then nothing new is taken.
            unwritten = [actions]
            core.journalUnwritable(problem)
            return
        }
        guard let last = actions.lastSeq else { return }
        if brokenRules.contains(.releaseBeforeSync) {
            // The canary: the two steps the other way round.
            try synced(through: last)
            _ = try io.sync(through: last)
            return
        }
        try sync(through: last)
    }

    /// Asks for the log's sync through `seq`, and releases what it covers once it is durable.
    private func sync(through seq: UInt64) throws {
        let durable: Bool
        do {
            durable = try io.sync(through: seq)
        } catch {
            try syncFailed(through: seq, error) { try self.io.sync(through: seq) }
            return
        }
        if durable { try synced(through: seq) }
    }

    /// The log's sync through `seq` failed. Its success is what releases the ACKs and publishes of
    /// what it covered, and a failed sync proves nothing of those bytes, then or later (Linux may
    /// mark the pages clean without writing them, so a second sync succeeds with them lost): nothing
    /// is released, and the error goes on to the shell, which stops (the real loop leaves `run`, and
    /// the supervisor starts it again on its journal as the disk has it). `retry` is the canary
    /// ``Canary/trustsFailedFsync``'s way: it syncs again and, when that returns, releases them.
    package func syncFailed(through seq: UInt64, _ error: any Error, retry: () throws -> Bool) throws {
        guard brokenRules.contains(.trustsFailedFsync) else { throw error }
        if try retry() { try synced(through: seq) }
    }

    /// The log's sync has returned: what it holds through `seq` is durable.
    package func synced(through seq: UInt64) throws {
        core.durable(through: seq)
        try carryOut(core.takeCommands())
        checkpointIfDue()
    }

    /// Keeps a checkpoint of the schedule book beside the log when the log asks for one
    /// (``CheckpointedLog/checkpointDue(head:)``: at a segment roll, or every so many records), taken
    /// only when everything sequenced is written and durable here, so that it covers exactly the log
    /// through ``DispatcherCore/head``. One that cannot be written costs the next start a longer read,
    /// nothing else.
    package func checkpointIfDue() {
        let head = core.head
        guard let log = log as? any CheckpointedLog, unwritten.isEmpty, head > 0, core.localDurableHead == head, log.lastSeq == head,
            log.checkpointDue(head: head)
        else { return }
        do {
            guard let record = try log.read(from: head, limit: 1).first, record.header.seq == head else {
                preconditionFailure("the log holds its newest seq, \(head)")
            }
            let checkpoint = DispatcherCheckpoint(seq: head, anchor: .init(record.header), book: core.schedules)
            try log.writeCheckpoint(seq: head, bytes: checkpoint.encoded())
            try retain(log)
        } catch {
            logger.warning(
                "a checkpoint could not be written: the next start reads more of the journal", metadata: ["seq": "\(head)", "error": "\(error)"])
        }
    }

    /// Writes the actions the journal had no room for, once it has: then they are durable, the core
    /// publishes and acknowledges them, and takes new dispatches again.
    package func retryUnwritten() throws {
        let now = io.monotonicMilliseconds()
        guard !unwritten.isEmpty, now >= nextJournalRetryMs else { return }
        nextJournalRetryMs = now + DispatcherInterpreter.journalRetryMilliseconds
        do {
            try log.append(records: unwritten)
        } catch {
            guard io.outOfSpace(error) != nil else { throw error }
            return
        }
        let last = unwritten.last?.lastSeq
        unwritten = []
        core.journalUnwritable(nil)
        guard let last else { return }
        try sync(through: last)
    }

    /// What retention last did or held back, for the status: nil until it first ran.
    package private(set) var retention: String?
    /// When retention runs again (monotonic ms) because a reader held segments back the last time: a
    /// store that snapshots, or a standby that catches up, lets them go within a second, not at the
    /// next checkpoint (which a journal that no longer grows never writes). Nil while nothing held back.
    private var retentionRetryMs: UInt64?
    static let retentionRetryMilliseconds: UInt64 = 1000

    /// Runs retention again once it is due (``retentionRetryMs``).
    private func retainIfHeldBack() {
        guard let due = retentionRetryMs, io.monotonicMilliseconds() >= due, unwritten.isEmpty, let log = log as? any CheckpointedLog else {
            return
        }
        do {
            try retain(log)
        } catch {
            retentionRetryMs = io.monotonicMilliseconds() + DispatcherInterpreter.retentionRetryMilliseconds
            logger.warning("retention could not let segments go", metadata: ["error": "\(error)"])
        }
    }

    /// Lets the journal's oldest segments go when it is over `[journal] retain_mb`, as far as its
    /// readers allow (``JournalRetention``): run after each checkpoint, so that the schedules the
    /// removed records made are in one.
    private func retain(_ log: any CheckpointedLog) throws {
        guard let budget = core.rules.retainBytes else { return }
        var standby: [JournalRetention.Need] = []
        if core.rules.replication != nil {
            standby.append(
                core.standby.map { .init(from: $0.durableThrough + 1, who: "the standby (durable through seq \($0.durableThrough))") }
                    ?? .init(from: log.firstSeq, who: "a standby that has not followed yet"))
        }
        retention = try JournalRetention.run(on: log, budget: budget, stores: io.storeNeeds(), others: standby, logger: logger)
        retentionRetryMs =
            retention?.hasPrefix(JournalRetention.heldBack) == true
            ? io.monotonicMilliseconds() + DispatcherInterpreter.retentionRetryMilliseconds : nil
        // New replay requests from before it are told the history was truncated; one being served
        // ends where the journal fails to read it (a read from before the first seq fails, and never
        // answers with later records), and the store's next request is told so.
        core.journalStarts(at: log.firstSeq)
    }

    private func replicateFromLog(to peer: [UInt8], from: UInt64, through: UInt64) throws {
        // Not past a send that failed this turn (the core has gone back to it): next turn.
        guard stalledStandby != peer else { return }
        var next = from
        while next <= through,
            let batch = try log.replayBatch(from: next, limit: min(replicaBatch.records, Int(through - next + 1)), maxBytes: replicaBatch.bytes),
            sendToStandby(peer, core.replicaAppend(first: next, batchPayload: batch.payload))
        {
            next = batch.last + 1
        }
        // Sequenced but not in the journal yet (or not sent): the feed takes them up later.
        if next <= through && stalledStandby != peer { core.standbyMissed(peer: peer, from: next) }
    }

    /// One request looked at per 100 ms (each reads the log): a store that asks sends it again with its
    /// next replay request. Only an action of the asking store's app or of an app it reads (`apps`, from
    /// the dispatcher's catalog): the actions that can crash its reducer.
    private func quarantine(_ seq: UInt64, asker: String, apps: Set<String>, reason: String) throws {
        let now = io.monotonicMilliseconds()
        guard now >= nextQuarantineCheckMs else { return }
        // The core decided with the list as it was: two requests drained in one turn may both have been
        // let through with room for one.
        guard core.quarantine.count < DispatcherCore.maxQuarantined else {
            logger.warning("the quarantine is full; a request is ignored", metadata: ["seq": "\(seq)", "asker": "\(asker)"])
            return
        }
        nextQuarantineCheckMs = now + 100
        guard seq >= log.firstSeq, let record = try log.read(from: seq, limit: 1).first, record.header.seq == seq, apps.contains(record.topicString)
        else {
            logger.warning(
                "a quarantine request names an action of an app the asking store neither is nor reads; ignored",
                metadata: ["seq": "\(seq)", "asker": "\(asker)"])
            return
        }
        let app = record.topicString
        // The reason names the action, which the store that died knows only by its seq.
        let said = asker == app ? reason : "\(reason) (a store of \(asker), which reads \(app))"
        let entry = Quarantine(seq: seq, app: app, actionType: record.header.actionType, reason: "\(app).\(record.header.actionType): \(said)")
        // Durable before any replay skips it: a restarted dispatcher must serve the same tombstone.
        do {
            try io.keepQuarantine(Array(core.quarantine.values) + [entry])
        } catch {
            logger.error("the quarantine could not be kept; the store will ask again", metadata: ["seq": "\(seq)", "error": "\(error)"])
            return
        }
        core.quarantined([entry])
    }

    private func releaseQuarantined(_ seq: UInt64, to peer: [UInt8], header: Header) throws {
        guard seq >= log.firstSeq, let record = try log.read(from: seq, limit: 1).first, record.header.seq == seq else {
            let reason = "the journal no longer holds seq \(seq) (compacted): it cannot be sequenced again"
            reply(
                .intake, to: peer,
                Message(header: Header(kind: .nack, clientID: header.clientID, clientSeq: header.clientSeq), payload: Array(reason.utf8)))
            return
        }
        let dispatch = Message(
            topic: record.topic,
            header: Header(kind: .dispatch, clientID: header.clientID, clientSeq: header.clientSeq, actionType: record.header.actionType),
            payload: record.payload)
        if core.releaseQuarantined(seq, dispatch: dispatch, from: peer, now: io.time()) != nil {
            do {
                try io.keepQuarantine(Array(core.quarantine.values))
            } catch {
                logger.error("the release could not be recorded in QUARANTINE", metadata: ["seq": "\(seq)", "error": "\(error)"])
            }
        }
        try carryOut(core.takeCommands())
    }

    private func statusMessage() -> Message {
        let facts = io.statusFacts()
        var status = core.status(now: io.time(), pid: facts.pid, subscribers: facts.subscribers, journalBytes: log.sizeInBytes)
        if let syncs = facts.syncs, let percentiles = syncs.percentiles {
            status.journalSyncs = syncs.count
            (status.journalSyncP50Us, status.journalSyncP99Us, status.journalSyncMaxUs) = percentiles
        }
        status.journalFirstSeq = log.firstSeq
        status.journalRetention = retention
        if let memberName {
            status.name = memberName
            status.leader = core.steppedDown == nil
            status.epoch = core.history.epoch
            status.standbyFollowing = core.standby != nil
            let held = core.standby?.durableThrough ?? (core.historySince - 1)
            status.standbyDurable = held
            status.replicationLag = core.head - min(held, core.head)
            status.standbyJournalFirstSeq = core.standby?.retention?.journalFirstSeq
            status.standbyRetention = core.standby?.retention?.note
            if let reason = core.steppedDown { status.problem = "stepped down: \(reason)" }
        }
        return Message(header: Header(kind: .status, seq: core.durableHead), payload: status.encoded())
    }

    /// What probes a peer: a HEARTBEAT of no history, which stores, `zflux` commands and clients
    /// ignore on a ROUTER's connection.
    package static let probe = Message(header: Header(kind: .heartbeat))

    /// Serves this turn's slice (about `budget` bytes) of the replays in progress, and probes the
    /// peers that hold bytes (``ReplayScheduler``).
    package func serveReplays(budget: Int = ReplayScheduler.bytesPerTurn) {
        let now = io.monotonicMilliseconds()
        guard !replays.isEmpty || replays.queued.nextProbeMs.map({ $0 <= now }) == true else { return }
        let log = log, io = io
        let quarantine = core.quarantine
        replays.serve(
            budget: budget, now: now,
            batches: { from, limit, maxBytes in
                // A quarantined action goes as a tombstone, which every store skips.
                try log.replayBatch(from: from, limit: limit, maxBytes: maxBytes).map { batch in
                    try ReplayPlan.tombstoned(batch, from: from, quarantine: quarantine) { try log.read(from: $0, limit: $1) }
                }
            },
            deliver: { peer, message in io.deliver(.replay, to: peer, message) },
            probe: { peer in (io.probe(.replay, peer: peer), DispatcherInterpreter.probe.wireBytes) }, logger: logger)
    }

    /// Sends a REPLICA-APPEND. When the peer's queue is full or it has gone, the core is told (it feeds
    /// the peer from the log later) and the appends after it in this turn are dropped, which keeps the
    /// stream without holes. False when it was not sent.
    @discardableResult
    private func sendToStandby(_ peer: [UInt8], _ message: Message) -> Bool {
        guard stalledStandby != peer || message.payload.isEmpty else { return false }
        if io.send(.replication, to: peer, message) { return true }
        if !message.payload.isEmpty {
            stalledStandby = peer
            core.standbyMissed(peer: peer, from: message.header.seq)
        }
        return false
    }

    /// A reply to one peer: one that has gone or is not reading loses it, and its retry is answered
    /// from the dedup table.
    private func reply(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) {
        _ = io.send(route, to: peer, message)
    }
}
