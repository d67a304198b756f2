import FluxCore
import Foundation
import Logging
import NodeSupport
import ZeroMQ

/// What a view shows: the store's state at a version, and whether it can be trusted right now.
public struct ViewUpdate: Sendable, Equatable {
    public enum Connection: Sendable, Equatable, CustomStringConvertible {
        /// Following the store's updates.
        case live
        /// Waiting for a snapshot (joining, or resynchronising after a gap); the reason says which.
        case catchingUp(String)
        /// Nothing heard from the store past the timeout; what is shown may be old.
        case stale(String)

        public var description: String {
            switch self {
            case .live: "live"
            case .catchingUp(let why): "catching up (\(why))"
            case .stale(let why): "stale (\(why))"
            }
        }
    }

    /// An action the store refused (its state did not change).
    public struct Rejection: Sendable, Equatable {
        public var seq: UInt64
        public var actionType: String
        public var clientID: UInt64
        public var reason: String
    }

    public var store: String
    public var version: UInt64
    /// The whole state in wire form.
    public var state: [UInt8]
    public var connection: Connection
    /// Set on the update that reports a rejection; the state is the unchanged one.
    public var rejection: Rejection? = nil
    /// When the store published the newest update applied (its wall clock, nanoseconds since the epoch).
    public var publishedAt: Int64 = 0
    /// Wire bytes of the newest update applied (a whole state or only its changes).
    public var updateBytes: Int = 0
}

/// Follows one store's state the Clone way: subscribe first, then ask for a snapshot, drop queued
/// updates the snapshot already covers, then apply live updates. A version gap, a heartbeat announcing
/// a newer version, or silence past the timeout makes it snapshot again.
public final class ViewNode: Sendable {
    public struct Configuration: Sendable {
        public var store: String
        public var state: String
        public var snapshot: String
        public var heartbeatMilliseconds: Int = 200
        /// Silence from the store past this makes the view stale and re-snapshot.
        public var silenceTimeoutMilliseconds: Int = 1500
        /// The store's app, to apply changes-only updates. Without it, such an update makes the view
        /// ask for a whole snapshot instead.
        public var app: (any AnyApp)?
        /// False: updates report versions only, and `state` stays empty unless a whole state arrived
        /// (a load test's subscriber, which must not pay for re-encoding the state per update).
        public var materializesState = true

        public init(store: String, state: String, snapshot: String, app: (any AnyApp)? = nil) {
            self.store = store
            self.state = state
            self.snapshot = snapshot
            self.app = app
        }

        public init(topology: Topology, store: Topology.StoreEndpoints, app: (any AnyApp)? = nil) {
            self.init(store: store.name, state: store.state, snapshot: store.snapshot, app: app)
            heartbeatMilliseconds = topology.heartbeatMilliseconds
            silenceTimeoutMilliseconds = topology.timeoutMilliseconds ?? max(1500, topology.heartbeatMilliseconds * 8)
        }
    }

    public let configuration: Configuration
    private let context: Context
    private let logger: Logger
    private let control: NodeControl<Never>
    private let onUpdate: @Sendable (ViewUpdate) -> Void
    public let ready = ReadyLatch()

    /// `onUpdate` is called on the view's thread for every change of state or connection.
    public init(
        configuration: Configuration, context: Context = .shared, logger: Logger,
        onUpdate: @escaping @Sendable (ViewUpdate) -> Void
    ) throws {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        self.control = try NodeControl()
        self.onUpdate = onUpdate
    }

    public func run() async throws {
        let configuration = configuration, context = context, logger = logger, control = control
        let ready = ready, onUpdate = onUpdate
        try await runOnNodeThread(name: "zflux-view-\(configuration.store)", control: control, ready: ready) {
            try ViewLoop(configuration: configuration, context: context, logger: logger, control: control, onUpdate: onUpdate)
        }
    }

    public func stop() { control.requestStop() }
}

