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
    public struct Configuration: RulesConfiguration, Sendable {
        /// The settings the core decides by (``RulesConfiguration``).
        public var settings: ViewRules
        public var state: String
        public var snapshot: String
        /// True when the view follows versions only: it does not materialize the state
        /// (``materializesState`` is false) and has no ``app`` to apply changes with (a load generator
        /// following apps it does not know). A changes-only update that follows the shown version then
        /// advances the version, and is reported as usual, without being applied: ``ViewUpdate/state``
        /// keeps the last whole state. A version gap still makes the view ask for a snapshot.
        public var tracksVersionsOnly: Bool { settings.tracksVersionsOnly }
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
            settings.read(topology.settings ?? SettingValues())
            settings.heartbeatMilliseconds = topology.heartbeatMilliseconds
            settings.silenceTimeoutMilliseconds = topology.silenceTimeoutMilliseconds
            settings.codec = Settings.Cluster.codec.value(topology.codec)
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
