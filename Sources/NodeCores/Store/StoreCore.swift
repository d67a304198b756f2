@_spi(Simulation) import FluxCore
import Logging

/// The store's rules as a deterministic state machine: no sockets, threads, clocks or files.
///
/// Events come in as method calls (a message on one of the store's endpoints, an effect's action, a
/// turn of the loop with the time), and what the store decides to do goes out as ``Command``s, which
/// the caller takes with ``takeCommands()`` and carries out in order. The ZeroMQ loop (`StoreLoop`) and
/// a simulator drive the same code. The core starts no work of its own either: the effects of a live
/// action go out as a command too, for the shell to start.
///
/// The rules it keeps (docs/ARCHITECTURE.md, The rules):
/// - actions apply strictly in sequence order; a gap, or a heartbeat announcing a seq never received,
///   is repaired from the dispatcher's replay before anything newer applies; seq ≤ version is ignored;
/// - effects run for live actions only (sequenced while subscribed), never for replayed history;
/// - views are answered once the store has caught up, with the state as last published;
/// - an effect's action is sent to the intake until answered (same client seq: deduplicated there);
/// - a snapshot ahead of the dispatcher's whole history belongs to another history and is dropped.
///
/// It coordinates value types that each keep one concern: `HistoryJudge` (which history the state
/// follows), `PendingActions` (live actions held across a gap), `Selections` (views following a part
/// of the state), `EffectOutbox` (effects' actions until the intake answers) and `SnapshotKeeper`
/// (when to write a snapshot, views waiting for one). Catching up is in `StoreCore+Replay.swift`,
/// what views are told in `StoreCore+Publishing.swift`.
public final class StoreCore: NodeCore {
    /// What the store asks its shell to do, in order.
    package enum Command {
        /// Send on the replay DEALER.
        case requestReplay(Message)
        /// Publish on the state PUB (state updates, rejections, heartbeats).
        case publish(Message)
        /// Reply to one peer of the snapshot ROUTER.
        case reply(peer: [UInt8], Message)
        /// Reply to one peer of the snapshot ROUTER with ``status(now:subscribers:pid:)``.
        case replyStatus(peer: [UInt8])
        /// Send an effect's action to the dispatcher's intake.
        case dispatch(Message)
        /// Start the effects of a live action (on the shell's `EffectTasks`); the actions they send
        /// come back through ``effectSent(app:type:payload:now:)``.
        case runEffects(PendingEffects)
        /// Cancel every effect still running: the state they were started from was dropped.
        case cancelEffects
        /// Drop the dispatcher-facing connections (subscription, replay) and make new ones.
        case reconnect
        /// Write this snapshot to disk; `history` is the one its last action was sequenced in (failures are the shell's to log).
        case writeSnapshot(version: UInt64, history: UInt64, snapshot: [UInt8])
    }

    public static let maxPending = 200_000
    /// Payload bytes of live actions held while a gap is repaired; past either bound the newest are
    /// dropped, and replay brings them later.
    public static let maxPendingBytes = 256 << 20
    public static let maxUnansweredEffects = 100_000
    public static let maxWaitingViews = 10_000
    static let maxSelections = 256

    /// What it decides by: its name and app, timers, effects, snapshot cadence.
    public let rules: StoreRules
    let logger: Logger
    /// Rules broken on purpose, so the simulator can show that its checker catches them. Never set
    /// outside the simulator.
    @_spi(Simulation) public var brokenRules: Set<Canary> = []
    let makeRuntime: () -> any AppRuntime
    private(set) var runtime: any AppRuntime
    // The counters and records every applied action touches are not checked for overlapping access
    // at run time (`@exclusivity(unchecked)`): the core runs on one thread and never lends them out
    // while it changes them, and the checks were 7% of a replaying store's time.
    @exclusivity(unchecked) var commands: [Command] = []

