import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import ZeroMQ

/// The single sequencer: stamps every accepted action with the next global sequence number, keeps it
/// in its log, broadcasts it to every store, and serves replays of the log.
///
/// Sockets (all owned by the node's own thread):
/// - intake ROUTER: DISPATCH → ACK(seq) or NACK(reason); STATUS-REQUEST → STATUS.
/// - actions PUB: ACTION in sequence order, and HEARTBEAT(seq = newest) every heartbeat interval.
/// - replay ROUTER: REPLAY-REQUEST(from) → REPLAY-BATCH… then REPLAY-END(newest).
public final class DispatcherNode: FluxNode {
    public struct Configuration: RulesConfiguration, Sendable {
        public var intake: String
        public var actions: String
        public var replay: String
        /// The settings the core decides by (``RulesConfiguration``). ``rules`` adds what the journal and the pair say.
        public var settings: DispatcherRules
        /// Where sequenced actions are kept. nil: in memory only (tests, embedded clusters).
        public var journal: JournalConfiguration? = nil
        /// Send high-water mark of the actions PUB: a subscriber further behind than this loses messages
        /// (and repairs the gap from replay).
        public var publishHighWaterMark: Int32 = SocketDefaults.highWaterMarkMessages
        /// Bytes queued for one peer at most: the actions PUB's and the intake's high-water marks are
        /// lowered so that that many of the largest action this intake admits fit in it.
        public var queueBytes = SocketDefaults.queueBytes
        /// The largest ACTION or DISPATCH this dispatcher handles: the largest payload it admits and
        /// room for the header, app and type around it.
        public var largestActionMessage: Int { max(settings.maxPayloadBytes, settings.maxPayloadBytesByType.values.max() ?? 0) + 1024 }
        /// The actions PUB's high-water mark: as configured, lowered to fit ``queueBytes``.
        public var effectivePublishHighWaterMark: Int32 {
            SocketDefaults.highWaterMark(queueBytes: queueBytes, largestMessage: largestActionMessage, ceiling: publishHighWaterMark)
        }
        /// CURVE on the tcp sockets it binds (nil: none).
        public var security: Security.Settings? = nil
        /// Revocations seen by this process's ZAP handler: when they move, the node cuts the
        /// connections it accepted (nil: no CURVE, nothing to revoke).
        public var revocations: Revocations? = nil
        /// With a standby (`[ha]`): this dispatcher's part in the pair (nil: the one dispatcher).
        public var ha: HighAvailability? = nil
        /// The wall clock of the dispatcher's turns, in nanoseconds since the Unix epoch: the time it stamps
        /// on actions and by which schedules fall due. The system's unless a test moves time by hand
        /// (`TestCluster`'s clock), which then wakes the loop through its mailbox. A member of a pair
        /// reads the system's.
        package var wallNanoseconds: @Sendable () -> Int64 = WallClock.nowNanoseconds

        public init(intake: String, actions: String, replay: String, apps: [any AnyApp]) {
            self.intake = intake
            self.actions = actions
            self.replay = replay
            self.settings = DispatcherRules(apps: apps)
        }

        public init(topology: Topology, apps: [any AnyApp]) {
            // The dispatcher binds these; with `listen` set, on that address instead of the advertised one.
            let bound = topology.dispatcher.bound
            self.init(intake: bound.intake, actions: bound.actions, replay: bound.replay, apps: apps)
            settings.read(topology.settings ?? SettingValues())
            settings.heartbeatMilliseconds = topology.heartbeatMilliseconds
            if let hwm = topology.highWaterMark { publishHighWaterMark = Int32(hwm) }
            if let bytes = topology.queueBytes { queueBytes = bytes }
            if let limits = topology.limits {
                settings.clientRate = limits.clientRate
                if let max = limits.maxPayloadBytes { settings.maxPayloadBytes = max }
                settings.maxPayloadBytesByType = limits.maxPayloadBytesByType ?? [:]
            }
            if let durability = topology.durability {
                journal = .init(directory: durability.journalDirectory, policy: durability.fsync, segmentBytes: durability.segmentBytes)
                storeSnapshots = Dictionary(
                    topology.stores.map { ($0.name, durability.snapshotPath(store: $0.name)) }, uniquingKeysWith: { first, _ in first })
            }
        }

        /// Where each of the cluster's stores keeps its snapshot, by store: what retention reads to know
        /// what the stores need of the journal (nil: not known, and retention removes nothing).
        package var storeSnapshots: [String: String]? = nil

