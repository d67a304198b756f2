import FluxCore
import Logging

/// The view's rules as a deterministic state machine: no sockets, threads, clocks or files.
///
/// It follows one store the Clone way (rule 5 of docs/ARCHITECTURE.md): subscribe first, then ask for a snapshot, drop
/// queued updates the snapshot already covers, then apply live updates. A version gap, a heartbeat
/// announcing a version never received, or silence past the timeout makes it snapshot again, and it
/// shows itself as catching up or stale meanwhile. It never shows an older version than one it showed
/// of the same history; when its store follows another history (its journal was restored from an older
/// copy and the store rebuilt), the view takes a snapshot of that history, whatever its version.
public final class ViewCore: NodeCore {
    package enum Command {
        /// Send on the snapshot DEALER.
        case requestSnapshot(Message)
        /// The snapshot request went unanswered: replace the DEALER with a fresh one before the next request.
        case replaceSnapshotSocket
        /// Hand this to the view's subscriber.
        case show(ViewUpdate)
    }

    enum Phase { case awaitingSnapshot, live }

    /// What it decides by: the store followed, how the state is held, timers.
    public let rules: ViewRules
    let logger: Logger
    private var commands: [Command] = []
    private var phase = Phase.awaitingSnapshot
    /// The version shown.
    public private(set) var version: UInt64 = 0
    /// How far the store said the shown state is current (heartbeats, snapshot replies): ≥ `version`.
    public private(set) var currentThrough: UInt64 = 0
    private var state: [UInt8]? = nil
    public private(set) var connection = ViewUpdate.Connection.catchingUp("joining")
    /// Updates that arrived while waiting for a snapshot (bounded: only the newest matter when full).
    private var queued: [Message] = []
    static let maxQueued = 64
    private var snapshotAskedAtMs: UInt64 = 0
    private var lastHeardMs: UInt64
    /// The view's decoded copy of the state, when the app is known: changes-only updates apply to it.
    private let replica: (any StateReplica)?
    /// Changes were applied to the replica and `state` does not have them yet (encoded once per burst).
    private var replicaAhead = false
    /// A version-only view (``ViewRules/tracksVersionsOnly``) advanced past the version it
    /// last showed on changes it did not apply (shown once per burst, as applied changes are).
    private var versionAhead = false
    /// The replica could not load the last whole state, so it holds an older one: no change may be
    /// applied to it until a whole state loads.
    private var replicaBehind = false
    private var publishedAtNanoseconds: Int64 = 0
    /// The history the shown state comes from (0: not known).
    public private(set) var history: UInt64 = 0
    private var updateBytes = 0

    public init(rules: ViewRules, now: NodeTime, logger: Logger) {
        self.rules = rules
        self.logger = logger
        self.lastHeardMs = now.milliseconds
        self.replica = rules.app?.makeReplica(format: rules.codec)
    }

    /// Where a broken invariant is reported instead of stopping the process (``invariant(_:_:report:)``):
    /// set by the simulator alone.
    @_spi(Simulation) public var onBrokenInvariant: ((String) -> Void)?

    package func takeCommands() -> [Command] {
        invariant(queued.count <= ViewCore.maxQueued, "the updates queued before a snapshot are bounded", report: onBrokenInvariant)
        defer { commands.removeAll(keepingCapacity: true) }
        return commands
    }

    /// The latest the shell may wait before calling ``tick(now:)`` again.
    public func nextDeadlineMs(now: NodeTime) -> UInt64 { now.milliseconds + UInt64(rules.heartbeatMilliseconds) }

    // MARK: Events

    /// The node is up and subscribed: ask for a snapshot.
    public func start(now: NodeTime) { askForSnapshot(because: "joining", now: now) }

    /// One part of a snapshot in parts arrived: the answer is coming, so the request is not repeated
    /// while its parts keep arriving (a large state takes several rounds of credit).
    public func receivedSnapshotPart(now: NodeTime) {
        lastHeardMs = now.milliseconds
        if phase == .awaitingSnapshot { snapshotAskedAtMs = now.milliseconds }
    }