    /// Which dispatcher history the state follows.
    @exclusivity(unchecked) var histories = HistoryJudge()
    /// Live actions that arrived ahead of a gap, waiting for the gap to be repaired.
    var pending = PendingActions(maxCount: StoreCore.maxPending, maxBytes: StoreCore.maxPendingBytes)
    /// Views following a part of the state, the state read for them, and the refusals past the cap.
    var selections = Selections(limit: StoreCore.maxSelections)
    /// Effects' actions the intake has not answered yet.
    var outbox: EffectOutbox
    /// Whether the effects' actions of one turn go as one DISPATCH-BATCH; off once the dispatcher has
    /// refused one (``receivedIntakeReply(_:)``).
    private var batchesEffects = true
    /// When to write a snapshot, and the views waiting for one.
    var snapshots: SnapshotKeeper

    /// The seq of the last action applied; the state's version.
    @exclusivity(unchecked) public private(set) var version: UInt64 = 0
    /// The newest seq the dispatcher has announced (actions or heartbeats).
    public internal(set) var dispatcherHead: UInt64 = 0
    /// Payload bytes of the live actions held across a gap (bounded by `maxPendingBytes` as well as by count).
    public var pendingBytes: Int { pending.bytes }
    /// When the outstanding replay request was sent (nil: none outstanding).
    public internal(set) var replayRequestedAtMs: UInt64?
    /// The dispatcher's newest seq when this store first heard it over its subscription. Actions after
    /// it were sequenced while the store was subscribed: they are live, and run effects however they
    /// arrive (directly, or repaired by replay). Actions up to it are history this store recovers, and
    /// their effects are not run again (rule 3 of docs/ARCHITECTURE.md).
    public internal(set) var liveAfter: UInt64?
    public internal(set) var lastPublishedVersion: UInt64 = 0
    var lastHeardFromDispatcherMs: UInt64
    private var lastReconnectMs: UInt64 = 0
    /// When the last turn ran: a gap between turns longer than the timeout means this store was not
    /// running (SIGSTOP, a paused VM, a stalled disk), not that the dispatcher went silent.
    private var lastTickMs: UInt64
    private var nextHeartbeatMs: UInt64 = 0
    /// The client id the effects' actions are dispatched under.
    public var effectClientID: UInt64 { outbox.clientID }
    /// The version from which the runtime's record of changes runs. A changes-only update is published
    /// only when that is the last published version, so the update applies exactly to what views hold.
    var changesSince: UInt64 = 0
    /// An action of this app (or one it reads) was applied since the last update: the state may differ
    /// from what was published. A store whose state did not change publishes nothing; its heartbeats
    /// carry how far it has applied.
    @exclusivity(unchecked) var mayHaveChanged = false
    /// Something applied may not be published yet (the next turn publishes it).
    public var hasUnpublishedChanges: Bool { mayHaveChanged && version != lastPublishedVersion }
    /// The version of the last snapshot written to (or read from) disk.
    public var snapshotVersion: UInt64 { snapshots.writtenVersion }
    /// What stops the store from catching up, when something does (shown in its status).
    public internal(set) var problem: String?
    /// The history the state comes from (nil until the store has heard one, or read it from its snapshot).
    public var history: HistoryID? { histories.history }
    /// The dispatcher serves another cluster's journal: nothing of it is applied.
    public var refusedForeignHistory: Bool { histories.refusedForeign }
    /// True once the store has caught up with the dispatcher after starting; views are answered then.
    public internal(set) var caughtUp = false
    let startedAtMs: UInt64

    @exclusivity(unchecked) public private(set) var applied: UInt64 = 0
    @exclusivity(unchecked) public private(set) var rejected: UInt64 = 0
    @exclusivity(unchecked) public internal(set) var replayed: UInt64 = 0
    public private(set) var gapsRepaired: UInt64 = 0
    public private(set) var reconnects: UInt64 = 0
    /// Why the snapshot given at start could not be restored (nil: none was given, or it was restored):
    /// the state starts empty and is rebuilt from the journal, and the shell keeps the file aside.
    package private(set) var snapshotRefused: String?

