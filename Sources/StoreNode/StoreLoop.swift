import FluxCore
import Foundation
import Logging
import NodeSupport
import ZeroMQ

/// The store's event loop and everything it owns. Lives and dies on the node thread.
final class StoreLoop: NodeLoop {
    let configuration: StoreNode.Configuration
    let logger: Logger
    let control: NodeControl<StoreNode.Command>
    var actions: Socket
    var replay: Socket
    let context: Context
    var reconnects: UInt64 = 0
    var lastReconnect: UInt64 = 0
    let effects: Socket
    let statePublisher: Socket
    /// Who is subscribed to this store's state (views), for the status.
    let subscribers: SocketMonitor
    let snapshots: Socket
    var runtime: any AppRuntime

    /// The seq of the last action applied; the state's version.
    var version: UInt64 = 0
    /// The newest seq the dispatcher has announced (actions or heartbeats).
    var dispatcherHead: UInt64 = 0
    /// Live actions that arrived ahead of a gap, waiting for the gap to be repaired.
    var pending: [UInt64: Message] = [:]
    static let maxPending = 200_000
    static let maxUnansweredEffects = 100_000
    var replayRequestedAt: UInt64? = nil
    /// The dispatcher's newest seq when this store first heard it over its subscription. Actions after
    /// it were sequenced while the store was subscribed: they are live, and run effects however they
    /// arrive (directly, or repaired by replay). Actions up to it are history this store recovers, and
    /// their effects are not run again (DESIGN rule 3).
    var liveAfter: UInt64? = nil
    var lastPublishedVersion: UInt64 = 0
    var lastHeardFromDispatcher: UInt64
    var nextHeartbeat: UInt64 = 0
    var effectClientSeq: UInt64 = 0
    let effectClientID = UInt64.random(in: 1...UInt64.max)
    /// Effect actions sent to the intake and not yet answered, by client seq: (frames, last sent).
    var unansweredEffects: [UInt64: (frames: [[UInt8]], sentAt: UInt64)] = [:]
    var applied: UInt64 = 0
    var rejected: UInt64 = 0
    var replayed: UInt64 = 0
    var gapsRepaired: UInt64 = 0
    let startedAt = MonotonicClock.nowMilliseconds()
    /// The whole state in wire form and its version, for snapshot replies: encoded when first asked for
    /// (or when published whole), so a store publishing changes only does not encode its whole state per update.
    var fullState: (version: UInt64, bytes: [UInt8])?
    /// The version from which the runtime's record of changes runs. A changes-only update is published
    /// only when that is the last published version, so the update applies exactly to what views hold.
    var changesSince: UInt64 = 0
    /// The version of the last snapshot written to (or read from) disk.
    var snapshotVersion: UInt64 = 0
    /// True once the store has caught up with the dispatcher after starting; views are answered then.
    var caughtUp = false
    /// Snapshot requests that arrived while catching up.
    var waitingViews: [[UInt8]] = []

    init(configuration: StoreNode.Configuration, context: Context, logger: Logger, control: NodeControl<StoreNode.Command>) throws {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        self.runtime = StoreLoop.makeRuntime(configuration.app, control)
        self.lastHeardFromDispatcher = MonotonicClock.nowMilliseconds()
        self.context = context
        statePublisher = try SocketDefaults.publisher(context)
        try statePublisher.setOption(.sendHighWaterMark, configuration.highWaterMark)
        subscribers = try SocketMonitor(statePublisher, context: context, name: "store-\(configuration.name)-\(UInt64.random(in: 0...UInt64.max))")
        snapshots = try SocketDefaults.router(context)
        actions = try SocketDefaults.subscriber(context)
        replay = try SocketDefaults.dealer(context)
        effects = try SocketDefaults.dealer(context)
        try statePublisher.bindSecurely(configuration.state)
        try snapshots.bindSecurely(configuration.snapshot)
        // HWM before connecting: libzmq applies it to connections made afterwards.
        try actions.setOption(.receiveHighWaterMark, configuration.highWaterMark)
        // Subscribe before asking for the history, so nothing falls between the two (Clone pattern).
        try actions.subscribe()
        try actions.connectSecurely(configuration.dispatcherActions)
        try replay.connectSecurely(configuration.dispatcherReplay)
        try effects.connectSecurely(configuration.dispatcherIntake)
        loadSnapshot()
        runtime.forgetChanges()
        changesSince = version
    }