    /// A reply on the snapshot DEALER.
    public func receivedSnapshot(_ reply: Message, now: NodeTime) {
        guard reply.kind == .snapshot, phase == .awaitingSnapshot, rules.select == nil || reply.topicString == rules.topic else {
            return
        }
        let relation = compare(reply.header.history)
        guard relation != .older else { return }  // a late answer from before the store's history moved on
        lastHeardMs = now.milliseconds
        // Never go back in time, within one history: an older snapshot than what is shown is ignored
        // (then re-asked). A snapshot of a newer history replaces what is shown, whatever its version,
        // and so does one current through more than what is shown (its last change may be older than
        // the shown version: a store that restarted from an older snapshot took that version back).
        if state == nil || reply.header.seq >= version || relation == .newer || reply.header.ref > max(version, currentThrough) {
            version = reply.header.seq
            currentThrough = max(reply.header.seq, reply.header.ref)
            if reply.header.history != 0 { history = reply.header.history }
            setWholeState(reply.payload)
        } else if reply.header.history != 0 && history == 0 {
            history = reply.header.history
        }
        phase = .live
        connection = .live
        let backlog = queued
        queued.removeAll()
        // Only updates of the history now shown: a queued one of another history is not part of it.
        for update in backlog where update.header.seq > version && compare(update.header.history) == .same { applyUpdate(update, now: now) }
        emit()
    }

    /// A message on the subscription to the store's state (STATE, REJECTED, HEARTBEAT).
    public func receivedUpdate(_ message: Message, now: NodeTime) {
        guard message.topicString == rules.topic else { return }
        lastHeardMs = now.milliseconds
        switch compare(message.header.history) {
        case .same:
            // What is shown came from a store that did not say its history yet: learn it from the updates.
            if history == 0 && phase == .live && message.header.history != 0 && message.kind != .rejected { history = message.header.history }
        case .older: return  // published before the store moved to a newer history
        case .newer:
            // The store now follows a newer history: what is shown may not be part of it.
            if phase == .live { askForSnapshot(because: "the store follows another history", now: now) }
            return
        }
        switch message.kind {
        case .state:
            if phase == .awaitingSnapshot {
                queued.append(message)
                if queued.count > ViewCore.maxQueued { queued.removeFirst(queued.count - ViewCore.maxQueued) }
            } else {
                applyUpdate(message, now: now)
            }
        case .rejected:
            if replicaAhead || versionAhead { emit() }
            guard let state else { return }
            // The refusal left current the state this view holds: it is current through the refused
            // action now, without waiting for the next heartbeat to say so.
            if phase == .live, message.header.ref == version { currentThrough = max(currentThrough, message.header.seq) }
            commands.append(
                .show(
                    ViewUpdate(
                        store: rules.store, version: version, currentThrough: max(currentThrough, version), state: state,
                        connection: connection,
                        rejection: .init(
                            seq: message.header.seq, actionType: message.header.actionType,
                            clientID: message.header.clientID, reason: String(decoding: message.payload, as: UTF8.self)),
                        typedState: typedState)))
        case .heartbeat:
            guard phase == .live else { return }
            if message.header.seq > version {
                // The store published a version this view never received.
                askForSnapshot(because: "missed version \(message.header.seq)", now: now)
            } else if message.header.seq < version {
                // The store's last update is older than what is shown: it restarted from an older snapshot
                // after publishing this view's version. Its state has not changed since `seq`, which says
                // nothing of the shown one (the actions after `seq` may have changed the state and then
                // changed it back), so the view takes the store's state as it is now.
                askForSnapshot(because: "the store's last update is \(message.header.seq), older than the one shown", now: now)
            } else {
                // The store applied up to `ref` and its state did not change since `seq`, its last update,
                // which this view holds.
                let through = max(message.header.ref, currentThrough)
                if connection != .live {
                    currentThrough = max(currentThrough, through)
                    setConnection(.live)
                } else if through > currentThrough {
                    currentThrough = through
                    emit()
                }
            }
        default:
            return
        }
    }

    /// The end of a drained burst of updates: changes applied to the replica are shown once.
    public func endOfBurst() {
        if replicaAhead || versionAhead { emit() }
    }

    /// A turn of the loop, at least once per heartbeat interval: silence checks.
    public func tick(now: NodeTime) {
        let timeout = UInt64(rules.silenceTimeoutMilliseconds)
        if now.elapsed(since: lastHeardMs) > timeout {
            if case .stale = connection {
            } else {
                setConnection(.stale("no word from \(rules.store) for \(now.elapsed(since: lastHeardMs)) ms"))
            }
        }
        if phase == .awaitingSnapshot && now.elapsed(since: snapshotAskedAtMs) > timeout {
            // The request or its answer was lost (or the store restarted): ask again on a fresh socket.
            commands.append(.replaceSnapshotSocket)
            let reason: String = if case .stale(let why) = connection { why } else { "snapshot unanswered" }
            askForSnapshot(because: reason, now: now)
            if now.elapsed(since: lastHeardMs) > timeout { connection = .stale(reason) }
        }
    }