    /// `snapshot` is what the disk held (nil: nothing usable); `makeRuntime` makes a fresh state machine
    /// of the app, whose effects' actions reach ``effectSent(app:type:payload:now:)``.
    public init(
        rules: StoreRules, snapshot: StoreSnapshot?, effectClientID: UInt64,
        now: NodeTime, logger: Logger, makeRuntime: @escaping () -> any AppRuntime
    ) {
        self.rules = rules
        self.logger = logger
        self.makeRuntime = makeRuntime
        self.runtime = makeRuntime()
        self.outbox = EffectOutbox(
            clientID: effectClientID, retryMilliseconds: rules.effectRetryMilliseconds, limit: StoreCore.maxUnansweredEffects,
            token: rules.effectToken ?? 0)
        self.snapshots = SnapshotKeeper(
            writes: rules.writesSnapshots, everyActions: rules.snapshotEveryActions, maxWaiting: StoreCore.maxWaitingViews)
        self.lastHeardFromDispatcherMs = now.milliseconds
        self.lastTickMs = now.milliseconds
        self.startedAtMs = now.milliseconds
        if let snapshot { restore(snapshot) }
        runtime.forgetChanges()
        changesSince = version
    }

    /// Where a broken invariant is reported instead of stopping the process (``invariant(_:_:report:)``):
    /// set by the simulator alone.
    @_spi(Simulation) public var onBrokenInvariant: ((String) -> Void)?

    /// What holds between any two events, checked each time the shell takes the commands (a few
    /// comparisons): a broken one stops the store at the step that broke it (``invariant(_:_:report:)``).
    private func checkInvariants() {
        // A store publishes no version it has not reached.
        invariant(lastPublishedVersion <= version, "published \(lastPublishedVersion) past version \(version)", report: onBrokenInvariant)
        invariant(
            pending.count <= StoreCore.maxPending && pending.bytes <= StoreCore.maxPendingBytes, "the actions held across a gap are bounded",
            report: onBrokenInvariant)
        invariant(outbox.count <= StoreCore.maxUnansweredEffects, "the effects' actions awaiting an answer are bounded", report: onBrokenInvariant)
        // The runtime's record of changes, and the snapshots written, are of versions the state reached.
        invariant(changesSince <= version, "changes recorded since \(changesSince), past version \(version)", report: onBrokenInvariant)
        invariant(snapshotVersion <= version, "a snapshot at \(snapshotVersion), past version \(version)", report: onBrokenInvariant)
    }

    /// Everything decided since the last call, in order. The effects' DISPATCHes among them go as
    /// DISPATCH-BATCHes (``DispatchBatch/messages(for:)``), in their order, where the first of them was:
    /// one message to the intake per turn however many effects answered, and one ACK-BATCH back.
    package func takeCommands() -> [Command] {
        checkInvariants()
        defer { commands.removeAll(keepingCapacity: true) }
        guard batchesEffects else { return commands }
        var dispatches = 0
        for command in commands { if case .dispatch = command { dispatches += 1 } }
        guard dispatches > 1 else { return commands }
        var out: [Command] = []
        out.reserveCapacity(commands.count - dispatches + 1)
        var pending: [Message] = []
        var place: Int? = nil
        for command in commands {
            guard case .dispatch(let message) = command else {
                out.append(command)
                continue
            }
            if place == nil {
                place = out.count
                out.append(command)  // its place, filled below
            }
            pending.append(message)
        }
        let batches = DispatchBatch.messages(for: pending).map { Command.dispatch($0) }
        if let place { out.replaceSubrange(place...place, with: batches) }
        assert(out.count == commands.count - dispatches + batches.count, "the batches take the DISPATCHes' place, and nothing else moves")
        return out
    }

    /// The latest the shell may wait before calling ``tick(now:)`` again.
    public func nextDeadlineMs(now: NodeTime) -> UInt64 { nextHeartbeatMs }