    static func makeRuntime(_ app: any AnyApp, _ control: NodeControl<StoreNode.Command>) -> any AppRuntime {
        app.makeRuntime { app, type, payload in control.post(.effectAction(app: app, type: type, payload: payload)) }
    }

    /// Resumes from the snapshot on disk, if there is a usable one; otherwise starts from nothing (the
    /// dispatcher's journal holds every action).
    func loadSnapshot() {
        guard let path = configuration.snapshotPath else { return }
        do {
            guard let snapshot = try SnapshotFile.read(path) else { return }
            guard snapshot.app == configuration.app.name else {
                throw SnapshotError("\(path) holds app '\(snapshot.app)', not '\(configuration.app.name)'")
            }
            try runtime.loadSnapshot(snapshot.state)
            version = snapshot.version
            lastPublishedVersion = version
            snapshotVersion = version
            logger.info("resumed from snapshot", metadata: ["store": "\(configuration.name)", "version": "\(version)"])
        } catch {
            logger.warning("snapshot not usable; replaying everything", metadata: ["store": "\(configuration.name)", "reason": "\(error)"])
            runtime = StoreLoop.makeRuntime(configuration.app, control)
            version = 0
            lastPublishedVersion = 0
        }
    }

    func writeSnapshotIfDue(force: Bool = false) {
        guard let path = configuration.snapshotPath, version > snapshotVersion else { return }
        guard force || version - snapshotVersion >= UInt64(configuration.snapshotEveryActions) else { return }
        do {
            try SnapshotFile.write(.init(version: version, app: configuration.app.name, state: try runtime.encodedSnapshot()), to: path)
            snapshotVersion = version
        } catch {
            logger.error("snapshot not written", metadata: ["store": "\(configuration.name)", "error": "\(error)"])
        }
    }

    deinit {
        runtime.cancelEffects()
        subscribers.socket.close()
        for socket in [actions, replay, effects, statePublisher, snapshots] { socket.close() }
        removeIPCFiles([configuration.state, configuration.snapshot])
    }

    func run() throws {
        logger.info("store running", metadata: [
            "store": "\(configuration.name)", "app": "\(configuration.app.name)",
            "state": "\(configuration.state)", "snapshot": "\(configuration.snapshot)",
        ])
        requestReplay()
        while !control.stopRequested {
            let now = MonotonicClock.nowMilliseconds()
            if now >= nextHeartbeat {
                publishHeartbeat()
                nextHeartbeat = now + UInt64(configuration.heartbeatMilliseconds)
            }
            let timeout = UInt64(configuration.dispatcherTimeoutMilliseconds)
            if MonotonicClock.elapsed(since: lastHeardFromDispatcher, now: now) > timeout && MonotonicClock.elapsed(since: lastReconnect, now: now) > timeout {
                try reconnect()
            }
            if let asked = replayRequestedAt, MonotonicClock.elapsed(since: asked, now: now) > UInt64(configuration.replayTimeoutMilliseconds) {
                logger.notice("replay unanswered; asking again", metadata: ["store": "\(configuration.name)", "from": "\(version + 1)"])
                requestReplay()
            }
            // Built each turn: `reconnect()` replaces the dispatcher-facing sockets.
            var poller = Poller()
            let actionsIndex = poller.add(.socket(actions))
            let replayIndex = poller.add(.socket(replay))
            let snapshotIndex = poller.add(.socket(snapshots))
            let effectsIndex = poller.add(.socket(effects))
            let wakeIndex = poller.add(.fileDescriptor(control.wake.descriptor))
            let monitorIndex = poller.add(.socket(subscribers.socket))
            let wait = Int(nextHeartbeat - min(nextHeartbeat, MonotonicClock.nowMilliseconds()))
            _ = try poller.poll(timeoutMilliseconds: wait)
            if poller.isReadable(wakeIndex) { try handleCommands() }
            // The subscription first: what it carries decides which replayed actions are live.
            if poller.isReadable(actionsIndex) { try drainActions() }
            if poller.isReadable(replayIndex) { try drainReplay() }
            if poller.isReadable(snapshotIndex) { try drainSnapshotRequests() }
            if poller.isReadable(effectsIndex) { drainEffectReplies() }
            if poller.isReadable(monitorIndex) { subscribers.drain() }
            retryUnansweredEffects()
            publishStateIfChanged()
            writeSnapshotIfDue()
        }
        writeSnapshotIfDue(force: true)
        logger.info("store stopped", metadata: ["store": "\(configuration.name)", "version": "\(version)"])
    }

