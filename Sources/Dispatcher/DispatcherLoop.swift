import FluxCore
import Foundation
import Logging
import NodeCores
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
    /// Told, on this thread, each time the committed head (``DispatcherCore/durableHead``) moves.
    var onCommitted: ((UInt64) -> Void)?
    /// Called when a peer claims a newer epoch (``DispatcherCore/Command/verifyLeadership(claim:)``):
    /// a pair member asks etcd, and posts `.leaseLost` only if etcd names another leader.
    var onLeadershipClaim: ((String) -> Void)?
    /// Who is subscribed to the action stream (stores, `zflux tail`), for the status.
    let subscribers: SocketMonitor
    /// Every sequenced action, in order.
    let log: any ActionLog
    /// The log when it is a journal on disk (not the in-memory log of a dispatcher without one).
    let journal: Journal?
    /// Whether the journal's syncs run on threads of their own while this one goes on (fsync `batch`
    /// with ZFLUX_SYNC_THREADS=2): the pipelined group commit.
    let pipelinesSyncs: Bool
    /// Those threads, from the start of ``run()`` to its end.
    private var syncThreads: SyncThreads?
    /// The syncs in flight and what each will prove, while the threads run (``PipelinedSync``).
    private var pipelined: PipelinedSync?
    /// Carries out the core's commands against this loop's sockets and journal (the simulator runs
    /// the same interpreter against its own network and disk).
    private(set) lazy var interpreter = DispatcherInterpreter(core: core, log: log, io: self, logger: logger, memberName: configuration.ha?.name)
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
            if !opened.recovery.removedCheckpoints.isEmpty {
                logger.warning(
                    "checkpoints past the journal's newest record removed (a tail lost or truncated since): schedules are read from an older checkpoint or the whole journal",
                    metadata: [
                        "checkpoints": "\(opened.recovery.removedCheckpoints.joined(separator: ", "))", "last_seq": "\(opened.recovery.lastSeq)",
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
        journal = log as? Journal
        // Off unless asked for: on the 2-core machine it was measured on, syncing in place cost less at
        // every rate (BENCHMARKS.md, "The pipelined group commit, measured").
        let lanes = ProcessInfo.processInfo.environment["ZFLUX_SYNC_THREADS"] == "2" ? try journal?.useSyncLanes() : nil
        pipelinesSyncs = lanes ?? false
        core = try DispatcherBoot.core(rules: configuration.rules, log: log, now: Self.time(configuration), logger: logger)
        if let journal { core.quarantined(try journal.quarantine()) }
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
        // A few batches a peer: past that, sends to it fail (EAGAIN, ROUTER_MANDATORY) and its answer
        // waits. The count is also what tells the replay budget which bytes have left libzmq.
        try replay.setOption(.sendHighWaterMark, Int32(ReplayScheduler.queueMessages))
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
        let replicationIndex = replication.map { poller.add(.socket($0)) }
        if pipelinesSyncs {
            syncThreads = try SyncThreads()
            logger.notice("the journal's syncs run on sync threads while the dispatcher goes on (ZFLUX_SYNC_THREADS=2)")
        }
        let syncIndex = syncThreads.map { poller.add(.fileDescriptor($0.done.descriptor)) }
        defer {
            // Syncs still in flight when the loop leaves acknowledge nothing more; one that failed still
            // cuts the journal back (the next opening's sync would not hear of a failure seen here).
            for outcome in syncThreads?.stop() ?? [] { _ = try? journal?.syncReturned(outcome.ticket, errno: outcome.errno) }
            syncThreads = nil
        }
        pipelined = syncThreads == nil ? nil : PipelinedSync(durable: core.durableHead)
        var revocations = RevocationWatch(configuration.revocations, wake: control.wake)
        var committed = core.durableHead
        while !control.stopRequested && interpreter.steppedDown == nil {
            if let onCommitted, core.durableHead != committed {
                committed = core.durableHead
                onCommitted(committed)
            }
            revocations.cutIfRevoked(
                [(intake, configuration.intake), (publisher, configuration.actions), (replay, configuration.replay)], logger: logger)
            try reportDurable()
            // The turn the simulator takes too; with replays in progress, only look: the next slice of them
            // is due this turn (or, when they wait for their peers, in a moment).
            var deadline = try interpreter.turn()
            // A sync that returned while the turn waited for a lane is told at once.
            if pipelined?.pipeline.hasNews == true { deadline = 0 }
            _ = try poller.poll(timeoutMilliseconds: Int(MonotonicClock.elapsed(since: MonotonicClock.nowMilliseconds(), now: deadline)))
            if let syncIndex, poller.isReadable(syncIndex) { try reportDurable() }
            if poller.isReadable(wakeIndex) {
                for event in control.takeAll() {
                    if case .leaseLost(let reason) = event {
                        logger.warning("leadership lost", metadata: ["reason": "\(reason)"])
                        core.leaseExpired("its lease: \(reason)")
                    }
                }
                try interpreter.carryOut()
            }
            if let replicationIndex, let replication, poller.isReadable(replicationIndex) {
                for _ in 0..<1024 {
                    guard let frames = try replication.receive(dontWait: true) else { break }
                    guard let peer = frames.first, !peer.isEmpty, let message = try? Message.split(routed: frames).message else { continue }
                    core.receivedReplication(message, from: peer, now: time()) { seq in (try? log.stamp(at: seq)) ?? nil }
                }
                try interpreter.carryOut()
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
                    core.receivedIntake(message, from: peer, principal: principal, now: time())
                }
                core.endOfBurst()
                try interpreter.carryOut()
            }
            if poller.isReadable(replayIndex) {
                for _ in 0..<256 {
                    guard let frames = try replay.receive(dontWait: true) else { break }
                    guard let peer = frames.first, !peer.isEmpty, let request = try? Message.split(routed: frames).message else { continue }
                    core.receivedReplayRequest(request, from: peer)
                }
                try interpreter.carryOut()
            }
            // Read, not polled; a STATUS reads it first (``statusFacts()``).
            subscribers.drain(ifDueAt: MonotonicClock.nowMilliseconds())
            interpreter.serveReplays()
            releaseMemoryAfterDrain()
        }
        logger.info("dispatcher stopped", metadata: ["head": "\(core.head)"])
        if let steppedDown = interpreter.steppedDown { throw SteppedDown(reason: steppedDown) }
    }

    /// Bytes the replay and STATUS budgets gave back since memory was last returned to the system.
    private var releasedSinceTrim = 0
    private var lastTrimMs: UInt64 = 0
    /// A second return, a while after the first: libzmq's I/O threads free a departed peer's queue on
    /// their own time, possibly after the budget heard it had gone.
    private var followUpTrimMs: UInt64?
    /// Memory is given back once this much has drained, at most once a second.
    static let trimAfterBytes = 32 << 20

    /// Gives back to the system what a drained flood of replies freed: glibc keeps it otherwise, and
    /// the node would hold its peak for good.
    private func releaseMemoryAfterDrain() {
        releasedSinceTrim += interpreter.takeReleasedBytes()
        let now = MonotonicClock.nowMilliseconds()
        if let followUp = followUpTrimMs, now >= followUp {
            followUpTrimMs = nil
            Heap.giveBackFreedMemory()
        }
        guard releasedSinceTrim >= Self.trimAfterBytes, now - lastTrimMs >= 1000 else { return }
        releasedSinceTrim = 0
        lastTrimMs = now
        followUpTrimMs = now + 2000
        Heap.giveBackFreedMemory()
    }
}

