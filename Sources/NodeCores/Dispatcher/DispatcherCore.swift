@_spi(Simulation) import FluxCore
import Logging

/// The dispatcher's rules as a deterministic state machine: no sockets, threads, clocks or files.
///
/// Events come in as method calls (a request on the intake or the replay endpoint, the journal saying
/// what is durable, a turn of the loop with the time); decisions go out as ``Command``s, taken with
/// ``takeCommands()`` and carried out in order by the ZeroMQ loop (`DispatcherLoop`) or a simulator.
///
/// The rules it keeps (docs/ARCHITECTURE.md, The rules):
/// - it alone assigns sequence numbers: strictly increasing, continuing from what the journal holds;
/// - nothing is published or acknowledged before the journal says it is durable (``durable(through:)``);
/// - a retry of a (client id, client seq) already sequenced is answered with its first seq, never
///   sequenced again;
/// - bad input is NACKed with a reason and changes nothing: unknown kinds and apps, invalid actions,
///   payloads over their limit, clients over their rate.
public final class DispatcherCore: NodeCore {
    /// What it decides by: apps, limits, batch sizes, the heartbeat interval.
    public let rules: DispatcherRules
    let logger: Logger
    /// Rules broken on purpose, so the simulator can show that its checker catches them. Never set
    /// outside the simulator.
    @_spi(Simulation) public var brokenRules: Set<Canary> = []
    var commands: [Command] = []
    /// Whether a DISPATCH is sequenced, a retry, or NACKed (``Admission``).
    var admission: Admission
    /// Scopes client ids to the authenticated key that sent them (``ClientScope``).
    public let clientScope: ClientScope

    /// What is sequenced, durable, committed, published and acknowledged (``CommitPipeline``).
    var pipeline: CommitPipeline
    /// The newest sequenced action (durable or not yet).
    public var head: UInt64 { pipeline.head }
    /// The newest action published and acknowledged: the journal holds it durable and, under `sync`
    /// replication, so does the standby. (Without a standby: what the journal has made durable.)
    public var durableHead: UInt64 { pipeline.durableHead }
    /// The newest action this dispatcher's own journal has made durable.
    public var localDurableHead: UInt64 { pipeline.localDurableHead }
    /// The standby following this leader's journal, once it has said hello (``receivedReplication(_:from:now:stampAt:)``).
    public var standby: StandbyLink? { standbyFeed.link }
    /// What is sent to the standby, and what it holds (``StandbyFeed``).
    var standbyFeed: StandbyFeed
    /// Why this dispatcher leads no more, once it does not (its lease ran out, or a standby has seen a
    /// newer epoch): from then on it sequences, publishes and acknowledges nothing.
    public private(set) var steppedDown: String?
    /// The oldest action the journal holds (above 1 once older segments were removed): it moves up
    /// when retention lets segments go (``journalStarts(at:)``).
    public private(set) var firstSeq: UInt64
    /// The history served: the journal's cluster id and this opening's epoch, which starts at `since`.
    public let history: HistoryID
    public let historySince: UInt64
    /// The pending schedules (``ScheduleBook``): rebuilt from the log at start, kept by what is sequenced.
    package private(set) var schedules: ScheduleBook
    /// The last turn's time, to place the next schedule's due time on the monotonic clock.
    private var lastTick: NodeTime?
    /// What a REPLAY-REQUEST is answered with (``ReplayPlanner``).
    private var replayPlanner: ReplayPlanner
    private var nextHeartbeatMs: UInt64 = 0
    /// What it counts, and its STATUS (``DispatcherCounters``).
    var counters: DispatcherCounters
    public var accepted: UInt64 { counters.accepted }
    public var rejected: UInt64 { counters.rejected }
    /// What the apps' `count` middleware counted, by key.
    public var middlewareCounts: [String: UInt64] { counters.middlewareCounts }