    enum HistoryRelation { case same, older, newer }

    /// How a store's history stamp relates to the shown state's: a newer epoch (or another cluster) may
    /// rewind versions; an older epoch is a late message.
    private func compare(_ raw: UInt64) -> HistoryRelation {
        guard raw != 0, history != 0, raw != history else { return .same }
        let offered = HistoryID(rawValue: raw), shown = HistoryID(rawValue: history)
        if offered.cluster == shown.cluster && offered.epoch < shown.epoch { return .older }
        return .newer
    }

    // MARK: Applying

    private func askForSnapshot(because reason: String, now: NodeTime) {
        phase = .awaitingSnapshot
        snapshotAskedAtMs = now.milliseconds
        setConnection(.catchingUp(reason))
        // A selection's snapshot is asked for on its topic.
        let topic = rules.select == nil ? "" : rules.topic
        commands.append(.requestSnapshot(Message(topic: topic, header: Header(kind: .snapshotRequest))))
    }

    private func applyUpdate(_ update: Message, now: NodeTime) {
        let header = update.header
        // Already covered by what is shown: the store said its state did not change through
        // `currentThrough`, so an update at or below it is one a restarted store took back (it
        // published it, then came back from an older snapshot) or one the shown state includes.
        guard header.seq > max(version, currentThrough) else { return }
        publishedAtNanoseconds = header.timestamp
        updateBytes = update.payload.count
        if header.flags.contains(.fullState) {
            // A whole state stands on its own: it repairs any gap before it.
            version = header.seq
            currentThrough = max(currentThrough, version)
            setWholeState(update.payload)
            connection = .live
            emit()
        } else if header.ref == version {
            if rules.tracksVersionsOnly {
                // Only versions matter to this view, and the changes follow the one it holds.
                version = header.seq
                currentThrough = max(currentThrough, version)
                connection = .live
                versionAhead = true
                return
            }
            guard let replica else {
                askForSnapshot(because: "changes-only update and no app to apply it", now: now)
                return
            }
            guard !replicaBehind else {
                askForSnapshot(because: "the last whole state did not load", now: now)
                return
            }
            do {
                try replica.apply(changes: update.payload)
            } catch {
                logger.warning("update not applicable; resynchronising", metadata: ["store": "\(rules.store)", "error": "\(error)"])
                askForSnapshot(because: "update not applicable", now: now)
                return
            }
            version = header.seq
            currentThrough = max(currentThrough, version)
            connection = .live
            replicaAhead = true
        } else {
            askForSnapshot(because: "gap: have \(version), update follows \(header.ref)", now: now)
        }
    }

    private func setConnection(_ new: ViewUpdate.Connection) {
        guard new != connection else { return }
        connection = new
        emit()
    }

    private func setWholeState(_ bytes: [UInt8]) {
        state = bytes
        replicaAhead = false
        versionAhead = false
        do {
            try replica?.load(bytes)
            replicaBehind = false
        } catch {
            // What is shown is these bytes; the replica still holds an older state.
            logger.warning("state not decodable", metadata: ["store": "\(rules.store)", "error": "\(error)"])
            replicaBehind = true
        }
    }

    /// The replica's state as the app's own value, when the replica holds the shown version.
    private var typedState: TypedState? {
        guard !replicaBehind, let replica = replica as? any TypedStateReplica else { return nil }
        return TypedState(value: replica.typedState, version: version, history: history)
    }

    private func emit() {
        // The bytes of the state only for a subscriber that reads them: a typed screen's view does not
        // (``ViewRules/materializesState``), and takes the replica's value instead.
        if replicaAhead, let replica, rules.materializesState {
            do { state = try replica.encodedState() } catch {
                logger.warning("state not encodable", metadata: ["store": "\(rules.store)", "error": "\(error)"])
            }
        }
        replicaAhead = false
        versionAhead = false
        guard let state else { return }
        commands.append(
            .show(
                ViewUpdate(
                    store: rules.store, version: version, currentThrough: max(currentThrough, version), state: state,
                    connection: connection, publishedAtNanoseconds: publishedAtNanoseconds, updateBytes: updateBytes, history: history,
                    typedState: typedState)))
    }
}
