import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import ZeroMQ

/// Hosts one app's state: applies the dispatcher's actions strictly in sequence order, repairs gaps
/// from the dispatcher's replay service, publishes its state to views, and answers snapshot requests.
///
/// Sockets (all owned by the node's own thread):
/// - SUB to the dispatcher's actions; DEALER to its replay ROUTER; DEALER to its intake (effects).
/// - state PUB: STATE(version, whole state or changes) once per drained burst, REJECTED, and HEARTBEAT(version).
/// - snapshot ROUTER: SNAPSHOT-REQUEST → SNAPSHOT(version, whole state); STATUS-REQUEST → STATUS.
public final class StoreNode: FluxNode {
    public struct Configuration: RulesConfiguration, Sendable {
        /// The settings the core decides by (``RulesConfiguration``). ``rules`` adds what the snapshot path says.
        public var settings: StoreRules
        public var dispatcherActions: String
        public var dispatcherReplay: String
        public var dispatcherIntake: String
        public var state: String
        public var snapshot: String
        /// Where the store keeps its snapshot (nil: no snapshots; a restart replays everything).
        public var snapshotPath: String? = nil
        /// Where the store marks the action it is applying, so that a crash leaves the seq behind
        /// (``CrashMarker``): a store that dies twice on one asks for it to be quarantined. Nil: beside
        /// the snapshot, or nowhere without one.
        public var crashMarkerPath: String? = nil
        /// Where the supervisor appends this store's output: a store asking for an action to be
        /// quarantined quotes the runtime's message of its last crash from it (``CrashLog``). Nil: none.
        public var logPath: String? = nil
        /// Queue limit of the subscription and the state publisher.
        public var highWaterMark: Int32 = SocketDefaults.highWaterMarkMessages
        /// Bytes queued for one peer at most: the state publisher's and the snapshot ROUTER's
        /// high-water marks are lowered so that that many of their largest messages (a part) fit.
        public var queueBytes = SocketDefaults.queueBytes
        /// The largest message the store sends: a STATE, CHANGE or SNAPSHOT larger than a part goes
        /// in parts.
        public static let largestSentMessage = MessageParts.defaultPartBytes + (64 << 10)
        /// The state publisher's high-water mark: as configured, lowered to fit ``queueBytes``.
        public var effectivePublishHighWaterMark: Int32 {
            SocketDefaults.highWaterMark(queueBytes: queueBytes, largestMessage: Self.largestSentMessage, ceiling: highWaterMark)
        }
        /// What the store writes its state, changes and effects' actions in (it reads both codecs).
        public var codec: WireCodec.Format = .binary
        /// CURVE for tcp (nil: none).
        public var security: Security.Settings? = nil
        /// Revocations seen by this process's ZAP handler: when they move, the node cuts the
        /// connections it accepted (nil: no CURVE, nothing to revoke).
        public var revocations: Revocations? = nil

        public init(
            name: String, app: any AnyApp, dispatcherActions: String, dispatcherReplay: String,
            dispatcherIntake: String, state: String, snapshot: String
        ) {
            self.settings = StoreRules(name: name, app: app)
            self.dispatcherActions = dispatcherActions
            self.dispatcherReplay = dispatcherReplay
            self.dispatcherIntake = dispatcherIntake
            self.state = state
            self.snapshot = snapshot
        }

        public init(topology: Topology, store: Topology.StoreEndpoints, app: any AnyApp) {
            self.init(
                name: store.name, app: app, dispatcherActions: topology.dispatcher.actions,
                dispatcherReplay: topology.dispatcher.replay, dispatcherIntake: topology.dispatcher.intake,
                state: Topology.bindEndpoint(store.state, listen: store.listen),
                snapshot: Topology.bindEndpoint(store.snapshot, listen: store.listen))
            settings.read(topology.settings ?? SettingValues())
            settings.heartbeatMilliseconds = topology.heartbeatMilliseconds
            settings.runsEffects = Settings.Store.effects.value(store.runsEffects)
            if let durability = topology.durability {
                snapshotPath = durability.snapshotPath(store: store.name)
                settings.snapshotEveryActions = durability.snapshotEveryActions
            }
            if let hwm = topology.highWaterMark { highWaterMark = Int32(hwm) }
            if let bytes = topology.queueBytes { queueBytes = bytes }
            settings.dispatcherTimeoutMilliseconds = topology.silenceTimeoutMilliseconds
            codec = Settings.Cluster.codec.value(topology.codec)
        }

        /// What the core decides by: this configuration without its endpoints, sockets and paths.
        public var rules: StoreRules {
            var rules = settings
            rules.writesSnapshots = snapshotPath != nil
            return rules
        }
    }

    /// What an effect sends back, posted from effect tasks to the node thread.
    public enum Command: Sendable {
        case effectAction(app: String, type: String, payload: [UInt8])
    }

    public let configuration: Configuration
    public let shell: NodeShell<Command>

    /// A store that runs (``FluxNode/run()``) until ``FluxNode/stop()`` or cancellation.
    public init(configuration: Configuration, context: Context = .shared, logger: Logger) throws {
        self.configuration = configuration
        self.shell = try NodeShell(threadName: "zflux-store-\(configuration.name)") { control in
            try StoreLoop(configuration: configuration, context: context, logger: logger, control: control)
        }
    }
}