    /// `head` is the newest seq the journal holds at start (durable: the journal is forced to disk when
    /// it opens), `firstSeq` its oldest; ``remember(_:)`` its recent records then. Under `sync`
    /// replication what it holds at start counts as committed (``durableHead``) only once the standby
    /// holds it too: until then nothing is replayed, announced or acknowledged from it.
    public init(
        rules: DispatcherRules, head: UInt64, firstSeq: UInt64 = 1, history: HistoryID, now: NodeTime, logger: Logger,
        clientScope: ClientScope = ClientScope(k0: 0, k1: 0)
    ) {
        self.rules = rules
        self.clientScope = clientScope
        self.logger = logger
        self.admission = Admission(
            catalog: AppCatalog(rules), clientScope: clientScope, dedupWindow: rules.dedupWindow, clientRate: rules.clientRate)
        self.schedules = ScheduleBook(maxPendingBytes: rules.maxPendingScheduleBytes)
        // Under `sync`, what the log holds at start is committed only once the standby holds it too: a
        // tail this dispatcher wrote as a standby (or led alone) may be nowhere else.
        self.pipeline = CommitPipeline(head: head, committed: rules.replication == .sync ? max(firstSeq, 1) - 1 : head, history: history)
        self.firstSeq = max(firstSeq, 1)
        self.history = history
        self.historySince = head + 1
        self.standbyFeed = StandbyFeed(
            history: history, firstSeq: max(firstSeq, 1), window: rules.replicationWindow, heartbeatMilliseconds: UInt64(rules.heartbeatMilliseconds))
        self.replayPlanner = ReplayPlanner(
            history: history, firstSeq: max(firstSeq, 1), batchSize: rules.replayBatchSize, batchesPerRequest: rules.replayBatchesPerRequest)
        self.counters = DispatcherCounters(startedAtMs: now.milliseconds)
    }

    /// A journaled action from before the start: retries of dispatches acknowledged before a restart
    /// must still be recognised.
    public func remember(_ header: Header) { remember(client: header.clientID, clientSeq: header.clientSeq, seq: header.seq) }

    public func remember(client: UInt64, clientSeq: UInt64, seq: UInt64) {
        admission.sequenced(client: client, clientSeq: clientSeq, seq: seq)
    }

    package func takeCommands() -> [Command] {
        checkInvariants()
        defer { commands.removeAll(keepingCapacity: true) }
        return commands
    }

    /// What holds between any two events, checked each time the shell takes the commands (a few
    /// comparisons): a broken one stops the node at the step that broke it, and ends a simulated seed
    /// there with its trace, rather than in the final state (``invariant(_:_:report:)``).
    private func checkInvariants() {
        pipeline.checkInvariants(report: onBrokenInvariant)
        standbyFeed.checkInvariants(head: head, report: onBrokenInvariant)
    }

    /// Where a broken invariant is reported instead of stopping the process (``invariant(_:_:report:)``):
    /// set by the simulator alone.
    @_spi(Simulation) public var onBrokenInvariant: ((String) -> Void)?

    /// The latest the shell may wait before calling ``tick(now:)`` again: the next heartbeat, or the
    /// next schedule's due time if it comes first.
    public func nextDeadlineMs(now: NodeTime) -> UInt64 {
        guard let due = schedules.nextDue, let lastTick else { return nextHeartbeatMs }
        let ahead = due > lastTick.wallNanoseconds ? UInt64(due - lastTick.wallNanoseconds) / 1_000_000 + 1 : 0
        return min(nextHeartbeatMs, lastTick.milliseconds + ahead)
    }

    /// Reads the schedules `log` makes, cancels and fires into a new book (``DispatcherBoot`` does, at
    /// start). `forgettingFires` is the `schedule-fires-twice` canary's: a leader that does not see
    /// what fired before it fires it again.
    @_spi(Simulation) public func rebuildSchedules(from log: any ActionLog, forgettingFires: Bool = false) throws {
        try restoreSchedules(from: log, forgettingFires: forgettingFires, checkpoint: nil)
    }

    /// ``rebuildSchedules(from:forgettingFires:)`` from a checkpoint's `book` (``DispatcherCheckpoint``):
    /// only the log's records from `from` on (those after the checkpoint's seq) are read.
    package func restoreSchedules(from log: any ActionLog, forgettingFires: Bool = false, checkpoint: (book: ScheduleBook, from: UInt64)?) throws {
        schedules = try ScheduleBook(
            rebuiltFrom: log, maxPendingBytes: rules.maxPendingScheduleBytes, forgettingFires: forgettingFires, checkpoint: checkpoint)
        counters.forgetListed()
    }

