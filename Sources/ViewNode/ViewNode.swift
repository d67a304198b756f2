import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import ZeroMQ

/// Follows one store's state the Clone way: subscribe first, then ask for a snapshot, drop queued
/// updates the snapshot already covers, then apply live updates. A version gap, a heartbeat announcing
/// a newer version, or silence past the timeout makes it snapshot again.
public final class ViewNode: FluxNode {
    public struct Configuration: Sendable {
        /// The settings the core decides by, kept in its own rules: each default is the rules' (written
        /// once), and the properties below read and write them.
        private var settings: ViewRules
        public var store: String {
            get { settings.store }
            set { settings.store = newValue }
        }
        public var state: String
        public var snapshot: String
        public var heartbeatMilliseconds: Int {
            get { settings.heartbeatMilliseconds }
            set { settings.heartbeatMilliseconds = newValue }
        }
        /// Silence from the store past this makes the view stale and re-snapshot.
        public var silenceTimeoutMilliseconds: Int {
            get { settings.silenceTimeoutMilliseconds }
            set { settings.silenceTimeoutMilliseconds = newValue }
        }
        /// The store's app, to apply changes-only updates. Without it, such an update makes the view
        /// ask for a whole snapshot instead, unless the view ``tracksVersionsOnly``.
        public var app: (any AnyApp)? {
            get { settings.app }
            set { settings.app = newValue }
        }
        /// False: updates report versions only, and `state` stays empty unless a whole state arrived
        /// (a load test's subscriber, which must not pay for re-encoding the state per update).
        public var materializesState: Bool {
            get { settings.materializesState }
            set { settings.materializesState = newValue }
        }
        /// True when the view follows versions only: it does not materialize the state
        /// (``materializesState`` is false) and has no ``app`` to apply changes with (a load generator
        /// following apps it does not know). A changes-only update that follows the shown version then
        /// advances the version, and is reported as usual, without being applied: ``ViewUpdate/state``
        /// keeps the last whole state. A version gap still makes the view ask for a snapshot.
        public var tracksVersionsOnly: Bool { settings.tracksVersionsOnly }
        /// What the replica encodes the state in (it reads both codecs).
        public var codec: WireCodec.Format {
            get { settings.codec }
            set { settings.codec = newValue }
        }
        /// CURVE for tcp (nil: none).
        public var security: Security.Settings? = nil
        /// Follow only this part of the state (nil: all of it). The updates then carry the selected
        /// value as JSON, and come only when it changed.
        public var select: StatePath? {
            get { settings.select }
            set {
                settings.select = newValue
                if newValue != nil { settings.app = nil }
            }
        }

        /// What the view subscribes to and asks snapshots of: the store, or a selection of it.
        public var topic: String { settings.topic }

        public init(store: String, state: String, snapshot: String, app: (any AnyApp)? = nil) {
            self.settings = ViewRules(store: store, app: app)
            self.state = state
            self.snapshot = snapshot
        }

        public init(topology: Topology, store: Topology.StoreEndpoints, app: (any AnyApp)? = nil) {
            self.init(store: store.name, state: store.state, snapshot: store.snapshot, app: app)
            heartbeatMilliseconds = topology.heartbeatMilliseconds
            silenceTimeoutMilliseconds = topology.silenceTimeoutMilliseconds
            codec = topology.codec ?? .binary
        }

        /// What the core decides by: this configuration without its endpoints and security.
        public var rules: ViewRules { settings }
    }

    public let configuration: Configuration
    /// Its ``FluxNode/ready`` latch opens once the view's sockets are connected (or with the error).
    public let shell: NodeShell<Never>

    /// A view that runs (``FluxNode/run()``) until ``FluxNode/stop()`` or cancellation. `onUpdate` is
    /// called on the view's thread for every change of state or connection.
    public init(
        configuration: Configuration, context: Context = .shared, logger: Logger,
        onUpdate: @escaping @Sendable (ViewUpdate) -> Void
    ) throws {
        self.configuration = configuration
        self.shell = try NodeShell(threadName: "zflux-view-\(configuration.store)") { control in
            try ViewLoop(configuration: configuration, context: context, logger: logger, control: control, onUpdate: onUpdate)
        }
    }
}
