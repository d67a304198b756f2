import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import ZeroMQ

/// The store's shell: owns its sockets on the node thread, turns what arrives into ``StoreCore``
/// events and carries out the core's commands. It decides nothing itself.
final class StoreLoop: NodeLoop {
    let configuration: StoreNode.Configuration
    let logger: Logger
    let control: NodeControl<StoreNode.Command>
    let context: Context
    let core: StoreCore
    /// Replaced on `.reconnect`.
    var actions: Socket
    var replay: Socket
    let effects: Socket
    let statePublisher: Socket
    /// Who is subscribed to this store's state (views), for the status.
    let subscribers: SocketMonitor
    let snapshots: Socket
    /// Peers of the snapshot ROUTER whose queue was full: their requests are dropped for a while.
    var stalled = StalledPeers()
    /// Snapshot answers in parts whose peers have not asked for the rest yet.
    var transfers = SnapshotTransfers()
    /// The answers queued for peers, one copy each, within the store's ``SnapshotBudget``.
    var answers = SharedAnswers()
    /// The answers held a lot of memory: once libzmq has let go of all of it, give it back.
    var trimWhenIdle = false
    var lastRefusalLogMs: UInt64 = 0
    /// The effects the core asked to run (`.runEffects`): they send their actions back through
    /// `control`, from their own tasks.
    let effectTasks = EffectTasks()
    var snapshotRequests: UInt64 = 0
    var snapshotRequestsDropped: UInt64 = 0
    /// 1 when the snapshot found at start was unusable and set aside (for the status and metrics).
    var snapshotsSetAside: UInt64 = 0
    /// The action being applied, kept where a crash leaves it (beside the snapshot; none without one).
    let marker: CrashMarker?
    /// Carries out the core's commands against this loop's sockets, effect tasks and snapshot file
    /// (the simulator runs the same interpreter against its own network and disk).
    private(set) lazy var interpreter = StoreInterpreter(
        core: core, io: self, logger: logger, name: configuration.name, app: configuration.app.name,
        effectToken: configuration.effectToken ?? 0, quarantineAsked: quarantineAsked)
    /// The action this store died on twice in a row, from its crash marker (see ``StoreInterpreter``).
    private let quarantineAsked: (seq: UInt64, reason: String)?

