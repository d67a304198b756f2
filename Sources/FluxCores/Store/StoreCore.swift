@_spi(Simulation) import FluxCore
import Logging

/// The store's rules as a deterministic state machine: no sockets, threads, clocks or files.
///
/// Events come in as method calls (a message on one of the store's endpoints, an effect's action, a
/// turn of the loop with the time), and what the store decides to do goes out as ``Command``s, which
/// the caller takes with ``takeCommands()`` and carries out in order. The ZeroMQ loop (`StoreLoop`) and
/// a simulator drive the same code.
///
/// The rules it keeps (DESIGN §3):
/// - actions apply strictly in sequence order; a gap, or a heartbeat announcing a seq never received,
///   is repaired from the dispatcher's replay before anything newer applies; seq ≤ version is ignored;
/// - effects run for live actions only (sequenced while subscribed), never for replayed history;
/// - views are answered once the store has caught up, with the state as last published;
/// - an effect's action is sent to the intake until answered (same client seq: deduplicated there);
/// - a snapshot ahead of the dispatcher's whole history belongs to another history and is dropped.
public final class StoreCore {
    /// What the store asks its shell to do, in order.
    public enum Command {
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
        /// Drop the dispatcher-facing connections (subscription, replay) and make new ones.
        case reconnect
        /// Write this snapshot to disk; `history` is the one its last action was sequenced in (failures are the shell's to log).
        case writeSnapshot(version: UInt64, history: UInt64, snapshot: [UInt8])
    }

    public static let maxPending = 200_000
    /// Payload bytes of live actions held while a gap is repaired; past either bound the newest are
    /// dropped, and replay brings them later.
    public static let maxPendingBytes = 256 << 20

    /// Keeps a live action that cannot be applied yet, within both bounds.
    private func holdPending(_ message: Message) {
        guard pending.count < StoreCore.maxPending, pendingBytes + message.payload.count <= StoreCore.maxPendingBytes,
            pending[message.header.seq] == nil
        else { return }
        pending[message.header.seq] = message
        pendingBytes += message.payload.count
    }

    /// Keeps only the pending actions `keep` accepts, and their byte count with them.
    private func retainPending(where keep: (Message) -> Bool) {
        pending = pending.filter { keep($0.value) }
        pendingBytes = pending.values.reduce(0) { $0 + $1.payload.count }
    }
    public static let maxUnansweredEffects = 100_000
    public static let maxWaitingViews = 10_000

    /// What it decides by: its name and app, timers, effects, snapshot cadence.
    public let rules: StoreRules
    let logger: Logger
    /// Rules broken on purpose, so the simulator can show that its checker catches them. Never set
    /// outside the simulator.
    @_spi(Simulation) public var brokenRules: Set<BrokenRule> = []
    let makeRuntime: () -> any AppRuntime
    private(set) var runtime: any AppRuntime
    private var commands: [Command] = []