/// The loop's sockets, journal and clocks, as the interpreter reaches them.
extension DispatcherLoop: DispatcherIO {
    func monotonicMilliseconds() -> UInt64 { MonotonicClock.nowMilliseconds() }
    func time() -> NodeTime { Self.time(configuration) }

    /// Both clocks, the wall clock from where the configuration says (a test's clock, or the system's).
    static func time(_ configuration: DispatcherNode.Configuration) -> NodeTime {
        NodeTime(milliseconds: MonotonicClock.nowMilliseconds(), wallNanoseconds: configuration.wallNanoseconds())
    }

    /// Sends to one ROUTER peer, without waiting: a peer that has gone (EHOSTUNREACH) or is not
    /// reading (EAGAIN) does not get it.
    func send(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> Bool {
        let socket: Socket? =
            switch route {
            case .intake: intake
            case .replay: replay
            case .replication: replication
            }
        do {
            return try socket?.send(message.routedFrames(to: peer), dontWait: true) ?? false
        } catch {
            logger.debug("reply not delivered", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// The same, telling a full queue (EAGAIN) from a peer that has gone (EHOSTUNREACH).
    func deliver(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) -> QueuedBytes.Delivery {
        deliver(route, frames: message.routedFrames(to: peer))
    }

    func probe(_ route: DispatcherCore.Route, peer: [UInt8]) -> QueuedBytes.Delivery {
        deliver(route, frames: DispatcherInterpreter.probe.routedFrames(to: peer))
    }

    private func deliver(_ route: DispatcherCore.Route, frames: [[UInt8]]) -> QueuedBytes.Delivery {
        let socket: Socket? =
            switch route {
            case .intake: intake
            case .replay: replay
            case .replication: replication
            }
        guard let socket else { return .gone }
        do {
            return try socket.send(frames, dontWait: true) ? .sent : .full
        } catch let error where error.code == .hostUnreachable {
            return .gone
        } catch {
            logger.debug("reply not delivered", metadata: ["error": "\(error)"])
            return .full
        }
    }

    func publish(_ message: Message) {
        do {
            try publisher.send(message.frames, dontWait: true)
        } catch {
            logger.warning("publish failed", metadata: ["error": "\(error)"])
        }
    }

    /// With sync threads, hands the sync to an idle one and goes on (false: the interpreter hears of it
    /// once it returns, from ``reportDurable()``), as ``PipelinedSync`` decides: the simulator's
    /// dispatcher runs the same. Meanwhile the intake's high-water mark pushes back on clients as it
    /// did when every sync ran here. Without the threads, syncs here.
    func sync(through seq: UInt64) throws -> Bool {
        guard let syncThreads, let journal, let pipelined else {
            try log.commit()
            return true
        }
        return try pipelined.sync(through: seq, journal: journal, lanes: syncThreads, interpreter: interpreter)
    }

    /// Tells the interpreter how far the syncs that returned made the journal durable.
    private func reportDurable() throws {
        guard let syncThreads, let journal, let pipelined else { return }
        try pipelined.reportDurable(syncThreads, journal: journal, to: interpreter)
    }

    func keepQuarantine(_ entries: [Quarantine]) throws { try journal?.keepQuarantine(entries) }
    func outOfSpace(_ error: any Error) -> String? { (error as? JournalError).flatMap { $0.isOutOfSpace ? $0.message : nil } }
    func verifyLeadership(claim: String) { onLeadershipClaim?(claim) }
    func steppedDown(reason: String) {}
    func statusFacts() -> DispatcherStatusFacts {
        subscribers.drain()
        // With sync threads, the syncs run in place too (a checkpoint's, a roll's) count with the lanes'.
        var syncs = journal?.syncTimes
        if let lanes = syncThreads?.syncTimes { syncs?.add(lanes) }
        return DispatcherStatusFacts(pid: Int(getpid()), subscribers: subscribers.connected, syncs: syncs)
    }

    func storeNeeds() -> [JournalRetention.Need]? { configuration.storeNeeds() }
}
