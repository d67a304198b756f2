import FluxCore
import FluxCores
import Foundation
import Logging
import NodeSupport
import ZeroMQ

/// The dispatcher's shell: owns its sockets and the journal on the node thread, turns what arrives
/// into ``DispatcherCore`` events and carries out the core's commands. It decides nothing itself.
///
/// Sockets:
/// - intake ROUTER: DISPATCH → ACK(seq) or NACK(reason); STATUS-REQUEST → STATUS.
/// - actions PUB: ACTION in sequence order, and HEARTBEAT(seq = newest) every heartbeat interval.
/// - replay ROUTER: REPLAY-REQUEST(from) → REPLAY-BATCH… then REPLAY-END(newest).
final class DispatcherLoop: NodeLoop {
    let configuration: DispatcherNode.Configuration
    let logger: Logger
    let control: NodeControl<DispatcherEvent>
    let core: DispatcherCore
    let intake: Socket
    let publisher: Socket
    let replay: Socket
    /// With a standby: the ROUTER it follows this leader's journal on (`REPLICA-*`).
    let replication: Socket?
    /// Why this leader stopped leading, once it has (the loop then ends).
    private(set) var steppedDown: String?
    /// The peer whose replication queue was full on the last append: later appends to it are dropped
    /// until the core feeds it again from the log.
    private var stalledStandby: [UInt8]?
    /// Sequenced actions the journal had no room for (a full disk), tried again every
    /// ``journalRetryMilliseconds``; none are published or acknowledged until written.
    private var unwritten: [StampedRecords] = []
    private var nextJournalRetryMs: UInt64 = 0
    private var nextQuarantineCheckMs: UInt64 = 0
    static let journalRetryMilliseconds: UInt64 = 250
    /// Told, on this thread, each time the committed head (``DispatcherCore/durableHead``) moves.
    var onCommitted: ((UInt64) -> Void)?
    /// Called when a peer claims a newer epoch (``DispatcherCore/Command/verifyLeadership(claim:)``):
    /// a pair member asks etcd, and posts `.leaseLost` only if etcd names another leader.
    var onLeadershipClaim: ((String) -> Void)?
    /// Who is subscribed to the action stream (stores, `zflux tail`), for the status.
    let subscribers: SocketMonitor
    /// Every sequenced action, in order.
    let log: any ActionLog
    /// Replay answers being served, a slice per loop turn (what the simulator serves replays with too).
    var replays = ReplayScheduler()
    /// One drain of the intake ends after this many actions (a DISPATCH-BATCH counts as what it holds)
    /// or bytes, whichever comes first: the batch that goes to the journal, and what the thread holds
    /// meanwhile, stay bounded.
    static let intakeMessagesPerBurst = 4096
    static let intakeBytesPerBurst = 16 << 20

    /// `journal`: one already open (a standby that won the lease hands over its own, with the new
    /// epoch begun); nil: the configuration's is opened here.
    init(
        configuration: DispatcherNode.Configuration, context: Context, logger: Logger, control: NodeControl<DispatcherEvent>,
        journal handedOver: Journal? = nil
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        if let handedOver {
            log = handedOver
        } else if let journal = configuration.journal {
            let opened = try Journal(directory: journal.directory, policy: journal.policy, segmentBytes: journal.segmentBytes)
            if opened.recovery.trimmedBytes > 0 {
                logger.warning(
                    "journal had a torn tail; trimmed it",
                    metadata: [
                        "bytes": "\(opened.recovery.trimmedBytes)", "where": "\(opened.recovery.trimmedReason ?? "")",
                    ])
            }
            logger.info(
                "journal opened",
                metadata: [
                    "directory": "\(journal.directory)", "fsync": "\(journal.policy.rawValue)", "recovered": "\(opened.recovery)",
                ])
            log = opened
        } else {
            // A new history each time: nothing of the last process's survives it.
            var random = SystemRandomNumberGenerator()
            let history = DispatcherBoot.history(cluster: 0, previousEpoch: 0, wallNanoseconds: WallClock.nowNanoseconds()) {
                HistoryID.newCluster(using: &random)
            }
            log = MemoryLog(history: history, clientScope: .random())
        }
        core = try DispatcherBoot.core(rules: configuration.rules, log: log, now: .now(), logger: logger)
        if let journal = log as? Journal { core.quarantined(try journal.quarantine()) }
        // Past a file size limit a write fails (EFBIG, a refusal like a full disk) instead of the
        // signal ending the process.
        signal(SIGXFSZ, SIG_IGN)
        logger.info("serving history", metadata: ["history": "\(log.history)", "since": "\(log.lastSeq + 1)"])
        let security = configuration.security
        intake = try SocketDefaults.router(context)
        // What peers can push in, and what a subscriber that does not read can hold here, stay within
        // `queueBytes` each however large the actions are.
        try intake.setOption(
            .receiveHighWaterMark,
            SocketDefaults.highWaterMark(queueBytes: configuration.queueBytes, largestMessage: configuration.largestActionMessage, ceiling: 100_000))
        publisher = try SocketDefaults.publisher(context)
        try publisher.setOption(.sendHighWaterMark, configuration.effectivePublishHighWaterMark)
        subscribers = try SocketMonitor(publisher, context: context, name: "dispatcher-\(UInt64.random(in: 0...UInt64.max))")
        replay = try SocketDefaults.requestRouter(context)
        // A peer that does not read holds at most about two answers in its queue: past that, sends to it
        // fail (EAGAIN, ROUTER_MANDATORY) and it is left alone for a while.
        try replay.setOption(.sendHighWaterMark, Int32(2 * (configuration.replayBatchesPerRequest + 1)))
        if let endpoint = configuration.ha?.replication {
            let socket = try SocketDefaults.requestRouter(context)
            // A few appends per peer: past that a send fails (ROUTER_MANDATORY) and the core feeds that
            // peer from the log once it reads again, so a peer that never reads holds a few MiB at most.
            try socket.setOption(.sendHighWaterMark, DispatcherCore.replicaQueueMessages)
            // Under CURVE it admits the partner's member key alone, never a client's.
            try socket.bindSecurely(endpoint, security, zapDomain: ZAPHandler.replicationDomain)
            replication = socket
        } else {
            replication = nil
        }
        try publisher.bindSecurely(configuration.actions, security)
        try replay.bindSecurely(configuration.replay, security)
        // Bind the intake last: a client that gets through can be sure its action will be broadcast.
        try intake.bindSecurely(configuration.intake, security)
    }

