import FluxCore
import FluxCores
import Foundation
import Logging
import NodeSupport
import ZeroMQ

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

        /// What the core decides by: this configuration without its endpoints and security.
        public var rules: ViewRules {
            var rules = ViewRules(store: store, app: app)
            rules.select = select
            rules.materializesState = materializesState
            rules.codec = codec
            rules.heartbeatMilliseconds = heartbeatMilliseconds
            rules.silenceTimeoutMilliseconds = silenceTimeoutMilliseconds
            return rules
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
        self.core = ViewCore(rules: configuration.rules, now: .now(), logger: logger)
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
