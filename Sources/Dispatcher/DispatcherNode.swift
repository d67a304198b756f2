import FluxCore
import FluxCores
import Foundation
import Logging
import NodeSupport
import ZeroMQ

/// The single sequencer: stamps every accepted action with the next global sequence number, keeps it
/// in its log, broadcasts it to every store, and serves replays of the log.
///
/// Sockets (all owned by the node's own thread):
/// - intake ROUTER: DISPATCH → ACK(seq) or NACK(reason); STATUS-REQUEST → STATUS.
/// - actions PUB: ACTION in sequence order, and HEARTBEAT(seq = newest) every heartbeat interval.
/// - replay ROUTER: REPLAY-REQUEST(from) → REPLAY-BATCH… then REPLAY-END(newest).
public final class DispatcherNode: Sendable {
    public struct Configuration: Sendable {
        public var intake: String
        public var actions: String
        public var replay: String
        /// The apps whose actions are accepted; anything else is NACKed.
        public var apps: [any AnyApp]
        public var heartbeatMilliseconds: Int = 200
        /// Actions per REPLAY-BATCH, and batches per replay answer before REPLAY-END.
        public var replayBatchSize: Int = 512
        public var replayBatchesPerRequest: Int = 64
        /// Dispatches remembered per client for deduplicating retries.
        public var dedupWindow: Int = 4096
        /// Where sequenced actions are kept. nil: in memory only (tests, embedded clusters).
        public var journal: JournalConfiguration? = nil
        /// Actions per second one client may dispatch (a burst of as many is allowed); more are NACKed
        /// "rate limited". nil: no limit.
        public var clientRate: Int? = nil
        /// Largest payload accepted, in bytes, unless `maxPayloadBytesByType["app.type"]` says otherwise.
        public var maxPayloadBytes = 1 << 20
        public var maxPayloadBytesByType: [String: Int] = [:]
        /// Send high-water mark of the actions PUB: a subscriber further behind than this loses messages
        /// (and repairs the gap from replay).
        public var publishHighWaterMark: Int32 = 100_000
        /// Bytes queued for one peer at most: the actions PUB's and the intake's high-water marks are
        /// lowered so that that many of the largest action this intake admits fit in it.
        public var queueBytes = SocketDefaults.queueBytes
        /// The largest ACTION or DISPATCH this dispatcher handles: the largest payload it admits and
        /// room for the header, app and type around it.
        public var largestActionMessage: Int { max(maxPayloadBytes, maxPayloadBytesByType.values.max() ?? 0) + 1024 }
        /// The actions PUB's high-water mark: as configured, lowered to fit ``queueBytes``.
        public var effectivePublishHighWaterMark: Int32 {
            SocketDefaults.highWaterMark(queueBytes: queueBytes, largestMessage: largestActionMessage, ceiling: publishHighWaterMark)
        }
        /// CURVE on the tcp sockets it binds (nil: none).
        public var security: Security.Settings? = nil
        /// Revocations seen by this process's ZAP handler: when they move, the node cuts the
        /// connections it accepted (nil: no CURVE, nothing to revoke).
        public var revocations: Revocations? = nil

        public init(intake: String, actions: String, replay: String, apps: [any AnyApp]) {
            self.intake = intake
            self.actions = actions
            self.replay = replay
            self.apps = apps
        }

        public init(topology: Topology, apps: [any AnyApp]) {
            // The dispatcher binds these; with `listen` set, on that address instead of the advertised one.
            let bound = topology.dispatcher.bound
            self.init(intake: bound.intake, actions: bound.actions, replay: bound.replay, apps: apps)
            heartbeatMilliseconds = topology.heartbeatMilliseconds
            if let hwm = topology.highWaterMark { publishHighWaterMark = Int32(hwm) }
            if let bytes = topology.queueBytes { queueBytes = bytes }
            if let limits = topology.limits {
                clientRate = limits.clientRate
                if let max = limits.maxPayloadBytes { maxPayloadBytes = max }
                maxPayloadBytesByType = limits.maxPayloadBytesByType ?? [:]
            }
            if let durability = topology.durability {
                journal = .init(directory: durability.journalDirectory, policy: durability.fsync, segmentBytes: durability.segmentBytes)
            }
        }