    /// Nothing from the dispatcher past the timeout (it heartbeats several times a second): say so, drop
    /// the connections and make new ones, then ask for whatever was missed.
    func reconnect() throws {
        logger.warning("no word from the dispatcher; reconnecting", metadata: [
            "store": "\(configuration.name)", "silent_ms": "\(MonotonicClock.elapsed(since: lastHeardFromDispatcher, now: MonotonicClock.nowMilliseconds()))",
        ])
        reconnects += 1
        actions.close()
        replay.close()
        actions = try SocketDefaults.subscriber(context)
        try actions.setOption(.receiveHighWaterMark, configuration.highWaterMark)
        try actions.subscribe()
        try actions.connectSecurely(configuration.dispatcherActions)
        replay = try SocketDefaults.dealer(context)
        try replay.connectSecurely(configuration.dispatcherReplay)
        lastReconnect = MonotonicClock.nowMilliseconds()
        requestReplay()
    }

    // MARK: Actions in order

    func drainActions() throws {
        // Drain what is queued (bounded), then publish once: bursts coalesce into one state update.
        for _ in 0..<10_000 {
            guard let frames = try actions.receive(dontWait: true) else { return }
            guard let message = try? Message(frames: frames) else {
                logger.warning("dropped a malformed message from the dispatcher", metadata: ["store": "\(configuration.name)"])
                continue
            }
            lastHeardFromDispatcher = MonotonicClock.nowMilliseconds()
            switch message.kind {
            case .action:
                if liveAfter == nil { liveAfter = message.header.seq - 1 }
                dispatcherHead = max(dispatcherHead, message.header.seq)
                receiveLive(message)
            case .heartbeat:
                if liveAfter == nil { liveAfter = message.header.seq }
                dispatcherHead = max(dispatcherHead, message.header.seq)
                if dispatcherHead > version && replayRequestedAt == nil {
                    // The dispatcher has sequenced actions this store never saw: repair before going on.
                    logger.notice("heartbeat shows missed actions", metadata: [
                        "store": "\(configuration.name)", "version": "\(version)", "head": "\(dispatcherHead)",
                    ])
                    if caughtUp { gapsRepaired += 1 }
                    requestReplay()
                }
            default:
                continue
            }
        }
    }

    func receiveLive(_ message: Message) {
        let seq = message.header.seq
        if seq <= version { return }
        if seq == version + 1 && replayRequestedAt == nil {
            apply(message)
            applyPending()
            return
        }
        if pending.count < StoreLoop.maxPending { pending[seq] = message }
        if replayRequestedAt == nil {
            logger.notice("gap in the action stream", metadata: [
                "store": "\(configuration.name)", "version": "\(version)", "received": "\(seq)",
            ])
            gapsRepaired += 1
            requestReplay()
        }
    }

    func applyPending() {
        while let next = pending.removeValue(forKey: version + 1) { apply(next) }
        if !pending.isEmpty, let lowest = pending.keys.min(), lowest <= version {
            pending = pending.filter { $0.key > version }
        }
    }

    /// Applies one action; the version advances even when this app does not handle the action, since
    /// every store sees the one global sequence.
    func apply(_ message: Message) {
        precondition(message.header.seq == version + 1, "actions apply strictly in order")
        version = message.header.seq
        let live = liveAfter.map { message.header.seq > $0 } ?? false
        do {
            // Effects run once, for live actions only: never again for history recovered by replay.
            let handled = try runtime.apply(
                app: message.topicString, actionType: message.header.actionType, payload: message.payload,
                runEffects: live && configuration.runsEffects)
            if handled { applied += 1 }
        } catch {
            // Refused in this state (or, if undecodable, the nodes run different builds): the state is
            // unchanged, and the reason is published for views and `zflux tail`.
            rejected += 1
            logger.notice("action rejected; state unchanged", metadata: [
                "store": "\(configuration.name)", "seq": "\(version)", "reason": "\(error.reason)",
            ])
            send(statePublisher, Message(topic: configuration.name, header: Header(
                kind: .rejected, seq: version, clientID: message.header.clientID, clientSeq: message.header.clientSeq,
                timestamp: WallClock.nowNanoseconds(), actionType: message.header.actionType), payload: Array(error.reason.utf8)).frames)
        }
    }