    /// The seq of the last action applied; the state's version.
    public private(set) var version: UInt64 = 0
    /// The newest seq the dispatcher has announced (actions or heartbeats).
    public private(set) var dispatcherHead: UInt64 = 0
    /// Live actions that arrived ahead of a gap, waiting for the gap to be repaired.
    private(set) var pending: [UInt64: Message] = [:]
    /// Payload bytes held in `pending` (bounded by `maxPendingBytes` as well as by count).
    public private(set) var pendingBytes = 0
    /// When the outstanding replay request was sent (nil: none outstanding).
    public private(set) var replayRequestedAt: UInt64?
    /// The dispatcher's newest seq when this store first heard it over its subscription. Actions after
    /// it were sequenced while the store was subscribed: they are live, and run effects however they
    /// arrive (directly, or repaired by replay). Actions up to it are history this store recovers, and
    /// their effects are not run again (DESIGN rule 3).
    public private(set) var liveAfter: UInt64?
    public private(set) var lastPublishedVersion: UInt64 = 0
    private var lastHeardFromDispatcher: UInt64
    private var lastReconnect: UInt64 = 0
    /// When the last turn ran: a gap between turns longer than the timeout means this store was not
    /// running (SIGSTOP, a paused VM, a stalled disk), not that the dispatcher went silent.
    private var lastTick: UInt64
    private var nextHeartbeat: UInt64 = 0
    private var effectClientSeq: UInt64 = 0
    public let effectClientID: UInt64
    /// Effect actions sent to the intake and not yet answered, by client seq.
    /// Effects' actions the intake has not accepted yet: sent again after `retryAfter` ms, which doubles
    /// (up to 30 s) each time the intake refuses one for now (rate limited).
    private(set) var unansweredEffects: [UInt64: (message: Message, sentAt: UInt64, retryAfter: UInt64)] = [:]
    /// The whole state in wire form and its version, for snapshot replies: encoded when first asked for
    /// (or when published whole), so a store publishing changes only does not encode its whole state per update.
    private var fullState: (version: UInt64, bytes: [UInt8])?
    /// The version from which the runtime's record of changes runs. A changes-only update is published
    /// only when that is the last published version, so the update applies exactly to what views hold.
    private var changesSince: UInt64 = 0
    /// An action of this app (or one it reads) was applied since the last update: the state may differ
    /// from what was published. A store whose state did not change publishes nothing; its heartbeats
    /// carry how far it has applied.
    private var mayHaveChanged = false
    /// Views following a part of the state (``StatePath``), by topic: the value last published there
    /// and the version it changed at. Added when a view subscribes to the topic, removed when the last
    /// one leaves (the shell reads the publisher's subscriptions).
    private var selections: [String: (path: StatePath, value: JSONValue, version: UInt64)] = [:]
    static let maxSelections = 256
    /// Something applied may not be published yet (the next turn publishes it).
    public var hasUnpublishedChanges: Bool { mayHaveChanged && version != lastPublishedVersion }
    /// The version of the last snapshot written to (or read from) disk.
    public private(set) var snapshotVersion: UInt64 = 0
    /// What stops the store from catching up, when something does (shown in its status).
    public private(set) var problem: String?
    /// The history the state comes from (nil until the store has heard one, or read it from its snapshot).
    public private(set) var history: HistoryID?
    /// The state came from a snapshot that names no history (written before histories existed): only
    /// the dispatcher's head can tell whether it belongs to the journal.
    private var restoredWithoutHistory = false
    /// The history the action at `version` was sequenced in (its ACTION stamp): what the snapshot keeps,
    /// and what the journal's action at that seq must carry for the state to be part of the journal.
    private var lastAppliedHistory: UInt64 = 0
    /// A store resumed from a snapshot, or hearing a newer epoch, checks the journal's action at its
    /// version against the history it applied that action from (log matching): nil once checked.
    private(set) var verifying: (seq: UInt64, history: UInt64)?
    /// The dispatcher serves another cluster's journal: nothing of it is applied.
    public private(set) var refusedForeignHistory = false
    /// True once the store has caught up with the dispatcher after starting; views are answered then.
    public private(set) var caughtUp = false
    /// Snapshot requests that arrived while catching up.
    private var waitingViews: [[UInt8]] = []
    private let startedAt: UInt64