        /// What the core decides by: this configuration without its endpoints, sockets and security.
        public var rules: DispatcherRules {
            var rules = DispatcherRules(apps: apps)
            rules.heartbeatMilliseconds = heartbeatMilliseconds
            rules.replayBatchSize = replayBatchSize
            rules.replayBatchesPerRequest = replayBatchesPerRequest
            rules.dedupWindow = dedupWindow
            rules.clientRate = clientRate
            rules.maxPayloadBytes = maxPayloadBytes
            rules.maxPayloadBytesByType = maxPayloadBytesByType
            rules.journalDescription = journal.map { "\($0.directory) (fsync \($0.policy.rawValue))" } ?? "memory"
            return rules
        }
    }

    public struct JournalConfiguration: Sendable {
        public var directory: String
        public var policy: Journal.FsyncPolicy
        public var segmentBytes: Int
        public init(directory: String, policy: Journal.FsyncPolicy = .batch, segmentBytes: Int = 64 << 20) {
            self.directory = directory
            self.policy = policy
            self.segmentBytes = segmentBytes
        }
    }

    public let configuration: Configuration
    private let context: Context
    private let logger: Logger
    private let shell: NodeShell<Never>
    /// Opens once every socket is bound (or with the bind error).
    public var ready: ReadyLatch { shell.ready }

    public init(configuration: Configuration, context: Context = .shared, logger: Logger) throws {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        self.shell = try NodeShell(threadName: "zflux-dispatcher")
    }

    /// Runs until `stop()` or cancellation.
    public func run() async throws {
        try await shell.run { [configuration, context, logger] control in
            try DispatcherLoop(configuration: configuration, context: context, logger: logger, control: control)
        }
    }