    deinit {
        subscribers.socket.close()
        intake.close()
        publisher.close()
        replay.close()
        replication?.close()
        removeIPCFiles([configuration.intake, configuration.actions, configuration.replay] + (configuration.ha.map { [$0.replication] } ?? []))
    }

    func run() throws {
        logger.info(
            "dispatcher running",
            metadata: [
                "intake": "\(configuration.intake)", "actions": "\(configuration.actions)", "replay": "\(configuration.replay)",
            ])
        var poller = Poller()
        let intakeIndex = poller.add(.socket(intake))
        let replayIndex = poller.add(.socket(replay))
        let wakeIndex = poller.add(.fileDescriptor(control.wake.descriptor))
        let monitorIndex = poller.add(.socket(subscribers.socket))
        let replicationIndex = replication.map { poller.add(.socket($0)) }
        var revocations = RevocationWatch(configuration.revocations, wake: control.wake)
        var committed = core.durableHead
        while !control.stopRequested && steppedDown == nil {
            if let onCommitted, core.durableHead != committed {
                committed = core.durableHead
                onCommitted(committed)
            }
            revocations.cutIfRevoked(
                [(intake, configuration.intake), (publisher, configuration.actions), (replay, configuration.replay)], logger: logger)
            // A peer whose replication queue was full last turn is fed again (from the log) from this one.
            stalledStandby = nil
            core.tick(now: .now())
            try carryOut(core.takeCommands())
            try retryUnwritten()
            // With replays in progress, only look: the next slice of them is due this turn.
            var wait = replays.isEmpty ? Int(MonotonicClock.elapsed(since: MonotonicClock.nowMilliseconds(), now: core.nextDeadlineMs)) : 0
            if !unwritten.isEmpty { wait = min(wait, Int(DispatcherLoop.journalRetryMilliseconds)) }
            _ = try poller.poll(timeoutMilliseconds: wait)
            if poller.isReadable(wakeIndex) {
                for event in control.takeAll() {
                    if case .leaseLost(let reason) = event {
                        logger.warning("leadership lost", metadata: ["reason": "\(reason)"])
                        core.leaseExpired("its lease: \(reason)")
                    }
                }
                try carryOut(core.takeCommands())
            }
            if let replicationIndex, let replication, poller.isReadable(replicationIndex) {
                for _ in 0..<1024 {
                    guard let frames = try replication.receive(dontWait: true) else { break }
                    guard let peer = frames.first, !peer.isEmpty, let message = try? Message.split(routed: frames).message else { continue }
                    let journal = log as? Journal
                    core.receivedReplication(message, from: peer, now: .now()) { seq in (try? journal?.history(at: seq)) ?? nil }
                }
                try carryOut(core.takeCommands())
            }
            if poller.isReadable(intakeIndex) {
                // Bounded so that replay requests and heartbeats are never starved by a flood.
                var principal: [UInt8]? = nil
                var bytes = 0
                // Counted in actions, not messages: a DISPATCH-BATCH counts as the DISPATCHes it says it holds.
                var actions = 0
                while actions < DispatcherLoop.intakeMessagesPerBurst {
                    guard bytes < DispatcherLoop.intakeBytesPerBurst,
                        let frames = try intake.receive(dontWait: true, userID: &principal)
                    else { break }
                    for frame in frames { bytes += frame.count }
                    actions += 1
                    guard let peer = frames.first, !peer.isEmpty else { continue }
                    let message: Result<Message, ProtocolError> = Result { () throws(ProtocolError) in try Message.split(routed: frames).message }
                    if case .success(let batch) = message, batch.kind == .dispatchBatch {
                        actions += Int(min(batch.header.seq, UInt64(DispatchBatch.maxDispatches))) - 1
                    }
                    // The key the peer authenticated with, when the intake is a CURVE server.
                    core.receivedIntake(message, from: peer, principal: principal, now: .now())
                }
                core.endOfBurst()
                try carryOut(core.takeCommands())
            }
            if poller.isReadable(replayIndex) {
                for _ in 0..<256 {
                    guard let frames = try replay.receive(dontWait: true) else { break }
                    guard let peer = frames.first, !peer.isEmpty, let request = try? Message.split(routed: frames).message else { continue }
                    core.receivedReplayRequest(request, from: peer)
                }
                try carryOut(core.takeCommands())
            }
            if poller.isReadable(monitorIndex) { subscribers.drain() }
            serveReplays()
        }
        logger.info("dispatcher stopped", metadata: ["head": "\(core.head)"])
        if let steppedDown { throw SteppedDown(reason: steppedDown) }
    }