    // MARK: Intake

    /// A message on the intake ROUTER from `peer` (a connection), or the reason it could not be decoded.
    /// `principal` is the public key the peer authenticated with (CURVE), nil without CURVE.
    public func receivedIntake(_ received: Result<Message, ProtocolError>, from peer: [UInt8], principal: [UInt8]? = nil, now: NodeTime) {
        let message: Message
        switch received {
        case .success(let decoded): message = decoded
        case .failure(let error):
            counters.refused()
            commands.append(.reply(.intake, peer: peer, Message(header: Header(kind: .nack), payload: Array("bad message: \(error)".utf8))))
            return
        }
        switch message.kind {
        case .dispatch:
            receivedDispatch(Dispatch(message), from: peer, principal: principal, now: now)
        case .dispatchBatch:
            // Each entry as if it had come alone, read where it lies in the batch (no copy, no message
            // of its own); its ACKs go out together, as an ACK-BATCH.
            do {
                try Dispatch.each(in: message) { receivedDispatch($0, from: peer, principal: principal, now: now) }
            } catch {
                counters.refused()
                nack(peer, message.header, "bad message: \(error)")
            }
        case .statusRequest:
            commands.append(.replyStatus(.intake, peer: peer))
        case .quarantineRelease:
            receivedRelease(message.header, from: peer, now: now)
        default:
            counters.refused()
            nack(peer, message.header, "the intake accepts DISPATCH, DISPATCH-BATCH, QUARANTINE-RELEASE and STATUS-REQUEST, not \(message.kind)")
        }
    }

    typealias Dispatch = Admission.Dispatch

    /// Carries out admission's verdict on a DISPATCH (``Admission/admit(_:from:principal:now:steppedDown:journalProblem:brokenRules:schedules:host:)``).
    func receivedDispatch(_ message: Dispatch, from peer: [UInt8], principal: [UInt8]?, now: NodeTime) {
        let verdict = admission.admit(
            message, from: peer, principal: principal, now: now, steppedDown: steppedDown, journalProblem: journalProblem, brokenRules: brokenRules,
            schedules: schedules, host: self)
        // What the client sent, for the answers.
        let sent = message.header
        switch verdict {
        case .nack(let reason, let flags):
            counters.refused()
            nack(peer, sent, reason, flags: flags)
        case .duplicate(let seq, let clientSeq):
            // Sequenced already: answered again once it is committed.
            pipeline.acknowledge(
                AckBatch.Entry(seq: seq, clientID: sent.clientID, clientSeq: clientSeq, timestamp: 0), to: peer,
                batched: sent.flags.contains(.batchReplies))
        case .sequence(let header, let payload, let payloadRange, let owner, let isScheduling):
            // Admission takes nothing new while the journal cannot be written, nor once this leader stepped down.
            precondition(
                journalProblem == nil && (steppedDown == nil || brokenRules.contains(.oldLeaderAcksAfterLease)),
                "a dispatch admitted while nothing new may be taken")
            sequence(
                message.topic, message.topicRange, header: header, payload: payload, payloadRange, sent: sent, peer: peer, owner: owner, now: now)
            if isScheduling {
                schedules.note(message.topic[message.topicRange], header: stampedHeader(header, seq: head, now: now), payload: payload)
            }
        }
    }

    /// The ACTION header an admitted dispatch (`header`, its client id scoped) is stamped with as seq
    /// `seq`. Of the flags a client sent, none: only ``Header/Flags/byEffect``, which the scheduling
    /// path sets itself.
    private func stampedHeader(_ header: Header, seq: UInt64, now: NodeTime) -> Header {
        Header(
            kind: .action, flags: header.flags.intersection(.byEffect), seq: seq, clientID: header.clientID, clientSeq: header.clientSeq,
            timestamp: now.wallNanoseconds, actionType: header.actionType, history: history.rawValue)
    }