    // MARK: Replay

    func requestReplay() {
        replayRequestedAt = MonotonicClock.nowMilliseconds()
        let request = Message(header: Header(kind: .replayRequest, seq: version + 1))
        do {
            try replay.send(request.frames, dontWait: true)
        } catch {
            logger.warning("replay request not sent", metadata: ["error": "\(error)"])
        }
    }

    func drainReplay() throws {
        for _ in 0..<1024 {
            guard let frames = try replay.receive(dontWait: true) else { return }
            guard let message = try? Message(frames: frames) else { continue }
            switch message.kind {
            case .replayBatch:
                guard let batch = try? ReplayBatch.decode(message.payload) else {
                    logger.warning("dropped a malformed replay batch", metadata: ["store": "\(configuration.name)"])
                    continue
                }
                for action in batch where action.header.seq == version + 1 {
                    apply(action)
                    replayed += 1
                }
                replayRequestedAt = MonotonicClock.nowMilliseconds()
            case .replayEnd:
                if message.header.seq < version && !caughtUp {
                    // This store's snapshot is ahead of the dispatcher's whole history: it belongs to another
                    // history (a journal wiped or replaced). Trusting it would skip real actions.
                    logger.error("snapshot is ahead of the dispatcher; discarding it and replaying", metadata: [
                        "store": "\(configuration.name)", "snapshot": "\(version)", "dispatcher": "\(message.header.seq)",
                    ])
                    runtime = StoreLoop.makeRuntime(configuration.app, control)
                    version = 0
                    lastPublishedVersion = 0
                    snapshotVersion = 0
                    fullState = nil
                    changesSince = 0
                    pending.removeAll()
                    dispatcherHead = message.header.seq
                    requestReplay()
                    continue
                }
                dispatcherHead = max(dispatcherHead, message.header.seq)
                replayRequestedAt = nil
                applyPending()
                if version < dispatcherHead {
                    requestReplay()
                } else if !caughtUp {
                    caughtUp = true
                    publishStateIfChanged()
                    for peer in waitingViews { answerSnapshot(peer) }
                    waitingViews.removeAll()
                }
            default:
                continue
            }
        }
    }

    // MARK: Publishing

    /// Publishes what changed since the last update: the changes alone when the state records them
    /// (`IncrementalState`), else the whole state. `ref` names the version the update applies to.
    func publishStateIfChanged() {
        guard version != lastPublishedVersion else { return }
        var flags: Header.Flags = []
        let payload: [UInt8]
        do {
            if changesSince == lastPublishedVersion, let changes = try runtime.takeChanges() {
                payload = changes
            } else {
                payload = try runtime.encodedState()
                runtime.forgetChanges()
                flags = .fullState
                fullState = (version, payload)
            }
        } catch {
            logger.error("state cannot be encoded", metadata: ["store": "\(configuration.name)", "error": "\(error)"])
            return
        }
        changesSince = version
        let update = Message(topic: configuration.name, header: Header(
            kind: .state, flags: flags, seq: version, ref: lastPublishedVersion,
            timestamp: WallClock.nowNanoseconds()), payload: payload)
        lastPublishedVersion = version
        send(statePublisher, update.frames)
    }

    func publishHeartbeat() {
        let flags: Header.Flags = (replayRequestedAt != nil || version < dispatcherHead) ? .catchingUp : []
        send(statePublisher, Message(topic: configuration.name, header: Header(
            kind: .heartbeat, flags: flags, seq: lastPublishedVersion, ref: dispatcherHead,
            timestamp: WallClock.nowNanoseconds())).frames)
    }