        /// Each store's snapshot version + 1, read from its header in the snapshot directory: what the
        /// journal's retention keeps for the stores, on the leader and the standby alike. A store with
        /// no snapshot here (a new one, or one on another host) needs the whole journal; nil when the
        /// snapshots are not known.
        package func storeNeeds() -> [JournalRetention.Need]? {
            guard let snapshots = storeSnapshots else { return nil }
            return snapshots.sorted { $0.key < $1.key }.map { store, path in
                let header = FileHandle(forReadingAtPath: path).map { handle in
                    defer { try? handle.close() }
                    return [UInt8]((try? handle.read(upToCount: 16)) ?? Data())
                }
                guard let version = header.flatMap(SnapshotFormat.version(ofHeader:)) else {
                    return .init(from: 0, who: "store \(store), which has no snapshot in \(path)")
                }
                return .init(from: version + 1, who: "store \(store)'s snapshot (version \(version))")
            }
        }

        /// What the core decides by: this configuration without its endpoints, sockets and security.
        public var rules: DispatcherRules {
            var rules = settings
            rules.journalDescription = journal.map { "\($0.directory) (fsync \($0.policy.rawValue))" } ?? "memory"
            rules.replication = ha?.mode
            rules.memberToken = ha?.memberToken
            return rules
        }
    }

    /// A dispatcher of a pair: it follows the leader's journal as a standby until it wins the lease in
    /// etcd, then leads, binding its endpoints and the replication ROUTER its standby follows.
    public typealias Replication = DispatcherRules.Replication

    public struct HighAvailability: Sendable {
        /// Its name among the cluster's dispatchers (the lease key's value names it).
        public var name: String
        /// The ROUTER it binds when it leads, for its standby.
        public var replication: String
        /// The other dispatchers' replication endpoints, which it follows while it is a standby.
        public var peers: [String]
        /// etcd's client endpoints, and the key the leader holds (`/zflux/<cluster>/leader`).
        public var etcd: [String]
        public var key: String
        public var leaseMilliseconds: Int
        public var mode: DispatcherRules.Replication
        /// Under CURVE: this member's own key pair, which it follows its leader with. The leader's
        /// replication endpoint admits that key alone (its ZAP domain, ``ZAPHandler/replicationDomain``).
        public var memberKey: KeyPair?
        /// Without CURVE: the member token both members hold (``DispatcherRules/memberToken``), whose
        /// proof each hello carries and the leader checks. Nil: none.
        public var memberToken: UInt64? = nil
        /// Connects to the lease service at `etcd`'s endpoints (``LeaseService``): the command line
        /// gives etcd's client here.
        package var leases: @Sendable (_ endpoints: [String], _ logger: Logger) throws -> any LeaseService

        package init(
            name: String, replication: String, peers: [String], etcd: [String], key: String, leaseMilliseconds: Int = Defaults.leaseMilliseconds,
            mode: DispatcherRules.Replication = .sync, memberKey: KeyPair? = nil,
            leases: @escaping @Sendable (_ endpoints: [String], _ logger: Logger) throws -> any LeaseService
        ) {
            self.leases = leases
            self.memberKey = memberKey
            self.name = name
            self.replication = replication
            self.peers = peers
            self.etcd = etcd
            self.key = key
            self.leaseMilliseconds = leaseMilliseconds
            self.mode = mode
        }
    }

    public struct JournalConfiguration: Sendable {
        public var directory: String
        public var policy: Journal.FsyncPolicy
        public var segmentBytes: Int
        public init(directory: String, policy: Journal.FsyncPolicy = Defaults.fsync, segmentBytes: Int = Defaults.segmentBytes) {
            self.directory = directory
            self.policy = policy
            self.segmentBytes = segmentBytes
        }
    }

    public let configuration: Configuration
    public let shell: NodeShell<DispatcherEvent>

    /// A dispatcher that runs (``FluxNode/run()``) until ``FluxNode/stop()`` or cancellation.
    public init(configuration: Configuration, context: Context = .shared, logger: Logger) throws {
        self.configuration = configuration
        self.shell = try NodeShell(threadName: "zflux-dispatcher") { control in
            if configuration.ha != nil {
                return try PairLoop(configuration: configuration, context: context, logger: logger, control: control)
            }
            return try DispatcherLoop(configuration: configuration, context: context, logger: logger, control: control)
        }
    }
}

/// What reaches a dispatcher's thread from elsewhere in its process: the leader election's news.
public enum DispatcherEvent: Sendable {
    /// This dispatcher won the lease at etcd revision `revision`: it may lead, in the epoch it names.
    case elected(revision: Int64)
    /// It holds the lease no more (it ran out on its clock, or was given up): it must stop leading.
    case leaseLost(String)
}

/// How a dispatcher of a pair ends when it stops leading: its process exits with
/// `Supervisor.steppedDownStatus`, to be started again as the standby.
public struct SteppedDown: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "stepped down: \(reason)" }
}