    func carryOut(_ commands: [DispatcherCore.Command]) throws {
        for command in commands {
            switch command {
            case .reply(.replication, let peer, let message) where message.kind == .replicaAppend: sendToStandby(peer, message)
            case .reply(let route, let peer, let message): reply(route, to: peer, message)
            case .replyStatus(let route, let peer):
                var status = core.status(
                    now: .now(), pid: Int(getpid()), subscribers: subscribers.connected, journalBytes: log.sizeInBytes)
                if let ha = configuration.ha {
                    status.name = ha.name
                    status.leader = core.steppedDown == nil
                    status.epoch = core.history.epoch
                    status.standbyFollowing = core.standby != nil
                    let held = core.standby?.durableThrough ?? (core.historySince - 1)
                    status.standbyDurable = held
                    status.replicationLag = core.head - min(held, core.head)
                    if let reason = core.steppedDown { status.problem = "stepped down: \(reason)" }
                }
                reply(route, to: peer, Message(header: Header(kind: .status, seq: core.durableHead), payload: status.encoded()))
            case .publish(let message): publish(message)
            case .append(let actions):
                // Durable before anything is published or acknowledged: the core releases both only now.
                // Actions that arrive during the sync wait in the intake and share the next one (group
                // commit by drained burst; a sync thread was measured and lost, see BENCHMARKS.md).
                // Behind actions the journal had no room for, they wait their turn, in order.
                guard unwritten.isEmpty else {
                    unwritten.append(actions)
                    continue
                }
                do {
                    try log.append(records: [actions])
                } catch let error as JournalError where error.isOutOfSpace {
                    // Undone whole: kept, and written once there is room; until then nothing new is taken.
                    unwritten = [actions]
                    core.journalUnwritable(error.message)
                    continue
                }
                try log.commit()
                if let last = actions.lastSeq { core.durable(through: last) }
                try carryOut(core.takeCommands())
            case .serveReplay(let plan): replays.queue(plan, now: MonotonicClock.nowMilliseconds())
            case .replicateFromLog(let peer, let from, let through):
                // Not past a send that failed this turn (the core has gone back to it): next turn.
                guard stalledStandby != peer else { continue }
                var next = from
                while next <= through,
                    let batch = try log.replayBatch(
                        from: next, limit: min(4096, Int(through - next + 1)), maxBytes: DispatcherCore.replicaAppendBytes),
                    sendToStandby(peer, core.replicaAppend(first: next, batchPayload: batch.payload))
                {
                    next = batch.last + 1
                }
                // Sequenced but not in the journal yet (or not sent): the feed takes them up later.
                if next <= through && stalledStandby != peer { core.standbyMissed(peer: peer, from: next) }
            case .stepDown(let reason): steppedDown = reason
            case .verifyLeadership(let claim): onLeadershipClaim?(claim)
            case .quarantine(let seq, let app, let reason):
                // One request looked at per 100 ms (each reads the journal): a store that asks sends it
                // again with its next replay request.
                let now = MonotonicClock.nowMilliseconds()
                guard now >= nextQuarantineCheckMs else { continue }
                nextQuarantineCheckMs = now + 100
                // Only an action of the asking store's own app: a store of an app that reads it cannot
                // have it skipped by the stores that own it.
                guard let record = try log.read(from: seq, limit: 1).first, record.header.seq == seq, record.topicString == app else {
                    logger.warning("a quarantine request names an action of another app; ignored", metadata: ["seq": "\(seq)", "app": "\(app)"])
                    continue
                }
                let entry = Quarantine(seq: seq, app: app, actionType: record.header.actionType, reason: reason)
                // Durable before any replay skips it: a restarted dispatcher must serve the same tombstone.
                do {
                    try (log as? Journal)?.keepQuarantine(Array(core.quarantine.values) + [entry])
                } catch {
                    logger.error("the quarantine could not be kept; the store will ask again", metadata: ["seq": "\(seq)", "error": "\(error)"])
                    continue
                }
                core.quarantined([entry])
            case .releaseQuarantined(let seq, let peer, let header):
                guard let record = try log.read(from: seq, limit: 1).first, record.header.seq == seq else {
                    let reason = "the journal no longer holds seq \(seq) (compacted): it cannot be sequenced again"
                    reply(
                        .intake, to: peer,
                        Message(header: Header(kind: .nack, clientID: header.clientID, clientSeq: header.clientSeq), payload: Array(reason.utf8)))
                    continue
                }
                let dispatch = Message(
                    topic: record.topic,
                    header: Header(kind: .dispatch, clientID: header.clientID, clientSeq: header.clientSeq, actionType: record.header.actionType),
                    payload: record.payload)
                if core.releaseQuarantined(seq, dispatch: dispatch, from: peer, now: .now()) != nil {
                    do {
                        try (log as? Journal)?.keepQuarantine(Array(core.quarantine.values))
                    } catch {
                        logger.error("the release could not be recorded in QUARANTINE", metadata: ["seq": "\(seq)", "error": "\(error)"])
                    }
                }
                try carryOut(core.takeCommands())
            }
        }
    }