    /// Sequences an admitted dispatch: the next seq, its record, its place in the dedup table and the
    /// ACK that waits for it to be durable.
    private func sequence(
        _ topic: [UInt8], _ topicRange: Range<Int>, header: Header, payload: [UInt8], _ payloadRange: Range<Int>, sent: Header,
        peer: [UInt8], owner: UInt64, now: NodeTime
    ) {
        let seq = pipeline.nextSeq
        pipeline.stamp(topic, topicRange, header: stampedHeader(header, seq: seq, now: now), payload: payload, payloadRange)
        counters.sequenced()
        admission.sequenced(client: header.clientID, clientSeq: header.clientSeq, seq: seq, owner: owner)
        // The ACK carries the time the action was sequenced, for `zflux bench`'s stage breakdown.
        pipeline.acknowledge(
            AckBatch.Entry(seq: seq, clientID: sent.clientID, clientSeq: header.clientSeq, timestamp: now.wallNanoseconds), to: peer,
            batched: sent.flags.contains(.batchReplies))
    }

    func nack(_ peer: [UInt8], _ header: Header, _ reason: String, flags: Header.Flags = []) {
        logger.debug("nack", metadata: ["client": "\(header.clientID)", "reason": "\(reason)"])
        commands.append(.reply(.intake, peer: peer, DispatcherCore.nackMessage(header, reason, flags: flags)))
    }

    /// The end of a drained burst of intake messages: what it stamped goes to the journal as one batch
    /// (one write, and under `batch` one fsync), and answers that wait for nothing new go out.
    public func endOfBurst() {
        if let burst = pipeline.takeBurst() {
            // Live records go to a standby that has everything before them first: its write and fsync
            // overlap the journal's own.
            standbyFeed.live(burst, committed: durableHead, maxBytes: DispatcherCore.replicaAppendBytes, into: &commands)
            commands.append(.append(burst))
        }
        releaseReplies()
    }

    /// The journal has made everything up to `seq` durable: publish it and answer its clients.
    ///
    /// What became durable goes out burst by burst: each run of one app's actions within a burst as
    /// one ACTION-BATCH (a lone action as ACTION), and each batching client's ACKs as one ACK-BATCH.
    public func durable(through seq: UInt64) {
        pipeline.durable(through: seq)
        commit()
    }

    /// Publishes and acknowledges what is committed: durable here and, under `sync`, at the standby.
    private func commit() {
        var committed = localDurableHead
        if steppedDown != nil {
            // The canary: a leader past its lease that goes on alone, as if its standby had just gone.
            guard brokenRules.contains(.oldLeaderAcksAfterLease) else { return }
        } else if rules.replication == .sync && !brokenRules.contains(.ackBeforeReplicated) {
            committed = min(committed, standby?.durableThrough ?? 0)
        }
        guard pipeline.commit(through: committed, into: &commands) else {
            releaseReplies()
            return
        }
        releaseReplies()
        if !settling && !replayPlanner.deferred.isEmpty {
            for (request, peer) in replayPlanner.takeDeferred() { receivedReplayRequest(request, from: peer) }
        }
    }

    private func releaseReplies() {
        pipeline.releaseReplies(
            standbyHolds: standby?.quarantineHeld, digest: quarantineBook.digest, ackBeforeDurable: brokenRules.contains(.durableBeforeAck),
            into: &commands)
    }

    // MARK: Replication