    private func restore(_ snapshot: StoreSnapshot) {
        do {
            guard snapshot.app == rules.app.name else {
                throw SnapshotError("the snapshot holds app '\(snapshot.app)', not '\(rules.app.name)'")
            }
            try runtime.loadSnapshot(snapshot.state)
            version = snapshot.version
            histories.restored(version: version, history: snapshot.history)
            lastPublishedVersion = version
            snapshots.wrote(version)
            logger.info("resumed from snapshot", metadata: ["store": "\(rules.name)", "version": "\(version)"])
        } catch {
            logger.warning("snapshot not usable; replaying everything", metadata: ["store": "\(rules.name)", "reason": "\(error)"])
            snapshotRefused = "\(error)"
            resetToEmpty()
        }
    }

    /// Forgets everything applied: a fresh state at version 0, to be rebuilt from the dispatcher.
    func resetToEmpty() {
        selections.forgetState()
        // What was applied is history when it is applied again: its effects ran (or were lost) already.
        liveAfter = max(liveAfter ?? 0, version)
        histories.reset()
        commands.append(.cancelEffects)
        runtime = makeRuntime()
        version = 0
        lastPublishedVersion = 0
        snapshots.reset()
        changesSince = 0
        // Views hold a state this store no longer has: the rebuilt one is published, changed or not.
        mayHaveChanged = true
        pending.removeAll()
        // The snapshot on disk holds the state just dropped: replace it now, or a crash before the next
        // one would bring that state back.
        if rules.writesSnapshots, let empty = try? runtime.encodedSnapshot() {
            commands.append(.writeSnapshot(version: 0, history: 0, snapshot: empty))
        }
        assert(version == 0 && pending.isEmpty && histories.verifying == nil, "an empty state holds and checks nothing")
    }

    // MARK: Events

    /// The node is up: ask for everything after what the snapshot held.
    public func start(now: NodeTime) { requestReplay(now: now) }

    /// A message from the dispatcher's action stream (ACTION, ACTION-BATCH or HEARTBEAT).
    public func receivedFromDispatcher(_ message: Message, now: NodeTime) {
        lastHeardFromDispatcherMs = now.milliseconds
        guard !refusedForeignHistory else { return }
        switch message.kind {
        case .actionBatch:
            // Its actions, one by one, exactly as if each had come as an ACTION, read from the batch's
            // bytes (a message is made only for one that must wait). A batch that does not decode is a
            // gap like any lost message: the next heartbeat shows it, and a replay fills it.
            let entries: [ReplayBatch.Entry]
            do {
                entries = try ActionBatch.entries(of: message)
            } catch {
                logger.warning("dropped a malformed ACTION-BATCH", metadata: ["store": "\(rules.name)", "error": "\(error)"])
                return
            }
            let app = message.topicString
            let bytes = message.payload
            for entry in entries {
                receivedAction(entry.header, now: now) {
                    Message(topic: message.topic, header: entry.header, payload: Array(bytes[entry.payload]))
                } apply: {
                    apply(entry.header, app: app, payload: Array(bytes[entry.payload]), now: now)
                }
            }
        case .action:
            receivedAction(message.header, now: now) {
                message
            } apply: {
                apply(message, now: now)
            }
        case .heartbeat:
            // A dispatcher's heartbeat carries its history and, in `ref`, the first seq of its epoch.
            switch judge(message.header.history, since: message.header.ref, head: message.header.seq, now: now) {
            case .follow: break
            case .ignore, .wait: return
            }
            if liveAfter == nil { liveAfter = message.header.seq }
            dispatcherHead = max(dispatcherHead, message.header.seq)
            if dispatcherHead > version && replayRequestedAtMs == nil {
                // The dispatcher has sequenced actions this store never saw: repair before going on.
                logger.notice(
                    "heartbeat shows missed actions",
                    metadata: [
                        "store": "\(rules.name)", "version": "\(version)", "head": "\(dispatcherHead)",
                    ])
                if caughtUp { gapsRepaired += 1 }
                requestReplay(now: now)
            }
        default:
            return
        }
    }