final class ViewLoop: NodeLoop {
    enum Phase { case awaitingSnapshot, live }

    let configuration: ViewNode.Configuration
    let logger: Logger
    let control: NodeControl<Never>
    let onUpdate: @Sendable (ViewUpdate) -> Void
    let context: Context
    let subscriber: Socket
    var snapshots: Socket
    let topic: [UInt8]

    var phase = Phase.awaitingSnapshot
    var version: UInt64 = 0
    var state: [UInt8]? = nil
    var connection = ViewUpdate.Connection.catchingUp("joining")
    /// Updates that arrived while waiting for a snapshot (bounded: only the newest matter when full).
    var queued: [Message] = []
    var snapshotAskedAt: UInt64 = 0
    var lastHeard: UInt64
    /// The view's decoded copy of the state, when the app is known: changes-only updates apply to it.
    let replica: (any StateReplica)?
    /// Changes were applied to the replica and `state` does not have them yet (encoded once per burst).
    var replicaAhead = false
    var publishedAt: Int64 = 0
    var updateBytes = 0

    init(
        configuration: ViewNode.Configuration, context: Context, logger: Logger, control: NodeControl<Never>,
        onUpdate: @escaping @Sendable (ViewUpdate) -> Void
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        self.onUpdate = onUpdate
        self.context = context
        self.topic = Array(configuration.store.utf8)
        self.lastHeard = MonotonicClock.nowMilliseconds()
        self.replica = configuration.app?.makeReplica()
        subscriber = try SocketDefaults.subscriber(context)
        try subscriber.subscribe(topic)
        try subscriber.connectSecurely(configuration.state)
        snapshots = try SocketDefaults.dealer(context)
        try snapshots.connectSecurely(configuration.snapshot)
    }

    deinit {
        subscriber.close()
        snapshots.close()
    }

    func run() throws {
        askForSnapshot(because: "joining")
        while !control.stopRequested {
            // Poll the current snapshot socket: it is replaced when a request goes unanswered.
            var poller = Poller()
            let subIndex = poller.add(.socket(subscriber))
            let snapIndex = poller.add(.socket(snapshots))
            let wakeIndex = poller.add(.fileDescriptor(control.wake.descriptor))
            _ = try poller.poll(timeoutMilliseconds: configuration.heartbeatMilliseconds)
            if poller.isReadable(wakeIndex) { _ = control.takeAll() }
            if poller.isReadable(snapIndex) { try drainSnapshots() }
            if poller.isReadable(subIndex) { try drainUpdates() }
            checkSilence()
        }
    }

    func askForSnapshot(because reason: String) {
        phase = .awaitingSnapshot
        snapshotAskedAt = MonotonicClock.nowMilliseconds()
        setConnection(.catchingUp(reason))
        do {
            try snapshots.send(Message(header: Header(kind: .snapshotRequest)).frames, dontWait: true)
        } catch {
            logger.debug("snapshot request not sent", metadata: ["error": "\(error)"])
        }
    }

    func drainSnapshots() throws {
        while let frames = try snapshots.receive(dontWait: true) {
            guard let reply = try? Message(frames: frames), reply.kind == .snapshot, phase == .awaitingSnapshot else { continue }
            lastHeard = MonotonicClock.nowMilliseconds()
            // Never go back in time: an older snapshot than what is shown is ignored (then re-asked).
            if state == nil || reply.header.seq >= version {
                version = reply.header.seq
                setWholeState(reply.payload)
            }
            phase = .live
            connection = .live
            let backlog = queued
            queued.removeAll()
            for update in backlog where update.header.seq > version { applyUpdate(update) }
            emit()
        }
    }