    func send(_ socket: Socket, _ frames: [[UInt8]]) {
        do {
            try socket.send(frames, dontWait: true)
        } catch {
            logger.debug("send failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Snapshots and status

    func drainSnapshotRequests() throws {
        for _ in 0..<1024 {
            guard let frames = try snapshots.receive(dontWait: true) else { return }
            guard let peer = frames.first, !peer.isEmpty,
                  let request = try? Message.split(routed: frames).message else { continue }
            switch request.kind {
            case .snapshotRequest:
                // Views are served once the store has recovered, so nobody sees a state it is about to leave.
                if caughtUp { answerSnapshot(peer) } else if waitingViews.count < 10_000 { waitingViews.append(peer) }
            case .statusRequest:
                send(snapshots, Message(header: Header(kind: .status, seq: version), payload: statusDocument()).routedFrames(to: peer))
            default:
                continue
            }
        }
    }

    /// Answers with the state as last published, so the version matches the update stream.
    func answerSnapshot(_ peer: [UInt8]) {
        publishStateIfChanged()
        if fullState?.version != lastPublishedVersion {
            do {
                fullState = (lastPublishedVersion, try runtime.encodedState())
            } catch {
                logger.error("state cannot be encoded", metadata: ["store": "\(configuration.name)", "error": "\(error)"])
                return
            }
        }
        let reply = Message(topic: configuration.name, header: Header(
            kind: .snapshot, flags: .fullState, seq: lastPublishedVersion,
            timestamp: WallClock.nowNanoseconds()), payload: fullState?.bytes ?? [])
        send(snapshots, reply.routedFrames(to: peer))
    }

    func statusDocument() -> [UInt8] {
        let now = MonotonicClock.nowMilliseconds()
        let connected = MonotonicClock.elapsed(since: lastHeardFromDispatcher, now: now) <= UInt64(configuration.dispatcherTimeoutMilliseconds)
        let status: [String: Any] = [
            "role": "store", "name": configuration.name, "app": configuration.app.name, "pid": Int(getpid()),
            "version": Int(version), "dispatcher_head": Int(dispatcherHead), "applied": Int(applied), "rejected": Int(rejected),
            "replayed": Int(replayed), "gaps_repaired": Int(gapsRepaired), "pending": pending.count,
            "dispatcher": connected ? "connected" : "silent", "reconnects": Int(reconnects), "uptime_ms": Int(MonotonicClock.elapsed(since: startedAt, now: now)),
            "subscribers": subscribers.connected, "subscribed": liveAfter != nil, "caught_up": caughtUp, "snapshot_version": Int(snapshotVersion), "effects_running": runtime.effectsInFlight, "effects_unanswered": unansweredEffects.count,
        ]
        return Array((try? JSONSerialization.data(withJSONObject: status, options: [.sortedKeys])) ?? Data())
    }

    // MARK: Effects

    func handleCommands() throws {
        for command in control.takeAll() {
            switch command {
            case .effectAction(let app, let type, let payload):
                // Bounded: effects that send faster than the intake answers lose the excess, loudly.
                guard unansweredEffects.count < StoreLoop.maxUnansweredEffects else {
                    logger.error("an effect's action was dropped: too many unanswered", metadata: [
                        "store": "\(configuration.name)", "type": "\(type)", "unanswered": "\(unansweredEffects.count)",
                    ])
                    continue
                }
                effectClientSeq += 1
                let message = Message(topic: app, header: Header(
                    kind: .dispatch, clientID: effectClientID, clientSeq: effectClientSeq,
                    timestamp: WallClock.nowNanoseconds(), actionType: type), payload: payload)
                unansweredEffects[effectClientSeq] = (message.frames, MonotonicClock.nowMilliseconds())
                send(effects, message.frames)
            }
        }
    }

    func drainEffectReplies() {
        while let frames = try? effects.receive(dontWait: true) {
            guard let reply = try? Message(frames: frames), reply.header.clientID == effectClientID else { continue }
            unansweredEffects[reply.header.clientSeq] = nil
            if reply.kind == .nack {
                logger.warning("an effect's action was refused", metadata: [
                    "store": "\(configuration.name)", "reason": "\(String(decoding: reply.payload, as: UTF8.self))",
                ])
            }
        }
    }

    /// Sends again what the intake has not answered; the dispatcher deduplicates by client seq.
    func retryUnansweredEffects() {
        guard !unansweredEffects.isEmpty else { return }
        let now = MonotonicClock.nowMilliseconds()
        for (clientSeq, entry) in unansweredEffects where MonotonicClock.elapsed(since: entry.sentAt, now: now) >= UInt64(configuration.effectRetryMilliseconds) {
            unansweredEffects[clientSeq]?.sentAt = now
            send(effects, entry.frames)
        }
    }
}