    /// One live ACTION, by its header: `apply` applies it at once, `message` makes it to be held.
    private func receivedAction(_ header: Header, now: NodeTime, message: () -> Message, apply: () -> Void) {
        // Seqs start at 1; a 0 is no action the dispatcher sequenced. An earlier action of the same
        // batch may have shown this history to be another cluster's.
        guard header.seq > 0, !refusedForeignHistory else { return }
        switch judge(header.history, since: nil, head: nil, now: now) {
        case .follow: break
        case .ignore: return
        case .wait:
            // A new epoch this store has not settled yet: the next heartbeat says where it starts.
            pending.hold(message())
            return
        }
        if liveAfter == nil { liveAfter = header.seq - 1 }
        dispatcherHead = max(dispatcherHead, header.seq)
        let seq = header.seq
        if seq <= version { return }
        if seq == version + 1 && replayRequestedAtMs == nil {
            apply()
            applyPending(now: now)
            assert(version >= seq, "an action in order is applied")
            return
        }
        if brokenRules.contains(.gapRepair) {
            version = seq - 1
            apply()
            return
        }
        pending.hold(message())
        if replayRequestedAtMs == nil {
            logger.notice(
                "gap in the action stream",
                metadata: [
                    "store": "\(rules.name)", "version": "\(version)", "received": "\(seq)",
                ])
            gapsRepaired += 1
            requestReplay(now: now)
        }
    }

    func applyPending(now: NodeTime) {
        while let next = pending.take(version + 1) { apply(next, now: now) }
        pending.drop(through: version)
        assert(!pending.holds(version + 1), "nothing held could apply now")
    }

    /// Applies one action; the version advances even when this app does not handle the action, since
    /// every store sees the one global sequence.
    func apply(_ message: Message, now: NodeTime) {
        apply(message.header, app: message.topicString, payload: message.payload, now: now)
    }

    /// Applies one action given by its parts, as a replay batch holds them: its header, its app (the
    /// topic) and its payload.
    func apply(_ header: Header, app: String, payload: [UInt8], now: NodeTime) {
        precondition(header.seq == version + 1, "actions apply strictly in order")
        version = header.seq
        histories.applied(history: header.history)
        if header.flags.contains(.quarantined) {
            skipQuarantined(header, app: app, now: now)
            return
        }
        logger.trace(
            "applied",
            metadata: ["store": "\(rules.name)", "seq": "\(version)", "history": "\(HistoryID(rawValue: header.history))"])
        let live = brokenRules.contains(.effectsOnlyLive) || (liveAfter.map { header.seq > $0 } ?? false)
        do {
            guard
                let effects = try runtime.reduce(
                    app: app, actionType: header.actionType, payload: payload,
                    stamp: Stamp(header))
            else { return }
            applied += 1
            mayHaveChanged = true
            // Effects run once, for live actions only: never again for history recovered by replay.
            // The shell starts them; the core only says which.
            if live && rules.runsEffects && !effects.isEmpty { commands.append(.runEffects(effects)) }
        } catch {
            // Refused in this state (or, if undecodable, the nodes run different builds): the state is
            // unchanged, and the reason is published for views and `zflux tail`.
            rejected += 1
            logger.notice(
                "action rejected; state unchanged",
                metadata: [
                    "store": "\(rules.name)", "seq": "\(version)", "reason": "\(error.reason)",
                ])
            publishRejection(of: header, reason: error.reason, now: now)
        }
    }