    /// A message on the replication ROUTER from `peer`: a standby's hello, ACK or refusal.
    /// `stampAt(seq)` is the history stamp of the log's record at `seq` (nil: none there), read by the
    /// shell, for log matching.
    public func receivedReplication(_ message: Message, from peer: [UInt8], now: NodeTime, stampAt: (UInt64) -> UInt64?) {
        guard rules.replication != nil else { return }
        switch message.kind {
        case .replicaHello:
            let verdict = standbyFeed.hello(
                message, from: peer, memberToken: rules.memberToken, head: head, now: now.milliseconds, stampAt: stampAt)
            switch verdict {
            case .ignore:
                logger.warning("a REPLICA-HELLO without the member token's proof; ignored", metadata: ["seq": "\(message.header.seq)"])
            case .verifyLeadership(let claim):
                commands.append(.verifyLeadership(claim: claim))
            case .welcome(let after):
                commands.append(
                    .reply(
                        .replication, peer: peer,
                        standbyFeed.welcome(after: after, scope: clientScope, began: historySince - 1, committed: durableHead)))
                logger.info("standby following", metadata: ["from": "\(after + 1)", "head": "\(head)"])
                feedStandby()
                offerQuarantine(now: now.milliseconds)
                commit()
            case .mismatch(let at, let keep):
                commands.append(
                    .reply(.replication, peer: peer, Message(header: Header(kind: .replicaMismatch, seq: at, ref: keep, history: history.rawValue))))
            case .tooFarBehind(let first):
                logger.error(
                    "a standby needs actions this journal no longer holds: give it a copy of the journal",
                    metadata: ["standby": "\(message.header.seq)", "first": "\(first)"])
            }
        case .replicaAck:
            guard standbyFeed.acked(message, from: peer, now: now.milliseconds) else { return }
            commit()
            feedStandby()
            offerQuarantine(now: now.milliseconds)
        case .replicaRefuse:
            guard HistoryID(rawValue: message.header.history).epoch > history.epoch else { return }
            commands.append(.verifyLeadership(claim: "a standby follows the newer epoch \(HistoryID(rawValue: message.header.history))"))
        case .statusRequest:
            commands.append(.replyStatus(.replication, peer: peer))
        default:
            return
        }
    }

    /// Under `sync`, a new leader whose standby does not hold yet all the log held at start: it serves
    /// and announces nothing until then.
    private var settling: Bool { durableHead < historySince - 1 }

    /// The lease this dispatcher leads by has run out on its clock (or it gave it up): it leads no more.
    public func leaseExpired(_ reason: String = "its lease ran out") { stepDown(reason) }

    private func stepDown(_ reason: String) {
        guard steppedDown == nil else { return }
        steppedDown = reason
        logger.warning("stepping down", metadata: ["reason": "\(reason)"])
        commands.append(.stepDown(reason: reason))
    }

    /// Why the journal cannot be written now (a full disk), or nil. While set, new dispatches are
    /// refused with a NACK that says so (retries of actions already sequenced wait for their ACK); the
    /// shell keeps trying the write it could not make, and clears this once it succeeds.
    public private(set) var journalProblem: String?

    public func journalUnwritable(_ problem: String?) {
        guard problem != journalProblem else { return }
        if let problem {
            logger.error("the journal cannot be written; new dispatches are refused until it can", metadata: ["problem": "\(problem)"])
        } else {
            logger.notice("the journal is written again; dispatches are taken")
        }
        journalProblem = problem
    }

    /// A REPLICA-APPEND from `seq` did not reach `peer`'s queue: it was full (the peer does not read
    /// fast enough, or at all) or the peer has gone. The feed goes back to `seq` and resumes from the
    /// log on the next ACK or heartbeat, so what a peer holds unread stays bounded.
    public func standbyMissed(peer: [UInt8], from seq: UInt64) { standbyFeed.missed(peer: peer, from: seq) }

    /// What the standby lacks and may be sent now (within the window), read from the log.
    private func feedStandby() {
        guard steppedDown == nil else { return }
        standbyFeed.fromLog(head: head, into: &commands)
    }

    /// Sends the standby the quarantine list when it holds another.
    private func offerQuarantine(now: UInt64) {
        guard steppedDown == nil else { return }
        standbyFeed.offerQuarantine(quarantineBook.bytes, digest: quarantineBook.digest, now: now, into: &commands)
    }

    /// Retention let the journal's oldest segments go: it now starts at `seq`. A replay from before it
    /// is answered that the history was truncated, and a standby that would need it is told it is too
    /// far behind, as at a start from a journal that begins there.
    package func journalStarts(at seq: UInt64) {
        precondition(seq >= firstSeq, "a journal's first seq only moves up: \(firstSeq) then \(seq)")
        precondition(seq <= max(head, 1), "the journal keeps its newest record")
        firstSeq = seq
        replayPlanner.firstSeq = seq
        standbyFeed.firstSeq = seq
    }

    // MARK: Replay