    func drainUpdates() throws {
        defer { if replicaAhead { emit() } }
        for _ in 0..<10_000 {
            guard let frames = try subscriber.receive(dontWait: true) else { return }
            guard let message = try? Message(frames: frames), message.topic == topic else { continue }
            lastHeard = MonotonicClock.nowMilliseconds()
            switch message.kind {
            case .state:
                if phase == .awaitingSnapshot {
                    queued.append(message)
                    if queued.count > 64 { queued.removeFirst(queued.count - 64) }
                } else {
                    applyUpdate(message)
                }
            case .rejected:
                if replicaAhead { emit() }
                guard let state else { continue }
                onUpdate(ViewUpdate(
                    store: configuration.store, version: version, state: state, connection: connection,
                    rejection: .init(seq: message.header.seq, actionType: message.header.actionType,
                                     clientID: message.header.clientID, reason: String(decoding: message.payload, as: UTF8.self))))
            case .heartbeat:
                guard phase == .live else { continue }
                if message.header.seq > version {
                    // The store published a version this view never received.
                    askForSnapshot(because: "missed version \(message.header.seq)")
                } else if connection != .live {
                    setConnection(.live)
                }
            default:
                continue
            }
        }
    }

    func applyUpdate(_ update: Message) {
        let header = update.header
        guard header.seq > version else { return }  // already covered by what is shown
        publishedAt = header.timestamp
        updateBytes = update.payload.count
        if header.flags.contains(.fullState) {
            // A whole state stands on its own: it repairs any gap before it.
            version = header.seq
            setWholeState(update.payload)
            connection = .live
            emit()
        } else if header.ref == version {
            guard let replica else {
                askForSnapshot(because: "changes-only update and no app to apply it")
                return
            }
            do {
                try replica.apply(changes: update.payload)
            } catch {
                logger.warning("update not applicable; resynchronising", metadata: ["store": "\(configuration.store)", "error": "\(error)"])
                askForSnapshot(because: "update not applicable")
                return
            }
            version = header.seq
            connection = .live
            replicaAhead = true
        } else {
            askForSnapshot(because: "gap: have \(version), update follows \(header.ref)")
        }
    }

    func checkSilence() {
        let now = MonotonicClock.nowMilliseconds()
        let timeout = UInt64(configuration.silenceTimeoutMilliseconds)
        if MonotonicClock.elapsed(since: lastHeard, now: now) > timeout {
            if case .stale = connection {} else {
                setConnection(.stale("no word from \(configuration.store) for \(MonotonicClock.elapsed(since: lastHeard, now: now)) ms"))
            }
        }
        if phase == .awaitingSnapshot && MonotonicClock.elapsed(since: snapshotAskedAt, now: now) > timeout {
            // The request or its answer was lost (or the store restarted): ask again on a fresh socket.
            snapshots.close()
            if let fresh = try? SocketDefaults.dealer(context) {
                try? fresh.connectSecurely(configuration.snapshot)
                snapshots = fresh
            }
            let reason: String = if case .stale(let why) = connection { why } else { "snapshot unanswered" }
            askForSnapshot(because: reason)
            if MonotonicClock.elapsed(since: lastHeard, now: now) > timeout { connection = .stale(reason) }
        }
    }

    func setConnection(_ new: ViewUpdate.Connection) {
        guard new != connection else { return }
        connection = new
        emit()
    }

    func setWholeState(_ bytes: [UInt8]) {
        state = bytes
        replicaAhead = false
        do {
            try replica?.load(bytes)
        } catch {
            logger.warning("state not decodable", metadata: ["store": "\(configuration.store)", "error": "\(error)"])
        }
    }

    func emit() {
        if replicaAhead, let replica, configuration.materializesState {
            replicaAhead = false
            do { state = try replica.encodedState() } catch {
                logger.warning("state not encodable", metadata: ["store": "\(configuration.store)", "error": "\(error)"])
            }
        }
        replicaAhead = false
        guard let state else { return }
        onUpdate(ViewUpdate(store: configuration.store, version: version, state: state, connection: connection, publishedAt: publishedAt, updateBytes: updateBytes))
    }
}