    /// Says to views and `zflux tail` that the action of `header` left the state unchanged, and why.
    /// `ref` is the version of the state current through the refused action: the last one published,
    /// when nothing applied since has changed it (a view holding that version is then current through
    /// `seq`, at once); ``StoreCore/rejectedAfterUnpublishedChanges`` when an earlier action of this
    /// burst changed the state and its update is still to come (the update, at `seq` or later, says so).
    /// `flags`: ``Header/Flags/quarantined`` when the action is skipped as quarantined, not refused.
    private func publishRejection(of header: Header, reason: String, flags: Header.Flags = [], now: NodeTime) {
        precondition(header.seq == version, "a rejection is published at the version of the action refused")
        commands.append(
            .publish(
                Message(
                    topic: rules.name,
                    header: Header(
                        kind: .rejected, flags: flags, seq: version,
                        ref: mayHaveChanged ? StoreCore.rejectedAfterUnpublishedChanges : lastPublishedVersion,
                        clientID: header.clientID, clientSeq: header.clientSeq, timestamp: now.wallNanoseconds,
                        actionType: header.actionType), payload: Array(reason.utf8))))
    }

    /// REJECTED's `ref` when the state has changes not yet published: no view holds this version.
    package static let rejectedAfterUnpublishedChanges = UInt64.max

    /// A request on the snapshot ROUTER from `peer` (SNAPSHOT-REQUEST or STATUS-REQUEST).
    public func receivedRequest(_ request: Message, from peer: [UInt8], now: NodeTime) {
        switch request.kind {
        case .snapshotRequest:
            // Views are served once the store has recovered, so nobody sees a state it is about to leave.
            if let path = StatePath.fromTopic(request.topicString, store: rules.name) {
                // A view of a selection asks on its topic; one that asks before recovery asks again.
                if caughtUp { answerSelection(path, to: peer, now: now) }
            } else if caughtUp {
                answerSnapshot(peer, now: now)
            } else {
                snapshots.wait(peer)
            }
        case .statusRequest:
            commands.append(.replyStatus(peer: peer))
        default:
            return
        }
    }

    /// An effect's follow-up action, to go through the dispatcher's intake like any other.
    public func effectSent(app: String, type: String, payload: [UInt8], now: NodeTime) {
        // Bounded: effects that send faster than the intake answers lose the excess, loudly.
        guard let message = outbox.send(app: app, type: type, payload: payload, now: now) else {
            logger.error(
                "an effect's action was dropped: too many unanswered",
                metadata: [
                    "store": "\(rules.name)", "type": "\(type)", "unanswered": "\(outbox.count)",
                ])
            return
        }
        commands.append(.dispatch(message))
    }

    /// The intake's answer (ACK or NACK) to an effect's action.
    public func receivedIntakeReply(_ reply: Message) {
        // A NACK for no client is a dispatcher that could not read what was sent: one older than
        // DISPATCH-BATCH (during a rolling upgrade). From then on each action goes alone.
        if reply.kind == .nack, reply.header.clientID == 0, batchesEffects {
            batchesEffects = false
            logger.warning(
                "the dispatcher refused a batch of effects' actions; sending them one at a time from now on",
                metadata: ["store": "\(rules.name)", "reason": "\(String(decoding: reply.payload, as: UTF8.self))"])
            return
        }
        // A DISPATCH-BATCH's ACKs come together, as an ACK-BATCH.
        guard let replies = try? AckBatch.unpack(reply) else { return }
        for reply in replies {
            // Refused for now, it is kept, and waits longer before each new try.
            switch outbox.answered(reply) {
            case .refused(let reason):
                logger.error(
                    "an effect's action was refused for good",
                    metadata: ["store": "\(rules.name)", "client_seq": "\(reply.header.clientSeq)", "reason": "\(reason)"])
            case .held(let reason):
                logger.warning(
                    "the dispatcher does not know an effect's action yet (is it older than this store?); kept, and sent again",
                    metadata: [
                        "store": "\(rules.name)", "client_seq": "\(reply.header.clientSeq)", "held": "\(outbox.held)", "reason": "\(reason)",
                    ])
            case .accepted, .retryLater, .notOurs: break
            }
        }
    }

