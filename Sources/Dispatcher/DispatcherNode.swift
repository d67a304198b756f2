import FluxCore
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
            if let limits = topology.limits {
                clientRate = limits.clientRate
                if let max = limits.maxPayloadBytes { maxPayloadBytes = max }
                maxPayloadBytesByType = limits.maxPayloadBytesByType ?? [:]
            }
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
    private let control: NodeControl<Never>
    /// Opens once every socket is bound (or with the bind error).
    public let ready = ReadyLatch()

    public init(configuration: Configuration, context: Context = .shared, logger: Logger) throws {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        self.control = try NodeControl()
    }

    /// Runs until `stop()` or cancellation.
    public func run() async throws {
        let configuration = configuration, context = context, logger = logger, control = control, ready = ready
        try await runOnNodeThread(name: "zflux-dispatcher", control: control, ready: ready) {
            try DispatcherLoop(configuration: configuration, context: context, logger: logger, control: control)
        }
    }

    public func stop() { control.requestStop() }
}

/// The dispatcher's event loop and everything it owns. Lives and dies on the node thread.
final class DispatcherLoop: NodeLoop {
    let configuration: DispatcherNode.Configuration
    let logger: Logger
    let control: NodeControl<Never>
    let intake: Socket
    let publisher: Socket
    let replay: Socket
    /// Who is subscribed to the action stream (stores, `zflux tail`), for the status.
    let subscribers: SocketMonitor
    let apps: [String: any AnyApp]

    /// Every sequenced action, in order.
    let log: any ActionLog
    var head: UInt64 { log.lastSeq }
    var dedup: DedupTable
    var rateLimiter: RateLimiter?
    var nextHeartbeat: UInt64 = 0
    var accepted: UInt64 = 0
    var rejected: UInt64 = 0
    let startedAt = MonotonicClock.nowMilliseconds()
    /// The drained batch: stamped actions and the replies that wait for them to be durable.
    var batch: [Message] = []
    var batchReplies: [(peer: [UInt8], reply: Message)] = []