    init(configuration: StoreNode.Configuration, context: Context, logger: Logger, control: NodeControl<StoreNode.Command>) throws {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        self.context = context
        var snapshot: SnapshotFile.Contents? = nil
        var unreadable: String? = nil
        if let path = configuration.snapshotPath {
            do {
                snapshot = try SnapshotFile.read(path)
            } catch {
                unreadable = "\(error)"
            }
        }
        var quarantineAsked: (seq: UInt64, reason: String)?
        let marker = (configuration.crashMarkerPath ?? configuration.snapshotPath.map { $0 + ".applying" }).flatMap { CrashMarker(path: $0) }
        self.marker = marker
        if let crash = marker?.countCrash() {
            // Read before this run logs its own start: the run that crashed logged the same line as it started.
            let started = "the last run died applying an action"
            let trap = configuration.logPath.flatMap { CrashLog.lastTrap(log: $0, after: started) }
            logger.warning(
                "\(started)",
                metadata: ["store": "\(configuration.name)", "seq": "\(crash.seq)", "times": "\(crash.count)", "trap": "\(trap ?? "-")"])
            quarantineAsked = StoreInterpreter.quarantineToAsk(diedAt: crash.seq, times: crash.count) { times in
                let said =
                    trap.map { "; its log says: \($0)" }
                    ?? configuration.logPath.map {
                        "; its log (\($0)) has no message of the crash: a trap without one, such as an arithmetic overflow in a release build (docs/OPERATIONS.md, \"A poison action\")"
                    } ?? ""
                return "store \(configuration.name) died \(times) times in a row applying it\(said)"
            }
        }
        self.quarantineAsked = quarantineAsked
        core = StoreCore(
            rules: configuration.rules, snapshot: snapshot, effectClientID: UInt64.random(in: 1...UInt64.max),
            now: .now(), logger: logger
        ) {
            let runtime = configuration.app.makeRuntime(format: configuration.codec) { app, type, payload in
                control.post(.effectAction(app: app, type: type, payload: payload))
            }
            // The seq being applied is marked while the reducer runs: a crash leaves it behind.
            return marker.map { marker in
                InterceptedRuntime(
                    runtime,
                    before: { _, _, _, stamp in
                        marker.applying = stamp.seq
                        return true
                    }, after: { marker.applying = 0 })
            } ?? runtime
        }
        // A snapshot that fails its checksum (a flipped bit, a torn copy) or that the app cannot
        // restore is kept for the operator, not overwritten by the next one: the state is rebuilt from
        // the journal, which holds everything the snapshot did.
        if let reason = unreadable ?? core.snapshotRefused, let path = configuration.snapshotPath {
            snapshotsSetAside = 1
            do {
                let aside = try SnapshotFile.setAside(path)
                logger.warning(
                    "snapshot not usable: set aside, rebuilding the state from the journal",
                    metadata: ["store": "\(configuration.name)", "reason": "\(reason)", "kept": "\(aside)"])
            } catch {
                logger.warning(
                    "snapshot not usable, and not set aside: rebuilding the state from the journal",
                    metadata: ["store": "\(configuration.name)", "reason": "\(reason)", "error": "\(error)"])
            }
        }
        let security = configuration.security
        // An XPUB: views of a selection of the state are known by their subscriptions.
        statePublisher = try SocketDefaults.subscriptionPublisher(context)
        try statePublisher.setOption(.sendHighWaterMark, configuration.effectivePublishHighWaterMark)
        subscribers = try SocketMonitor(statePublisher, context: context, name: "store-\(configuration.name)-\(UInt64.random(in: 0...UInt64.max))")
        snapshots = try SocketDefaults.requestRouter(context)
        // A snapshot in parts goes out on credit (`transfers`): a few parts per peer at a time. A peer
        // that does not read fills this queue and is then left alone for a while (see `reply`).
        try snapshots.setOption(
            .sendHighWaterMark,
            SocketDefaults.highWaterMark(
                queueBytes: configuration.queueBytes, largestMessage: StoreNode.Configuration.largestSentMessage, ceiling: 64))
        effects = try SocketDefaults.dealer(context)
        try statePublisher.bindSecurely(configuration.state, security)
        try snapshots.bindSecurely(configuration.snapshot, security)
        (actions, replay) = try StoreLoop.connectToDispatcher(configuration, context)
        try effects.connectSecurely(configuration.dispatcherIntake, security)
    }

    /// The subscription to the actions and the replay DEALER. Subscribing comes before asking for the
    /// history, so nothing falls between the two (Clone pattern).
    static func connectToDispatcher(_ configuration: StoreNode.Configuration, _ context: Context) throws -> (actions: Socket, replay: Socket) {
        let actions = try SocketDefaults.subscriber(context)
        // HWM before connecting: libzmq applies it to connections made afterwards.
        try actions.setOption(.receiveHighWaterMark, configuration.highWaterMark)
        try actions.subscribe()
        try actions.connectSecurely(configuration.dispatcherActions, configuration.security)
        let replay = try SocketDefaults.dealer(context)
        try replay.connectSecurely(configuration.dispatcherReplay, configuration.security)
        return (actions, replay)
    }

    deinit {
        effectTasks.cancelAll()
        subscribers.socket.close()
        for socket in [actions, replay, effects, statePublisher, snapshots] { socket.close() }
        removeIPCFiles([configuration.state, configuration.snapshot])
    }

