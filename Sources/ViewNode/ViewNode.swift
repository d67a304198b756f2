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
    /// The version of the newest update shown: the seq of the last action that changed the state.
    public var version: UInt64
    /// How far the store has applied the global sequence with this state still current (its heartbeats
    /// say so; a store publishes only when its state changes): at least `version`.
    public var currentThrough: UInt64 = 0
    /// The whole state in wire form.
    public var state: [UInt8]
    public var connection: Connection
    /// Set on the update that reports a rejection; the state is the unchanged one.
    public var rejection: Rejection? = nil
    /// When the store published the newest update applied (its wall clock, nanoseconds since the epoch).
    public var publishedAt: Int64 = 0
    /// Wire bytes of the newest update applied (a whole state or only its changes).
    public var updateBytes: Int = 0
    /// The history (``HistoryID``) the shown state comes from; 0 when the store does not say.
    public var history: UInt64 = 0
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
        public var silenceTimeoutMilliseconds: Int = Topology.defaultTimeoutMilliseconds
        /// The store's app, to apply changes-only updates. Without it, such an update makes the view
        /// ask for a whole snapshot instead, unless the view ``tracksVersionsOnly``.
        public var app: (any AnyApp)?
        /// False: updates report versions only, and `state` stays empty unless a whole state arrived
        /// (a load test's subscriber, which must not pay for re-encoding the state per update).
        public var materializesState = true
        /// True when the view follows versions only: it does not materialize the state
        /// (``materializesState`` is false) and has no ``app`` to apply changes with (a load generator
        /// following apps it does not know). A changes-only update that follows the shown version then
        /// advances the version, and is reported as usual, without being applied: ``ViewUpdate/state``
        /// keeps the last whole state. A version gap still makes the view ask for a snapshot.
        public var tracksVersionsOnly: Bool { !materializesState && app == nil }
        /// What the replica encodes the state in (it reads both codecs).
        public var codec: WireCodec.Format = .binary
        /// CURVE for tcp (nil: none).
        public var security: Security.Settings? = nil
        /// Follow only this part of the state (nil: all of it). The updates then carry the selected
        /// value as JSON, and come only when it changed.
        public var select: StatePath? = nil {
            didSet { if select != nil { app = nil } }
        }

        /// What the view subscribes to and asks snapshots of: the store, or a selection of it.
        public var topic: String { select?.topic(store: store) ?? store }

        public init(store: String, state: String, snapshot: String, app: (any AnyApp)? = nil) {
            self.store = store
            self.state = state
            self.snapshot = snapshot
            self.app = app
        }

        public init(topology: Topology, store: Topology.StoreEndpoints, app: (any AnyApp)? = nil) {
            self.init(store: store.name, state: store.state, snapshot: store.snapshot, app: app)
            heartbeatMilliseconds = topology.heartbeatMilliseconds
            silenceTimeoutMilliseconds = topology.silenceTimeoutMilliseconds
            codec = topology.codec ?? .binary
        }
    }

    public let configuration: Configuration
    private let context: Context
    private let logger: Logger
    private let shell: NodeShell<Never>
    private let onUpdate: @Sendable (ViewUpdate) -> Void
    /// Opens once the view's sockets are connected (or with the error).
    public var ready: ReadyLatch { shell.ready }

    /// `onUpdate` is called on the view's thread for every change of state or connection.
    public init(
        configuration: Configuration, context: Context = .shared, logger: Logger,
        onUpdate: @escaping @Sendable (ViewUpdate) -> Void
    ) throws {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        self.shell = try NodeShell(threadName: "zflux-view-\(configuration.store)")
        self.onUpdate = onUpdate
    }

    /// Runs until `stop()` or cancellation.
    public func run() async throws {
        try await shell.run { [configuration, context, logger, onUpdate] control in
            try ViewLoop(configuration: configuration, context: context, logger: logger, control: control, onUpdate: onUpdate)
        }
    }

    public func stop() { shell.stop() }
}

/// The view's shell: owns its two sockets on the node thread, turns what arrives into ``ViewCore``
/// events and carries out the core's commands. It decides nothing itself.
final class ViewLoop: NodeLoop {
    let configuration: ViewNode.Configuration
    let logger: Logger
    let control: NodeControl<Never>
    let onUpdate: @Sendable (ViewUpdate) -> Void
    let context: Context
    let core: ViewCore
    let subscriber: Socket
    /// Replaced when a snapshot request goes unanswered.
    var snapshots: Socket
    /// Whole states over 4 MiB arrive in parts, on either socket.
    var updateParts = MessageAssembler()
    var snapshotParts = MessageAssembler()

    init(
        configuration: ViewNode.Configuration, context: Context, logger: Logger, control: NodeControl<Never>,
        onUpdate: @escaping @Sendable (ViewUpdate) -> Void
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        self.onUpdate = onUpdate
        self.context = context
        self.core = ViewCore(configuration: configuration, now: .now(), logger: logger)
        subscriber = try SocketDefaults.subscriber(context)
        try subscriber.subscribe(Array(configuration.topic.utf8))
        try subscriber.connectSecurely(configuration.state, configuration.security)
        snapshots = try SocketDefaults.dealer(context)
        try snapshots.connectSecurely(configuration.snapshot, configuration.security)
    }

    deinit {
        subscriber.close()
        snapshots.close()
    }

    func run() throws {
        core.start(now: .now())
        carryOut(core.takeCommands())
        while !control.stopRequested {
            // Poll the current snapshot socket: it is replaced when a request goes unanswered.
            var poller = Poller()
            let subIndex = poller.add(.socket(subscriber))
            let snapIndex = poller.add(.socket(snapshots))
            let wakeIndex = poller.add(.fileDescriptor(control.wake.descriptor))
            _ = try poller.poll(timeoutMilliseconds: configuration.heartbeatMilliseconds)
            if poller.isReadable(wakeIndex) { _ = control.takeAll() }
            if poller.isReadable(snapIndex) {
                while let frames = try snapshots.receive(dontWait: true) {
                    guard let part = try? Message(frames: frames) else { continue }
                    // A snapshot in parts comes a few at a time: ask for the next ones.
                    if part.header.flags.contains(.part) { core.receivedSnapshotPart(now: .now()) }
                    if let more = MessageParts.continuation(after: part) { _ = try? snapshots.send(more.frames, dontWait: true) }
                    if let reply = snapshotParts.accept(part) { core.receivedSnapshot(reply, now: .now()) }
                }
            }
            if poller.isReadable(subIndex) {
                for _ in 0..<10_000 {
                    guard let frames = try subscriber.receive(dontWait: true) else { break }
                    if let part = try? Message(frames: frames), let message = updateParts.accept(part) {
                        core.receivedUpdate(message, now: .now())
                    }
                }
                core.endOfBurst()
            }
            core.tick(now: .now())
            carryOut(core.takeCommands())
        }
    }

    func carryOut(_ commands: [ViewCore.Command]) {
        for command in commands {
            switch command {
            case .requestSnapshot(let request):
                do {
                    try snapshots.send(request.frames, dontWait: true)
                } catch {
                    logger.debug("snapshot request not sent", metadata: ["error": "\(error)"])
                }
            case .replaceSnapshotSocket:
                snapshots.close()
                snapshotParts = MessageAssembler()
                if let fresh = try? SocketDefaults.dealer(context) {
                    try? fresh.connectSecurely(configuration.snapshot, configuration.security)
                    snapshots = fresh
                }
            case .show(let update):
                onUpdate(update)
            }
        }
    }
}