    /// Serves this turn's slice of the replays in progress. A send that fails (the peer has gone:
    /// EHOSTUNREACH; its queue is full: EAGAIN) tells the scheduler the peer does not read.
    func serveReplays() {
        let log = log, replay = replay
        let quarantine = core.quarantine
        replays.serve(
            budget: ReplayScheduler.bytesPerTurn, now: MonotonicClock.nowMilliseconds(),
            batches: { from, limit, maxBytes in
                // A quarantined action goes as a tombstone, which every store skips.
                try log.replayBatch(from: from, limit: limit, maxBytes: maxBytes).map { batch in
                    try ReplayPlan.tombstoned(batch, from: from, quarantine: quarantine) { try log.read(from: $0, limit: $1) }
                }
            },
            send: { peer, message in (try? replay.send(message.routedFrames(to: peer), dontWait: true)) ?? false }, logger: logger)
    }

    /// Writes the actions the journal had no room for, once it has: then they are durable, the core
    /// publishes and acknowledges them, and takes new dispatches again.
    func retryUnwritten() throws {
        let now = MonotonicClock.nowMilliseconds()
        guard !unwritten.isEmpty, now >= nextJournalRetryMs else { return }
        nextJournalRetryMs = now + DispatcherLoop.journalRetryMilliseconds
        do {
            try log.append(records: unwritten)
        } catch let error as JournalError where error.isOutOfSpace {
            return
        }
        try log.commit()
        let last = unwritten.last?.lastSeq
        unwritten = []
        core.journalUnwritable(nil)
        if let last { core.durable(through: last) }
        try carryOut(core.takeCommands())
    }

    /// Sends a REPLICA-APPEND. When the peer's queue is full or it has gone, the core is told (it feeds
    /// the peer from the log later) and the appends after it in this turn are dropped, which keeps the
    /// stream without holes. False when it was not sent.
    @discardableResult
    func sendToStandby(_ peer: [UInt8], _ message: Message) -> Bool {
        guard stalledStandby != peer || message.payload.isEmpty else { return false }
        do {
            if try replication?.send(message.routedFrames(to: peer), dontWait: true) == true { return true }
        } catch {
            logger.debug("replication send failed", metadata: ["error": "\(error)"])
        }
        if !message.payload.isEmpty {
            stalledStandby = peer
            core.standbyMissed(peer: peer, from: message.header.seq)
        }
        return false
    }

    /// Sends to one ROUTER peer. A peer that has gone (EHOSTUNREACH) or is not reading (EAGAIN) loses
    /// this reply; its retry will be answered from the dedup table.
    func reply(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) {
        do {
            let socket: Socket? =
                switch route {
                case .intake: intake
                case .replay: replay
                case .replication: replication
                }
            try socket?.send(message.routedFrames(to: peer), dontWait: true)
        } catch {
            logger.debug("reply not delivered", metadata: ["error": "\(error)"])
        }
    }

    func publish(_ message: Message) {
        do {
            try publisher.send(message.frames, dontWait: true)
        } catch {
            logger.warning("publish failed", metadata: ["error": "\(error)"])
        }
    }
}