    func run() throws {
        logger.info(
            "store running",
            metadata: [
                "store": "\(configuration.name)", "app": "\(configuration.app.name)",
                "state": "\(configuration.state)", "snapshot": "\(configuration.snapshot)",
            ])
        core.start(now: .now())
        var revocations = RevocationWatch(configuration.revocations, wake: control.wake)
        while !control.stopRequested {
            // Views reconnect through ZAP, and re-snapshot after the gap.
            revocations.cutIfRevoked(
                [(statePublisher, configuration.state), (snapshots, configuration.snapshot)], logger: logger,
                metadata: ["store": "\(configuration.name)"])
            let now = NodeTime.now()
            // Past the seq it last died on: that streak is over (a slow action killed twice, by OOM
            // or a probe, over a long run must not add up to a quarantine).
            marker?.passed(core.version)
            core.tick(now: now)
            try interpreter.carryOut()
            // Built each turn: `.reconnect` replaces the dispatcher-facing sockets.
            var poller = Poller()
            let actionsIndex = poller.add(.socket(actions))
            let replayIndex = poller.add(.socket(replay))
            let snapshotIndex = poller.add(.socket(snapshots))
            let effectsIndex = poller.add(.socket(effects))
            let wakeIndex = poller.add(.fileDescriptor(control.wake.descriptor))
            let publisherIndex = poller.add(.socket(statePublisher))
            _ = try poller.poll(
                timeoutMilliseconds: Int(MonotonicClock.elapsed(since: MonotonicClock.nowMilliseconds(), now: core.nextDeadlineMs(now: .now()))))
            if poller.isReadable(wakeIndex) {
                for case .effectAction(let app, let type, let payload) in control.takeAll() {
                    core.effectSent(app: app, type: type, payload: payload, now: .now())
                }
            }
            // The subscription first: what it carries decides which replayed actions are live.
            if poller.isReadable(actionsIndex) { try drain(actions, limit: 10_000) { core.receivedFromDispatcher($0, now: $1) } }
            if poller.isReadable(replayIndex) { try drain(replay, limit: 1024) { core.receivedReplay($0, now: $1) } }
            if poller.isReadable(snapshotIndex) { try drainRequests() }
            if poller.isReadable(effectsIndex) { try drain(effects, limit: 10_000) { message, _ in core.receivedIntakeReply(message) } }
            // Read, not polled; a STATUS reads it first (``replyStatus(to:)``).
            subscribers.drain(ifDueAt: MonotonicClock.nowMilliseconds())
            if poller.isReadable(publisherIndex) { try drainSubscriptions() }
            transfers.expire(now: MonotonicClock.nowMilliseconds())
            giveBackAnswerMemory()
            try interpreter.carryOut()
        }
        core.stop()
        try interpreter.carryOut()
        logger.info("store stopped", metadata: ["store": "\(configuration.name)", "version": "\(core.version)"])
    }

    /// Hands what is queued on `socket` (bounded, so no socket starves the others) to `event`.
    func drain(_ socket: Socket, limit: Int, _ event: (Message, NodeTime) -> Void) throws {
        for _ in 0..<limit {
            guard let frames = try socket.receive(dontWait: true) else { return }
            guard let message = try? Message(frames: frames) else {
                logger.warning("dropped a malformed message", metadata: ["store": "\(configuration.name)"])
                continue
            }
            event(message, .now())
        }
    }

    /// Subscriptions to the state publisher: a byte 1 (subscribe) or 0 (the last follower left), then
    /// the topic. Only selection topics matter to the core.
    ///
    /// Bounded in time as well as in count: a flood of subscriptions waits for the next turns, and the
    /// loop goes back to its other sockets within a few milliseconds (libzmq must never see this
    /// thread stall on its input: its heartbeats then assert).
    func drainSubscriptions() throws {
        let started = MonotonicClock.nowMilliseconds()
        for handled in 0..<1024 {
            if handled % 64 == 63, MonotonicClock.nowMilliseconds() - started >= StoreLoop.subscriptionBudgetMs { return }
            guard let frames = try statePublisher.receive(dontWait: true) else { return }
            guard let frame = frames.first, let kind = frame.first, kind <= 1 else { continue }
            core.subscriptionChanged(topic: String(decoding: frame.dropFirst(), as: UTF8.self), subscribed: kind == 1, now: .now())
        }
    }

    /// The most time one turn spends on subscriptions.
    static let subscriptionBudgetMs: UInt64 = 5

    /// Snapshot and status requests. A peer gets one snapshot per drain however often it asks, and
    /// none while it is stalled (it did not read an earlier answer).
    func drainRequests() throws {
        var asked: Set<[UInt8]> = []
        let now = MonotonicClock.nowMilliseconds()
        for _ in 0..<1024 {
            guard let frames = try snapshots.receive(dontWait: true) else { return }
            guard let peer = frames.first, !peer.isEmpty, let request = try? Message.split(routed: frames).message else { continue }
            if request.kind == .snapshotRequest, request.header.flags.contains(.part) {
                // A reader asking for the next parts of its answer: more credit.
                send(parts: transfers.next(for: peer, from: request.header.ref, version: request.header.seq, now: now), to: peer)
                continue
            }
            if request.kind == .snapshotRequest {
                snapshotRequests += 1
                if stalled.contains(peer, now: now) {
                    snapshotRequestsDropped += 1
                    continue
                }
                guard asked.insert(peer).inserted else {
                    snapshotRequestsDropped += 1
                    continue
                }
            }
            core.receivedRequest(request, from: peer, now: .now())
        }
    }