    init(configuration: DispatcherNode.Configuration, context: Context, logger: Logger, control: NodeControl<Never>) throws {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        self.apps = Dictionary(configuration.apps.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.dedup = DedupTable(window: configuration.dedupWindow)
        self.rateLimiter = configuration.clientRate.map { RateLimiter(perSecond: $0) }
        if let journal = configuration.journal {
            let opened = try Journal(directory: journal.directory, policy: journal.policy, segmentBytes: journal.segmentBytes)
            if opened.recovery.trimmedBytes > 0 {
                logger.warning("journal had a torn tail; trimmed it", metadata: [
                    "bytes": "\(opened.recovery.trimmedBytes)", "where": "\(opened.recovery.trimmedReason ?? "")",
                ])
            }
            logger.info("journal opened", metadata: [
                "directory": "\(journal.directory)", "fsync": "\(journal.policy.rawValue)", "recovered": "\(opened.recovery)",
            ])
            log = opened
        } else {
            log = MemoryLog()
        }
        // Retries of dispatches acknowledged before a restart must still be recognised.
        var rebuilt = dedup
        var next = log.lastSeq > 65_536 ? log.lastSeq - 65_535 : 1
        while next <= log.lastSeq {
            let records = try log.read(from: next, limit: 4096)
            guard let last = records.last else { break }
            for record in records where record.header.clientID != 0 {
                rebuilt.record(client: record.header.clientID, clientSeq: record.header.clientSeq, seq: record.header.seq)
            }
            next = last.header.seq + 1
        }
        dedup = rebuilt
        intake = try SocketDefaults.router(context)
        publisher = try SocketDefaults.publisher(context)
        try publisher.setOption(.sendHighWaterMark, configuration.publishHighWaterMark)
        subscribers = try SocketMonitor(publisher, context: context, name: "dispatcher-\(UInt64.random(in: 0...UInt64.max))")
        replay = try SocketDefaults.router(context)
        try publisher.bindSecurely(configuration.actions)
        try replay.bindSecurely(configuration.replay)
        // Bind the intake last: a client that gets through can be sure its action will be broadcast.
        try intake.bindSecurely(configuration.intake)
    }

    deinit {
        subscribers.socket.close()
        intake.close()
        publisher.close()
        replay.close()
        removeIPCFiles([configuration.intake, configuration.actions, configuration.replay])
    }

    func run() throws {
        logger.info("dispatcher running", metadata: [
            "intake": "\(configuration.intake)", "actions": "\(configuration.actions)", "replay": "\(configuration.replay)",
        ])
        var poller = Poller()
        let intakeIndex = poller.add(.socket(intake))
        let replayIndex = poller.add(.socket(replay))
        let wakeIndex = poller.add(.fileDescriptor(control.wake.descriptor))
        let monitorIndex = poller.add(.socket(subscribers.socket))
        while !control.stopRequested {
            let now = MonotonicClock.nowMilliseconds()
            if now >= nextHeartbeat {
                publishHeartbeat()
                nextHeartbeat = now + UInt64(configuration.heartbeatMilliseconds)
            }
            _ = try poller.poll(timeoutMilliseconds: Int(nextHeartbeat - min(nextHeartbeat, MonotonicClock.nowMilliseconds())))
            if poller.isReadable(wakeIndex) { _ = control.takeAll() }
            if poller.isReadable(intakeIndex) { try drainIntake() }
            if poller.isReadable(replayIndex) { try drainReplay() }
            if poller.isReadable(monitorIndex) { subscribers.drain() }
        }
        logger.info("dispatcher stopped", metadata: ["head": "\(head)"])
    }

    // MARK: Intake

    func drainIntake() throws {
        // Bounded so that replay requests and heartbeats are never starved by a flood.
        for _ in 0..<4096 {
            guard let frames = try intake.receive(dontWait: true) else { break }
            handleIntake(frames)
        }
        try commitBatch()
    }

    /// Makes the batch durable (one write and, under `batch`, one fsync), then broadcasts it and
    /// answers its clients: nothing is published or acknowledged before it is in the log.
    func commitBatch() throws {
        guard !batch.isEmpty || !batchReplies.isEmpty else { return }
        try log.append(batch)
        try log.commit()
        for action in batch { publish(action) }
        for (peer, reply) in batchReplies { self.reply(intake, to: peer, reply) }
        batch.removeAll(keepingCapacity: true)
        batchReplies.removeAll(keepingCapacity: true)
    }

    func handleIntake(_ frames: [[UInt8]]) {
        guard let peer = frames.first, !peer.isEmpty else { return }
        let message: Message
        do {
            message = try Message.split(routed: frames).message
        } catch {
            rejected += 1
            reply(intake, to: peer, Message(header: Header(kind: .nack), payload: Array("bad message: \(error)".utf8)))
            return
        }
        let header = message.header
        switch header.kind {
        case .dispatch:
            handleDispatch(message, from: peer)
        case .statusRequest:
            reply(intake, to: peer, Message(header: Header(kind: .status, seq: head), payload: statusDocument()))
        default:
            rejected += 1
            nack(peer, header, "the intake accepts DISPATCH and STATUS-REQUEST, not \(header.kind)")
        }
    }

    func handleDispatch(_ message: Message, from peer: [UInt8]) {
        let header = message.header
        if header.clientID != 0, let seq = dedup.seq(client: header.clientID, clientSeq: header.clientSeq) {
            // A retry of something already sequenced: answer again (once it is durable), sequence nothing.
            batchReplies.append((peer, Message(header: Header(
                kind: .ack, seq: seq, clientID: header.clientID, clientSeq: header.clientSeq))))
            return
        }
        let appName = message.topicString
        let limit = configuration.maxPayloadBytesByType["\(appName).\(header.actionType)"] ?? configuration.maxPayloadBytes
        guard message.payload.count <= limit else {
            rejected += 1
            nack(peer, header, "the payload of \(appName).\(header.actionType) is \(message.payload.count) bytes; the limit is \(limit)")
            return
        }
        // Optional chaining mutates the limiter in place (a copy would copy every client's bucket).
        if rateLimiter?.allow(header.clientID != 0 ? header.clientID : RateLimiter.key(peer)) == false {
            rejected += 1
            nack(peer, header, "rate limited: this client may dispatch \(rateLimiter?.perSecond ?? 0) actions per second")
            return
        }
        guard let app = apps[appName] else {
            rejected += 1
            let known = apps.keys.sorted().joined(separator: ", ")
            nack(peer, header, "unknown app '\(appName)' (this cluster runs: \(known))")
            return
        }
        guard !header.actionType.isEmpty else {
            rejected += 1
            nack(peer, header, "DISPATCH without an action type")
            return
        }
        do {
            try app.check(actionType: header.actionType, payload: message.payload)
        } catch {
            rejected += 1
            nack(peer, header, error.reason)
            return
        }
        let seq = head + UInt64(batch.count) + 1
        let action = Message(topic: message.topic, header: Header(
            kind: .action, seq: seq, clientID: header.clientID, clientSeq: header.clientSeq,
            timestamp: WallClock.nowNanoseconds(), actionType: header.actionType), payload: message.payload)
        batch.append(action)
        accepted += 1
        if header.clientID != 0 { dedup.record(client: header.clientID, clientSeq: header.clientSeq, seq: seq) }
        // The ACK carries the time the action was sequenced, for `zflux bench`'s stage breakdown.
        batchReplies.append((peer, Message(header: Header(
            kind: .ack, seq: seq, clientID: header.clientID, clientSeq: header.clientSeq, timestamp: action.header.timestamp))))
    }

    func nack(_ peer: [UInt8], _ header: Header, _ reason: String) {
        logger.debug("nack", metadata: ["client": "\(header.clientID)", "reason": "\(reason)"])
        reply(intake, to: peer, Message(header: Header(
            kind: .nack, clientID: header.clientID, clientSeq: header.clientSeq), payload: Array(reason.utf8)))
    }

    /// Sends to one ROUTER peer. A peer that has gone (EHOSTUNREACH) or is not reading (EAGAIN) loses
    /// this reply; its retry will be answered from the dedup table.
    func reply(_ socket: Socket, to peer: [UInt8], _ message: Message) {
        do {
            try socket.send(message.routedFrames(to: peer), dontWait: true)
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

    func publishHeartbeat() {
        publish(Message(header: Header(kind: .heartbeat, seq: head, timestamp: WallClock.nowNanoseconds())))
    }

    // MARK: Replay

    func drainReplay() throws {
        for _ in 0..<256 {
            guard let frames = try replay.receive(dontWait: true) else { return }
            guard let peer = frames.first, !peer.isEmpty,
                  let request = try? Message.split(routed: frames).message else { continue }
            switch request.kind {
            case .replayRequest: serveReplay(request.header, to: peer)
            case .statusRequest: reply(replay, to: peer, Message(header: Header(kind: .status, seq: head), payload: statusDocument()))
            default: continue
            }
        }
    }

    func serveReplay(_ request: Header, to peer: [UInt8]) {
        let upTo = request.ref == 0 ? head : min(request.ref, head)
        var next = max(request.seq, 1)
        var batches = 0
        while next <= upTo && batches < configuration.replayBatchesPerRequest {
            let slice: [Message]
            do {
                slice = try log.read(from: next, limit: Int(min(UInt64(configuration.replayBatchSize), upTo - next + 1)))
            } catch {
                logger.error("journal read failed", metadata: ["from": "\(next)", "error": "\(error)"])
                break
            }
            guard let last = slice.last else { break }
            reply(replay, to: peer, Message(header: Header(kind: .replayBatch, seq: next, ref: last.header.seq),
                                            payload: ReplayBatch.encode(slice)))
            next = last.header.seq + 1
            batches += 1
        }
        reply(replay, to: peer, Message(header: Header(kind: .replayEnd, seq: head, ref: next - 1)))
    }

    func statusDocument() -> [UInt8] {
        let status: [String: Any] = [
            "role": "dispatcher", "pid": Int(getpid()), "head": Int(head), "accepted": Int(accepted),
            "rejected": Int(rejected), "uptime_ms": Int(MonotonicClock.elapsed(since: startedAt, now: MonotonicClock.nowMilliseconds())),
            "journal": configuration.journal.map { "\($0.directory) (fsync \($0.policy.rawValue))" } ?? "memory",
            "journal_bytes": (log as? Journal)?.sizeInBytes ?? 0, "subscribers": subscribers.connected,
        ]
        return Array((try? JSONSerialization.data(withJSONObject: status, options: [.sortedKeys])) ?? Data())
    }
}