    /// A message on the replay ROUTER from `peer`.
    public func receivedReplayRequest(_ request: Message, from peer: [UInt8]) {
        switch request.kind {
        case .replayRequest:
            switch replayPlanner.plan(request, from: peer, committed: durableHead, settling: settling) {
            case .gone(let end):
                logger.error(
                    "a replay asks for actions the journal no longer holds", metadata: ["from": "\(request.header.seq)", "first": "\(firstSeq)"])
                commands.append(.reply(.replay, peer: peer, end))
            case .deferred: break
            case .serve(let plan): commands.append(.serveReplay(plan))
            }
        case .statusRequest:
            commands.append(.replyStatus(.replay, peer: peer))
        case .quarantineRequest:
            let verdict = quarantineBook.request(
                request, effectToken: rules.effectToken, leading: steppedDown == nil, firstSeq: firstSeq, committed: durableHead,
                reads: { self.admission.catalog.apps[$0]?.app.reads })
            switch verdict {
            case .check(let seq, let asker, let apps, let reason): commands.append(.quarantine(seq: seq, asker: asker, apps: apps, reason: reason))
            case .ignore: break
            case .withoutToken: logger.debug("a quarantine request without the nodes' token; ignored", metadata: ["seq": "\(request.header.seq)"])
            case .unknownApp(let app):
                logger.warning("a quarantine request from a store of an app this dispatcher does not host; ignored", metadata: ["app": "\(app)"])
            }
        default:
            return
        }
    }

    // MARK: Quarantine

    /// Actions every store skips because they crashed a reducer, by seq (``QuarantineBook``). Kept by
    /// the shell with the journal.
    var quarantineBook = QuarantineBook()
    public var quarantine: [UInt64: Quarantine] { quarantineBook.entries }

    // MARK: Time

    /// A turn of the loop: heartbeats announce the newest durable seq, so a store that missed actions
    /// (or had nothing to miss) knows how far it should be.
    public func tick(now: NodeTime) {
        lastTick = now
        fireDueSchedules(now: now)
        guard now.milliseconds >= nextHeartbeatMs else { return }
        if steppedDown == nil, let beat = standbyFeed.heartbeat(committed: durableHead) {
            // The standby hears the leader is alive, and how far it has committed, even when idle.
            commands.append(.reply(.replication, peer: beat.peer, beat.message))
            // A feed that its queue stopped (standbyMissed) goes on from the log, after the heartbeat
            // (which names the first seq not sent yet).
            feedStandby()
            offerQuarantine(now: now.milliseconds)
        }
        // A new leader announces its epoch only once the tail it started with is committed: announcing
        // less than its stores hold would make them rebuild.
        guard !settling else {
            nextHeartbeatMs = now.milliseconds + UInt64(rules.heartbeatMilliseconds)
            return
        }
        commands.append(
            .publish(
                Message(
                    header: Header(
                        kind: .heartbeat, seq: durableHead, ref: historySince, timestamp: now.wallNanoseconds, history: history.rawValue))))
        nextHeartbeatMs = now.milliseconds + UInt64(rules.heartbeatMilliseconds)
    }

    /// Sequences every schedule due at `now` (by the wall clock), in due order, as an ACTION of its app
    /// flagged `scheduled`, with the due time in `ref` and its request's seq in `clientSeq`. Only a
    /// leader that can write its journal, and has committed the tail it started with, fires.
    private func fireDueSchedules(now: NodeTime) {
        guard let next = schedules.nextDue, next <= now.wallNanoseconds else { return }
        guard steppedDown == nil, journalProblem == nil, !settling else { return }
        let due = schedules.takeDue(now: now.wallNanoseconds, limit: DispatcherCore.maxFiredPerTurn)
        for entry in due {
            let topic = Array(entry.app.utf8)
            let header = entry.firedHeader(seq: pipeline.nextSeq, now: now.wallNanoseconds, history: history)
            pipeline.stamp(topic, topic.indices, header: header, payload: entry.payload, entry.payload.indices)
        }
        if !due.isEmpty {
            logger.info("schedules fired", metadata: ["count": "\(due.count)", "through": "\(head)"])
            endOfBurst()
        }
    }

}