    /// A turn of the loop: after every drained burst, and at ``nextDeadlineMs(now:)`` at the latest. Publishes
    /// what the burst changed (one update per burst), and runs the timers.
    public func tick(now: NodeTime) {
        let timeout = UInt64(rules.dispatcherTimeoutMilliseconds)
        if now.elapsed(since: lastTickMs) > timeout {
            // Silence counts only while the store was awake to hear: what arrived meanwhile is still
            // queued, and reconnecting now would throw it away. Give the dispatcher a fresh window.
            logger.notice(
                "the store itself was not running; not counting that as the dispatcher's silence",
                metadata: [
                    "store": "\(rules.name)", "paused_ms": "\(now.elapsed(since: lastTickMs))",
                ])
            lastHeardFromDispatcherMs = now.milliseconds
        }
        lastTickMs = now.milliseconds
        // Sends again what the intake has not answered; the dispatcher deduplicates by client seq.
        for message in outbox.due(now: now) { commands.append(.dispatch(message)) }
        publishStateIfChanged(now: now)
        writeSnapshotIfDue(force: false)
        if now.milliseconds >= nextHeartbeatMs {
            publishHeartbeat(now: now)
            nextHeartbeatMs = now.milliseconds + UInt64(rules.heartbeatMilliseconds)
        }
        if now.elapsed(since: lastHeardFromDispatcherMs) > timeout && now.elapsed(since: lastReconnectMs) > timeout {
            // Nothing from the dispatcher past the timeout (it heartbeats several times a second): drop
            // the connections and make new ones, then ask for whatever was missed.
            logger.warning(
                "no word from the dispatcher; reconnecting",
                metadata: [
                    "store": "\(rules.name)", "silent_ms": "\(now.elapsed(since: lastHeardFromDispatcherMs))",
                ])
            reconnects += 1
            lastReconnectMs = now.milliseconds
            commands.append(.reconnect)
            requestReplay(now: now)
        }
        if !refusedForeignHistory, let asked = replayRequestedAtMs, now.elapsed(since: asked) > UInt64(rules.replayTimeoutMilliseconds) {
            logger.notice("replay unanswered; asking again", metadata: ["store": "\(rules.name)", "from": "\(version + 1)"])
            requestReplay(now: now)
        }
    }

    /// The node is stopping: keep what was applied.
    public func stop() { writeSnapshotIfDue(force: true) }

    private func writeSnapshotIfDue(force: Bool) {
        guard snapshots.isDue(version: version, force: force) else { return }
        do {
            commands.append(.writeSnapshot(version: version, history: histories.lastAppliedHistory, snapshot: try runtime.encodedSnapshot()))
            snapshots.wrote(version)
        } catch {
            logger.error("snapshot not encoded", metadata: ["store": "\(rules.name)", "error": "\(error)"])
        }
    }

    /// A quarantined action (it crashed a reducer, ``MessageKind/quarantineRequest``): every replica
    /// skips it alike, so its version advances and its state does not change. Said to views and
    /// `zflux tail` as a rejection, when it is this store's app's.
    private func skipQuarantined(_ header: Header, app: String, now: NodeTime) {
        // Its own app's, or one it reads: the ones that could have crashed this store.
        guard app == rules.app.name || rules.app.reads.contains(app) else { return }
        if quarantined.count < StoreCore.maxQuarantinedListed {
            quarantined.append(
                Quarantine(
                    seq: header.seq, app: app, actionType: header.actionType,
                    reason: "skipped: quarantined by the dispatcher"))
        }
        rejected += 1
        logger.warning(
            "a quarantined action is skipped; state unchanged",
            metadata: ["store": "\(rules.name)", "seq": "\(version)", "action": "\(header.actionType)"])
        publishRejection(
            of: header, reason: "quarantined: it crashed a store's reducer, and every store skips it (zflux quarantine list)", flags: .quarantined,
            now: now)
    }

    /// The quarantined actions this store skipped since it started, for its status (the first ones).
    public private(set) var quarantined: [Quarantine] = []
    static let maxQuarantinedListed = 64

    /// The state as the runtime holds it now, in wire form (for checks; views get it by snapshot).
    public func encodedState() throws -> [UInt8] { try runtime.encodedState() }
}