    public private(set) var applied: UInt64 = 0
    public private(set) var rejected: UInt64 = 0
    public private(set) var replayed: UInt64 = 0
    public private(set) var gapsRepaired: UInt64 = 0
    public private(set) var reconnects: UInt64 = 0

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
        self.effectClientID = effectClientID
        self.lastHeardFromDispatcher = now.milliseconds
        self.lastTick = now.milliseconds
        self.startedAt = now.milliseconds
        if let snapshot { restore(snapshot) }
        runtime.forgetChanges()
        changesSince = version
    }

    /// Everything decided since the last call, in order.
    public func takeCommands() -> [Command] {
        defer { commands.removeAll(keepingCapacity: true) }
        return commands
    }

    /// The latest the shell may wait before calling ``tick(now:)`` again.
    public var nextDeadline: UInt64 { nextHeartbeat }

    private func restore(_ snapshot: StoreSnapshot) {
        do {
            guard snapshot.app == rules.app.name else {
                throw SnapshotError("the snapshot holds app '\(snapshot.app)', not '\(rules.app.name)'")
            }
            try runtime.loadSnapshot(snapshot.state)
            version = snapshot.version
            if snapshot.history != 0 {
                history = HistoryID(rawValue: snapshot.history)
                lastAppliedHistory = snapshot.history
                if version > 0 { verifying = (version, snapshot.history) }
            } else {
                restoredWithoutHistory = version > 0
            }
            lastPublishedVersion = version
            snapshotVersion = version
            logger.info("resumed from snapshot", metadata: ["store": "\(rules.name)", "version": "\(version)"])
        } catch {
            logger.warning("snapshot not usable; replaying everything", metadata: ["store": "\(rules.name)", "reason": "\(error)"])
            resetToEmpty()
        }
    }

    /// Forgets everything applied: a fresh state at version 0, to be rebuilt from the dispatcher.
    private func resetToEmpty() {
        // What was applied is history when it is applied again: its effects ran (or were lost) already.
        liveAfter = max(liveAfter ?? 0, version)
        restoredWithoutHistory = false
        verifying = nil
        lastAppliedHistory = 0
        runtime.cancelEffects()
        runtime = makeRuntime()
        version = 0
        lastPublishedVersion = 0
        snapshotVersion = 0
        fullState = nil
        changesSince = 0
        // Views hold a state this store no longer has: the rebuilt one is published, changed or not.
        mayHaveChanged = true
        retainPending { _ in false }
        // The snapshot on disk holds the state just dropped: replace it now, or a crash before the next
        // one would bring that state back.
        if rules.writesSnapshots, let empty = try? runtime.encodedSnapshot() {
            commands.append(.writeSnapshot(version: 0, history: 0, snapshot: empty))
        }
    }

    // MARK: Events

    /// The node is up: ask for everything after what the snapshot held.
    public func start(now: NodeTime) { requestReplay(now: now) }

    /// A message from the dispatcher's action stream (ACTION or HEARTBEAT).
    public func receivedFromDispatcher(_ message: Message, now: NodeTime) {
        lastHeardFromDispatcher = now.milliseconds
        guard !refusedForeignHistory else { return }
        switch message.kind {
        case .action:
            // Seqs start at 1; a 0 is no action the dispatcher sequenced.
            guard message.header.seq > 0 else { return }
            switch judge(message.header.history, since: nil, head: nil, now: now) {
            case .follow: break
            case .ignore: return
            case .wait:
                // A new epoch this store has not settled yet: the next heartbeat says where it starts.
                holdPending(message)
                return
            }
            if liveAfter == nil { liveAfter = message.header.seq - 1 }
            dispatcherHead = max(dispatcherHead, message.header.seq)
            receiveLive(message, now: now)
        case .heartbeat:
            // A dispatcher's heartbeat carries its history and, in `ref`, the first seq of its epoch.
            switch judge(message.header.history, since: message.header.ref, head: message.header.seq, now: now) {
            case .follow: break
            case .ignore, .wait: return
            }
            if liveAfter == nil { liveAfter = message.header.seq }
            dispatcherHead = max(dispatcherHead, message.header.seq)
            if dispatcherHead > version && replayRequestedAt == nil {
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

    private func receiveLive(_ message: Message, now: NodeTime) {
        let seq = message.header.seq
        if seq <= version { return }
        if seq == version + 1 && replayRequestedAt == nil {
            apply(message, now: now)
            applyPending(now: now)
            return
        }
        if brokenRules.contains(.gapRepair) {
            version = seq - 1
            apply(message, now: now)
            return
        }
        holdPending(message)
        if replayRequestedAt == nil {
            logger.notice(
                "gap in the action stream",
                metadata: [
                    "store": "\(rules.name)", "version": "\(version)", "received": "\(seq)",
                ])
            gapsRepaired += 1
            requestReplay(now: now)
        }
    }

    private func applyPending(now: NodeTime) {
        while let next = pending.removeValue(forKey: version + 1) {
            pendingBytes -= next.payload.count
            apply(next, now: now)
        }
        if !pending.isEmpty, let lowest = pending.keys.min(), lowest <= version {
            retainPending { $0.header.seq > version }
        }
    }

    /// Applies one action; the version advances even when this app does not handle the action, since
    /// every store sees the one global sequence.
    private func apply(_ message: Message, now: NodeTime) {
        precondition(message.header.seq == version + 1, "actions apply strictly in order")
        version = message.header.seq
        lastAppliedHistory = message.header.history
        logger.trace(
            "applied", metadata: ["store": "\(rules.name)", "seq": "\(version)", "history": "\(HistoryID(rawValue: lastAppliedHistory))"])
        let live = brokenRules.contains(.effectsOnlyLive) || (liveAfter.map { message.header.seq > $0 } ?? false)
        do {
            // Effects run once, for live actions only: never again for history recovered by replay.
            let handled = try runtime.apply(
                app: message.topicString, actionType: message.header.actionType, payload: message.payload,
                stamp: Stamp(seq: message.header.seq, wallNanoseconds: message.header.timestamp), runEffects: live && rules.runsEffects)
            if handled {
                applied += 1
                mayHaveChanged = true
            }
        } catch {
            // Refused in this state (or, if undecodable, the nodes run different builds): the state is
            // unchanged, and the reason is published for views and `zflux tail`.
            rejected += 1
            logger.notice(
                "action rejected; state unchanged",
                metadata: [
                    "store": "\(rules.name)", "seq": "\(version)", "reason": "\(error.reason)",
                ])
            commands.append(
                .publish(
                    Message(
                        topic: rules.name,
                        header: Header(
                            kind: .rejected, seq: version, clientID: message.header.clientID, clientSeq: message.header.clientSeq,
                            timestamp: now.wallNanoseconds, actionType: message.header.actionType), payload: Array(error.reason.utf8))))
        }
    }

    private func requestReplay(now: NodeTime) {
        replayRequestedAt = now.milliseconds
        // While the snapshot is being checked, from its own version: the journal's action there comes first.
        commands.append(.requestReplay(Message(header: Header(kind: .replayRequest, seq: verifying?.seq ?? version + 1))))
    }

    /// A message from the replay service (REPLAY-BATCH or REPLAY-END).
    public func receivedReplay(_ message: Message, now: NodeTime) {
        guard !refusedForeignHistory else { return }
        // Served from an epoch not settled yet (or a retired one): not used; asked again once settled.
        guard judge(message.header.history, since: nil, head: nil, now: now) == .follow else { return }
        switch message.kind {
        case .replayBatch:
            guard let batch = try? ReplayBatch.decode(message.payload) else {
                logger.warning("dropped a malformed replay batch", metadata: ["store": "\(rules.name)"])
                return
            }
            if let expected = verifying, let found = batch.first(where: { $0.header.seq == expected.seq }) {
                verifying = nil
                if found.header.history != 0 && expected.history != 0 && found.header.history != expected.history {
                    rebuild(
                        because: "the journal's action at seq \(expected.seq) is not the one this store applied (history "
                            + "\(HistoryID(rawValue: found.header.history)), not \(HistoryID(rawValue: expected.history)))", now: now)
                    return
                }
            }
            for action in batch where action.header.seq == version + 1 {
                apply(action, now: now)
                replayed += 1
            }
            replayRequestedAt = now.milliseconds
        case .replayEnd where message.header.flags.contains(.historyTruncated):
            // The journal starts after this store's version: the actions between are gone. Nothing can be
            // applied past the hole; ask again after the replay timeout in case the journal is restored.
            let reason =
                "the dispatcher's journal starts at seq \(message.header.ref), but this store is at version \(version): "
                + "restore the journal's older segments, or start this store from a snapshot at version \(max(message.header.ref, 1) - 1) or later "
                + "(docs/OPERATIONS.md, \"A journal that starts above 1\")"
            if problem != reason {
                logger.error("cannot catch up", metadata: ["store": "\(rules.name)", "reason": "\(reason)"])
            }
            problem = reason
            dispatcherHead = max(dispatcherHead, message.header.seq)
            replayRequestedAt = now.milliseconds
        case .replayEnd:
            problem = nil
            if let expected = verifying, message.header.seq < expected.seq {
                // The whole journal ends before the action checked: the state is of a history gone.
                rebuild(because: "the dispatcher's journal ends at seq \(message.header.seq), before this store's version \(expected.seq)", now: now)
                return
            }
            // A dispatcher whose whole journal ends below a snapshot the store resumed from: the snapshot
            // belongs to another history. Where both carry a history, the epochs decide instead (`judge`):
            // within one epoch a lower head is only a late answer.
            if message.header.seq < version && !caughtUp && (restoredWithoutHistory || message.header.history == 0) {
                // This store's snapshot is ahead of the dispatcher's whole history: it belongs to another
                // history (a journal wiped or replaced). Trusting it would skip real actions.
                logger.error(
                    "snapshot is ahead of the dispatcher; discarding it and replaying",
                    metadata: [
                        "store": "\(rules.name)", "snapshot": "\(version)", "dispatcher": "\(message.header.seq)",
                    ])
                resetToEmpty()
                dispatcherHead = message.header.seq
                requestReplay(now: now)
                return
            }
            dispatcherHead = max(dispatcherHead, message.header.seq)
            replayRequestedAt = nil
            applyPending(now: now)
            if version < dispatcherHead {
                requestReplay(now: now)
            } else if !caughtUp {
                caughtUp = true
                publishStateIfChanged(now: now)
                for peer in waitingViews { answerSnapshot(peer, now: now) }
                waitingViews.removeAll()
            }
        default:
            return
        }
    }

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
            } else if waitingViews.count < StoreCore.maxWaitingViews, !waitingViews.contains(peer) {
                waitingViews.append(peer)
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
        guard unansweredEffects.count < StoreCore.maxUnansweredEffects else {
            logger.error(
                "an effect's action was dropped: too many unanswered",
                metadata: [
                    "store": "\(rules.name)", "type": "\(type)", "unanswered": "\(unansweredEffects.count)",
                ])
            return
        }
        effectClientSeq += 1
        let message = Message(
            topic: app,
            header: Header(
                kind: .dispatch, clientID: effectClientID, clientSeq: effectClientSeq,
                timestamp: now.wallNanoseconds, actionType: type), payload: payload)
        unansweredEffects[effectClientSeq] = (message, now.milliseconds, UInt64(rules.effectRetryMilliseconds))
        commands.append(.dispatch(message))
    }

    /// The intake's answer (ACK or NACK) to an effect's action.
    public func receivedIntakeReply(_ reply: Message) {
        guard reply.header.clientID == effectClientID else { return }
        if reply.kind == .nack, reply.header.flags.contains(.retryLater), var entry = unansweredEffects[reply.header.clientSeq] {
            // Refused for now: keep it, and wait longer before each new try.
            entry.retryAfter = min(entry.retryAfter * 2, 30_000)
            unansweredEffects[reply.header.clientSeq] = entry
            return
        }
        unansweredEffects[reply.header.clientSeq] = nil
        if reply.kind == .nack {
            logger.warning(
                "an effect's action was refused",
                metadata: [
                    "store": "\(rules.name)", "reason": "\(String(decoding: reply.payload, as: UTF8.self))",
                ])
        }
    }

    // MARK: Histories

    enum Verdict { case follow, wait, ignore }

    /// What a dispatcher's history stamp means here. A heartbeat also says where its epoch starts
    /// (`since`) and how far it is (`head`).
    private func judge(_ raw: UInt64, since: UInt64?, head: UInt64?, now: NodeTime) -> Verdict {
        guard raw != 0 else { return .follow }  // a dispatcher that does not stamp histories
        let offered = HistoryID(rawValue: raw)
        guard let current = history else {
            // Nothing applied from any history yet (or a snapshot from before histories): follow this one.
            history = offered
            return .follow
        }
        if offered == current { return .follow }
        guard offered.cluster == current.cluster else {
            refusedForeignHistory = true
            problem =
                "the dispatcher serves another journal (history \(offered)) than this store's state comes from (\(current)): "
                + "point the store at its own cluster, or delete its snapshot and restart it to rebuild from this journal "
                + "(docs/OPERATIONS.md, \"A journal from another history\")"
            logger.error("refusing a foreign history", metadata: ["store": "\(rules.name)", "reason": "\(problem!)"])
            replayRequestedAt = nil
            return .ignore
        }
        if offered.epoch < current.epoch { return .ignore }  // a late message from before the dispatcher restarted
        guard let since, let head else {
            logger.debug(
                "held back until the epoch is placed",
                metadata: ["store": "\(rules.name)", "history": "\(offered)", "following": "\(current)"])
            return .wait
        }
        history = offered
        // The new epoch's head replaces the old one's, which may be past anything the journal now holds.
        dispatcherHead = head
        if version >= since {
            // The journal's new epoch starts at or below this store's version: actions this store applied
            // are not in the journal any more (restored from an older copy, or its tail lost under fsync
            // none). Keeping them would mix two histories; the journal is the truth, so rebuild from it.
            rebuild(
                because: "the dispatcher's journal lost actions this store applied: its epoch \(offered) starts at seq \(since), "
                    + "at or below this store's version \(version)", now: now)
            return .ignore
        }
        // A new epoch that starts past this store. What was held back from other epochs is dropped: an
        // epoch this store did not hear may have cut the journal below it, so those seqs may now name
        // other actions. The replay brings them again, from the journal as it is.
        retainPending { $0.header.history == raw }
        // An epoch this store did not hear may have cut the journal too: before going on, the journal's
        // action at this store's version must be the one it applied (log matching).
        if version > 0 && lastAppliedHistory != 0 {
            verifying = (version, lastAppliedHistory)
            requestReplay(now: now)
            return .follow
        }
        applyPending(now: now)
        if replayRequestedAt != nil || version < dispatcherHead { requestReplay(now: now) }
        return .follow
    }

    /// Drops the state for one rebuilt from the journal, with the reason in the log.
    private func rebuild(because reason: String, now: NodeTime) {
        logger.error(
            "the state is not part of the dispatcher's journal; rebuilding it from the journal",
            metadata: [
                "store": "\(rules.name)", "reason": "\(reason)",
            ])
        resetToEmpty()
        liveAfter = max(liveAfter ?? 0, dispatcherHead)
        requestReplay(now: now)
    }

    /// A turn of the loop: after every drained burst, and at ``nextDeadline`` at the latest. Publishes
    /// what the burst changed (one update per burst), and runs the timers.
    public func tick(now: NodeTime) {
        let timeout = UInt64(rules.dispatcherTimeoutMilliseconds)
        if now.elapsed(since: lastTick) > timeout {
            // Silence counts only while the store was awake to hear: what arrived meanwhile is still
            // queued, and reconnecting now would throw it away. Give the dispatcher a fresh window.
            logger.notice(
                "the store itself was not running; not counting that as the dispatcher's silence",
                metadata: [
                    "store": "\(rules.name)", "paused_ms": "\(now.elapsed(since: lastTick))",
                ])
            lastHeardFromDispatcher = now.milliseconds
        }
        lastTick = now.milliseconds
        retryUnansweredEffects(now: now)
        publishStateIfChanged(now: now)
        writeSnapshotIfDue(force: false)
        if now.milliseconds >= nextHeartbeat {
            publishHeartbeat(now: now)
            nextHeartbeat = now.milliseconds + UInt64(rules.heartbeatMilliseconds)
        }
        if now.elapsed(since: lastHeardFromDispatcher) > timeout && now.elapsed(since: lastReconnect) > timeout {
            // Nothing from the dispatcher past the timeout (it heartbeats several times a second): drop
            // the connections and make new ones, then ask for whatever was missed.
            logger.warning(
                "no word from the dispatcher; reconnecting",
                metadata: [
                    "store": "\(rules.name)", "silent_ms": "\(now.elapsed(since: lastHeardFromDispatcher))",
                ])
            reconnects += 1
            lastReconnect = now.milliseconds
            commands.append(.reconnect)
            requestReplay(now: now)
        }
        if !refusedForeignHistory, let asked = replayRequestedAt, now.elapsed(since: asked) > UInt64(rules.replayTimeoutMilliseconds) {
            logger.notice("replay unanswered; asking again", metadata: ["store": "\(rules.name)", "from": "\(version + 1)"])
            requestReplay(now: now)
        }
    }

    /// The node is stopping: keep what was applied.
    public func stop() { writeSnapshotIfDue(force: true) }

    // MARK: Publishing

    /// Publishes what changed since the last update: the changes alone when the state records them
    /// (`IncrementalState`), else the whole state. `ref` names the version the update applies to.
    /// Nothing is published when no action changed the state: a plain state is compared with the last one
    /// published whole, and actions of other apps do not count. The heartbeat says how far the store got.
    private func publishStateIfChanged(now: NodeTime) {
        guard version != lastPublishedVersion, mayHaveChanged else { return }
        mayHaveChanged = false
        var flags: Header.Flags = []
        let payload: [UInt8]
        do {
            if changesSince == lastPublishedVersion, let changes = try runtime.takeChanges() {
                payload = changes
            } else {
                payload = try runtime.encodedState()
                runtime.forgetChanges()
                if let published = fullState, published.version == lastPublishedVersion, published.bytes == payload {
                    // The actions applied left the state as it was published: views already hold it.
                    changesSince = lastPublishedVersion
                    return
                }
                flags = .fullState
                fullState = (version, payload)
            }
        } catch {
            logger.error("state cannot be encoded", metadata: ["store": "\(rules.name)", "error": "\(error)"])
            return
        }
        changesSince = version
        commands.append(
            .publish(
                Message(
                    topic: rules.name,
                    header: Header(
                        kind: .state, flags: flags, seq: version, ref: lastPublishedVersion, timestamp: now.wallNanoseconds,
                        history: history?.rawValue ?? 0), payload: payload)))
        lastPublishedVersion = version
        publishSelectionsIfChanged(now: now)
    }

    // MARK: Selections

    /// A view subscribed to (or the last one left) a topic of the state publisher. Selection topics
    /// of this store start or stop being followed; the new follower gets the value at once.
    public func subscriptionChanged(topic: String, subscribed: Bool, now: NodeTime) {
        guard let path = StatePath.fromTopic(topic, store: rules.name) else { return }
        guard subscribed else {
            selections[topic] = nil
            return
        }
        guard selections[topic] != nil || selections.count < StoreCore.maxSelections else {
            logger.warning(
                "too many selections followed; not publishing one more", metadata: ["store": "\(rules.name)", "topic": "\(topic)"])
            return
        }
        guard let value = selectedValue(path) else { return }
        let version = selections[topic]?.version ?? lastPublishedVersion
        selections[topic] = (path, value, version)
        publishSelection(topic, value: value, version: version, now: now)
    }

    /// The part of the current state at `path`; nil (logged) when the state cannot be read as JSON.
    private func selectedValue(_ path: StatePath) -> JSONValue? {
        selectedValues([path]).first
    }

    private func selectedValues(_ paths: [StatePath]) -> [JSONValue] {
        do {
            let state = JSONValue(parsing: try rules.app.stateJSON(fromWire: try runtime.encodedState()))
            return paths.map { $0.select(in: state) }
        } catch {
            logger.error("state cannot be read for a selection", metadata: ["store": "\(rules.name)", "error": "\(error)"])
            return []
        }
    }

    /// After a state update: each selection whose value changed is published, once.
    private func publishSelectionsIfChanged(now: NodeTime) {
        guard !selections.isEmpty else { return }
        let topics = Array(selections.keys)
        let values = selectedValues(topics.map { selections[$0]!.path })
        for (topic, value) in zip(topics, values) where value != selections[topic]!.value {
            selections[topic]!.value = value
            selections[topic]!.version = lastPublishedVersion
            publishSelection(topic, value: value, version: lastPublishedVersion, now: now)
        }
    }

    private func publishSelection(_ topic: String, value: JSONValue, version: UInt64, now: NodeTime) {
        commands.append(
            .publish(
                Message(
                    topic: topic,
                    header: Header(
                        kind: .state, flags: .fullState, seq: version, ref: max(self.version, lastPublishedVersion),
                        timestamp: now.wallNanoseconds, history: history?.rawValue ?? 0),
                    payload: value.jsonBytes)))
    }

    private func answerSelection(_ path: StatePath, to peer: [UInt8], now: NodeTime) {
        publishStateIfChanged(now: now)
        let topic = path.topic(store: rules.name)
        guard let value = selections[topic]?.value ?? selectedValue(path) else { return }
        commands.append(
            .reply(
                peer: peer,
                Message(
                    topic: topic,
                    header: Header(
                        kind: .snapshot, flags: .fullState, seq: selections[topic]?.version ?? lastPublishedVersion,
                        ref: max(version, lastPublishedVersion), timestamp: now.wallNanoseconds, history: history?.rawValue ?? 0),
                    payload: value.jsonBytes)))
    }

    private func publishHeartbeat(now: NodeTime) {
        let flags: Header.Flags = (replayRequestedAt != nil || version < dispatcherHead) ? .catchingUp : []
        // Followers of a selection hear only its topic: each gets a heartbeat of its own.
        for (topic, selection) in selections.sorted(by: { $0.key < $1.key }) {
            commands.append(
                .publish(
                    Message(
                        topic: topic,
                        header: Header(
                            kind: .heartbeat, flags: flags, seq: selection.version, ref: max(version, lastPublishedVersion),
                            timestamp: now.wallNanoseconds, history: history?.rawValue ?? 0))))
        }
        commands.append(
            .publish(
                Message(
                    topic: rules.name,
                    header: Header(
                        kind: .heartbeat, flags: flags, seq: lastPublishedVersion, ref: max(version, lastPublishedVersion),
                        timestamp: now.wallNanoseconds,
                        history: history?.rawValue ?? 0))))
    }

    /// Answers with the state as last published, so the version matches the update stream.
    private func answerSnapshot(_ peer: [UInt8], now: NodeTime) {
        publishStateIfChanged(now: now)
        if fullState?.version != lastPublishedVersion {
            do {
                fullState = (lastPublishedVersion, try runtime.encodedState())
            } catch {
                logger.error("state cannot be encoded", metadata: ["store": "\(rules.name)", "error": "\(error)"])
                return
            }
        }
        commands.append(
            .reply(
                peer: peer,
                Message(
                    topic: rules.name,
                    header: Header(
                        kind: .snapshot, flags: .fullState, seq: lastPublishedVersion, ref: max(version, lastPublishedVersion),
                        timestamp: now.wallNanoseconds,
                        history: history?.rawValue ?? 0),
                    payload: fullState?.bytes ?? [])))
    }

    private func writeSnapshotIfDue(force: Bool) {
        guard rules.writesSnapshots, version > snapshotVersion else { return }
        guard force || version - snapshotVersion >= UInt64(rules.snapshotEveryActions) else { return }
        do {
            commands.append(.writeSnapshot(version: version, history: lastAppliedHistory, snapshot: try runtime.encodedSnapshot()))
            // Counted as written: a failed write is logged by the shell and tried again after as many
            // actions more, not on every turn.
            snapshotVersion = version
        } catch {
            logger.error("snapshot not encoded", metadata: ["store": "\(rules.name)", "error": "\(error)"])
        }
    }

    /// Sends again what the intake has not answered; the dispatcher deduplicates by client seq.
    private func retryUnansweredEffects(now: NodeTime) {
        guard !unansweredEffects.isEmpty else { return }
        for (clientSeq, entry) in unansweredEffects.sorted(by: { $0.key < $1.key }) where now.elapsed(since: entry.sentAt) >= entry.retryAfter {
            unansweredEffects[clientSeq]?.sentAt = now.milliseconds
            commands.append(.dispatch(entry.message))
        }
    }

    // MARK: Status

    /// The store's status document; `subscribers` and `pid` are the shell's to know.
    public func status(now: NodeTime, subscribers: Int, pid: Int) -> NodeStatus {
        var status = NodeStatus(
            role: .store, pid: pid, uptimeMs: now.elapsed(since: startedAt), subscribers: subscribers, rejected: rejected)
        status.name = rules.name
        status.app = rules.app.name
        status.version = version
        status.dispatcherHead = dispatcherHead
        status.applied = applied
        status.replayed = replayed
        status.gapsRepaired = gapsRepaired
        status.pending = pending.count
        status.dispatcher =
            now.elapsed(since: lastHeardFromDispatcher) <= UInt64(rules.dispatcherTimeoutMilliseconds) ? "connected" : "silent"
        status.reconnects = reconnects
        status.subscribed = liveAfter != nil
        status.caughtUp = caughtUp
        status.snapshotVersion = snapshotVersion
        status.effectsRunning = runtime.effectsInFlight
        status.effectsUnanswered = unansweredEffects.count
        status.problem = problem
        status.history = history?.description
        return status
    }

    /// The state as the runtime holds it now, in wire form (for checks; views get it by snapshot).
    public func encodedState() throws -> [UInt8] { try runtime.encodedState() }

    /// Cancels the runtime's running effects (the node is going away).
    public func cancelEffects() { runtime.cancelEffects() }
}