    /// Sends an answer to one peer of the snapshot ROUTER, in parts when large. A peer whose queue is
    /// full (it does not read) or that has gone loses the answer and is left alone for a second.
    func reply(to peer: [UInt8], _ message: Message) {
        send(parts: transfers.start(message, to: peer, now: MonotonicClock.nowMilliseconds()), to: peer)
    }

    /// Each part's payload is queued as one copy shared by every peer it goes to, counted until
    /// libzmq lets go of it (written out, or dropped with its peer's connection). A part that does
    /// not fit the budget is refused with the rest of the answer: the peer asks again after its
    /// timeout, by when the queues may have drained.
    func send(parts: [Message], to peer: [UInt8]) {
        for part in parts {
            let delivered: Bool
            if part.kind == .snapshot, !part.payload.isEmpty {
                guard let frame = answers.frame(for: part) else {
                    snapshotRequestsDropped += 1
                    let now = MonotonicClock.nowMilliseconds()
                    if now - lastRefusalLogMs >= 1000 {
                        lastRefusalLogMs = now
                        logger.notice(
                            "snapshot answers queued for peers fill the budget; an answer is refused",
                            metadata: ["store": "\(configuration.name)", "held": "\(answers.bytes)", "budget": "\(SnapshotBudget.queuedBytes)"])
                    }
                    return
                }
                if answers.bytes >= StoreLoop.trimAboveBytes { trimWhenIdle = true }
                delivered = (try? snapshots.send(Array(part.routedFrames(to: peer).dropLast()), shared: frame, dontWait: true)) ?? false
            } else {
                delivered = (try? snapshots.send(part.routedFrames(to: peer), dontWait: true)) ?? false
            }
            if !delivered {
                stalled.stall(peer, now: MonotonicClock.nowMilliseconds())
                logger.notice("snapshot peer not reading; its answer is dropped", metadata: ["store": "\(configuration.name)"])
                return
            }
        }
    }

    /// Answers past this many bytes held at once leave the allocator holding freed memory: once none
    /// is held, it goes back to the system (glibc keeps freed heap otherwise).
    static let trimAboveBytes = 16 << 20

    func giveBackAnswerMemory() {
        guard trimWhenIdle, answers.bytes == 0 else { return }
        trimWhenIdle = false
        Heap.giveBackFreedMemory()
    }

    func send(_ socket: Socket, _ frames: [[UInt8]]) {
        do {
            try socket.send(frames, dontWait: true)
        } catch {
            logger.debug("send failed", metadata: ["error": "\(error)"])
        }
    }
}

/// The loop's sockets, effect tasks and snapshot file, as the interpreter reaches them.
extension StoreLoop: StoreIO {
    func requestReplay(_ message: Message) { send(replay, message.frames) }
    func publish(_ message: Message) { send(statePublisher, message.frames) }

    func replyStatus(to peer: [UInt8]) {
        subscribers.drain()
        var status = core.status(now: .now(), subscribers: subscribers.connected, pid: Int(getpid()))
        status.snapshotRequests = snapshotRequests
        status.snapshotRequestsDropped = snapshotRequestsDropped
        status.snapshotsSetAside = snapshotsSetAside
        status.effectsRunning = effectTasks.inFlight
        send(snapshots, Message(header: Header(kind: .status, seq: core.version), payload: status.encoded()).routedFrames(to: peer))
    }

    func dispatch(_ message: Message) { send(effects, message.frames) }
    func runEffects(_ effects: PendingEffects) { effectTasks.run(effects) }
    func cancelEffects() { effectTasks.cancelAll() }

    func reconnect() throws {
        actions.close()
        replay.close()
        (actions, replay) = try StoreLoop.connectToDispatcher(configuration, context)
    }

    func writeSnapshot(_ snapshot: StoreSnapshot) {
        guard let path = configuration.snapshotPath else { return }
        do {
            try SnapshotFile.write(snapshot, to: path)
        } catch {
            logger.error("snapshot not written", metadata: ["store": "\(configuration.name)", "error": "\(error)"])
        }
    }
}