    public func stop() { shell.stop() }
}

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
    let control: NodeControl<Never>
    let core: DispatcherCore
    let intake: Socket
    let publisher: Socket
    let replay: Socket
    /// Who is subscribed to the action stream (stores, `zflux tail`), for the status.
    let subscribers: SocketMonitor
    /// Every sequenced action, in order.
    let log: any ActionLog
    /// Replay answers being served, at most one per peer (a newer request replaces the older), served
    /// a slice per loop turn in turn so that replays share the thread fairly with the intake.
    var replays: [ReplayPlan] = []
    /// Peers whose queue was full (they do not read): their requests are dropped for a while.
    var stalled = StalledPeers()
    /// Bytes of replay served per loop turn, between drains of the intake.
    static let replayBytesPerTurn = 256 << 10
    /// One drain of the intake ends after this many messages or bytes, whichever comes first: the
    /// batch that goes to the journal, and what the thread holds meanwhile, stay bounded.
    static let intakeMessagesPerBurst = 4096
    static let intakeBytesPerBurst = 16 << 20
    static let maxConcurrentReplays = 1024

    init(configuration: DispatcherNode.Configuration, context: Context, logger: Logger, control: NodeControl<Never>) throws {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        if let journal = configuration.journal {
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
            log = MemoryLog()
        }
        var random = SystemRandomNumberGenerator()
        let history =
            (log as? Journal)?.history
            ?? .opening(cluster: HistoryID.newCluster(using: &random), previousEpoch: 0, wallNanoseconds: WallClock.nowNanoseconds())
        core = DispatcherCore(
            rules: configuration.rules, head: log.lastSeq, firstSeq: (log as? Journal)?.firstSeq ?? 1, history: history, now: .now(),
            logger: logger, clientScope: (log as? Journal)?.clientScope ?? .random())
        logger.info("serving history", metadata: ["history": "\(history)", "since": "\(log.lastSeq + 1)"])
        let recent = max(core.firstSeq, log.lastSeq > DispatcherCore.dedupRecoveryRecords ? log.lastSeq - DispatcherCore.dedupRecoveryRecords + 1 : 1)
        if let journal = log as? Journal {
            let core = core
            try journal.forEachDispatch(from: recent) { client, clientSeq, seq in core.remember(client: client, clientSeq: clientSeq, seq: seq) }
        }
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
        removeIPCFiles([configuration.intake, configuration.actions, configuration.replay])
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
        var revocations = RevocationWatch(configuration.revocations)
        while !control.stopRequested {
            revocations.cutIfRevoked(
                [(intake, configuration.intake), (publisher, configuration.actions), (replay, configuration.replay)], logger: logger)
            core.tick(now: .now())
            try carryOut(core.takeCommands())
            // With replays in progress, only look: the next slice of them is due this turn.
            let wait = replays.isEmpty ? Int(MonotonicClock.elapsed(since: MonotonicClock.nowMilliseconds(), now: core.nextDeadline)) : 0
            _ = try poller.poll(timeoutMilliseconds: wait)
            if poller.isReadable(wakeIndex) { _ = control.takeAll() }
            if poller.isReadable(intakeIndex) {
                // Bounded so that replay requests and heartbeats are never starved by a flood.
                var principal: [UInt8]? = nil
                var bytes = 0
                for _ in 0..<DispatcherLoop.intakeMessagesPerBurst {
                    guard bytes < DispatcherLoop.intakeBytesPerBurst,
                        let frames = try intake.receive(dontWait: true, userID: &principal)
                    else { break }
                    for frame in frames { bytes += frame.count }
                    guard let peer = frames.first, !peer.isEmpty else { continue }
                    let message: Result<Message, ProtocolError> = Result { () throws(ProtocolError) in try Message.split(routed: frames).message }
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
            serveReplays(budget: DispatcherLoop.replayBytesPerTurn)
        }
        logger.info("dispatcher stopped", metadata: ["head": "\(core.head)"])
    }

    func carryOut(_ commands: [DispatcherCore.Command]) throws {
        for command in commands {
            switch command {
            case .reply(let route, let peer, let message): reply(route, to: peer, message)
            case .replyStatus(let route, let peer):
                let status = core.status(
                    now: .now(), pid: Int(getpid()), subscribers: subscribers.connected, journalBytes: (log as? Journal)?.sizeInBytes ?? 0)
                reply(route, to: peer, Message(header: Header(kind: .status, seq: core.durableHead), payload: status.encoded()))
            case .publish(let message): publish(message)
            case .append(let actions):
                // Durable before anything is published or acknowledged: the core releases both only now.
                // Actions that arrive during the sync wait in the intake and share the next one (group
                // commit by drained burst; a sync thread was measured and lost, see BENCHMARKS.md).
                try log.append(actions)
                try log.commit()
                if let last = actions.last { core.durable(through: last.header.seq) }
                try carryOut(core.takeCommands())
            case .serveReplay(let plan): queueReplay(plan)
            }
        }
    }

    func queueReplay(_ plan: ReplayPlan) {
        guard !stalled.contains(plan.peer, now: MonotonicClock.nowMilliseconds()) else { return }
        if let index = replays.firstIndex(where: { $0.peer == plan.peer }) {
            replays[index] = plan
        } else if replays.count < DispatcherLoop.maxConcurrentReplays {
            replays.append(plan)
        }
    }

    /// Serves about `budget` bytes of the replays in progress, a slice of each in turn.
    func serveReplays(budget: Int) {
        var left = budget
        while left > 0, !replays.isEmpty {
            let plan = replays.removeFirst()
            let (messages, rest) = plan.serve(
                budget: left, batches: { try log.replayBatch(from: $0, limit: $1, maxBytes: $2) }, logger: logger)
            var delivered = true
            for message in messages {
                left -= message.payload.count
                do {
                    guard try replay.send(message.routedFrames(to: plan.peer), dontWait: true) else {
                        delivered = false
                        break
                    }
                } catch {
                    delivered = false
                    break
                }
            }
            if !delivered {
                // Gone, or its queue is full: it does not read. Drop the answer; it asks again if it lives.
                logger.notice("replay peer not reading; its answer is dropped", metadata: ["from": "\(plan.from)"])
                stalled.stall(plan.peer, now: MonotonicClock.nowMilliseconds())
            } else if let rest {
                replays.append(rest)
            }
            if messages.isEmpty { break }
        }
    }

    /// Sends to one ROUTER peer. A peer that has gone (EHOSTUNREACH) or is not reading (EAGAIN) loses
    /// this reply; its retry will be answered from the dedup table.
    func reply(_ route: DispatcherCore.Route, to peer: [UInt8], _ message: Message) {
        do {
            try (route == .intake ? intake : replay).send(message.routedFrames(to: peer), dontWait: true)
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
