import FluxFormat
import Foundation

/// What a node says about itself in a STATUS reply: one typed document for every role, read by
/// `zflux status`, `zflux top`, the metrics endpoint and readiness checks. On the wire it is JSON with
/// snake_case keys (`dispatcher_head`, `caught_up`…); fields a role does not have are absent.
public struct NodeStatus: Codable, Equatable, Sendable {
    public enum Role: String, Codable, Sendable { case dispatcher, store }

    public var role: Role
    public var pid: Int
    public var uptimeMs: UInt64
    /// Peers subscribed to the node's publisher (stores and `tail` for the dispatcher, views for a store).
    public var subscribers: Int
    public var rejected: UInt64

    // Dispatcher
    /// The newest sequenced action.
    public var head: UInt64?
    public var accepted: UInt64?
    /// Where the journal is and its fsync policy ("memory" without one).
    public var journal: String?
    public var journalBytes: Int?
    /// The oldest seq the journal holds (above 1 once retention or a compaction let segments go).
    package var journalFirstSeq: UInt64?
    /// What retention (`[journal] retain_mb`) last did: within its budget, or what held segments back.
    package var journalRetention: String?
    /// The journal's syncs since the dispatcher started, and the median, 99th percentile and longest of
    /// the newest 1,024, in microseconds, as the dispatcher timed them (absent until the first sync).
    package var journalSyncs: UInt64?
    package var journalSyncP50Us: UInt64?
    package var journalSyncP99Us: UInt64?
    package var journalSyncMaxUs: UInt64?
    /// False while the journal cannot be written (a full disk): dispatches are refused until it can.
    public var journalWritable: Bool?
    /// Actions quarantined because they crashed a store's reducer: every store skips them.
    /// A dispatcher lists all it keeps; a store, those it skipped since it started.
    public var quarantined: [Quarantine]?
    /// What the apps' `count` middleware counted (``Middleware/count(_:by:)``), by key.
    public var middlewareCounts: [MiddlewareCount]?

    // Store
    public var name: String?
    public var app: String?
    /// The seq of the last applied action.
    public var version: UInt64?
    /// The newest seq the dispatcher announced.
    public var dispatcherHead: UInt64?
    public var applied: UInt64?
    public var replayed: UInt64?
    public var gapsRepaired: UInt64?
    public var pending: Int?
    /// "connected", or "silent" once the dispatcher has said nothing past the timeout.
    public var dispatcher: String?
    public var reconnects: UInt64?
    /// The store's subscription has carried at least one message.
    public var subscribed: Bool?
    /// The store has caught up with the dispatcher since it started, and answers views.
    public var caughtUp: Bool?
    public var snapshotVersion: UInt64?
    /// SNAPSHOT-REQUESTs received, and those left unanswered: repeats from a peer within one drain, and
    /// requests of a peer that does not read its answers.
    public var snapshotRequests: UInt64?
    public var snapshotRequestsDropped: UInt64?
    /// A store whose snapshot was unusable when it started (a failed checksum, a state its app cannot
    /// read): 1 once it was set aside and the state rebuilt from the journal, else 0.
    package var snapshotsSetAside: UInt64?
    public var effectsRunning: Int?
    public var effectsUnanswered: Int?
    /// Of those, how many the dispatcher refused as unknown (a store newer than its dispatcher): kept
    /// and sent again, not dropped.
    public var effectsHeld: Int?
    /// Effects' actions the dispatcher refused for good since the store started (each logged).
    public var effectsRefused: UInt64?
    /// What keeps the node from doing its job, in words, when something does.
    public var problem: String?
    /// The history (journal cluster id / epoch) the node serves or its state comes from.
    public var history: String?
    /// A dispatcher of a pair (`[ha]`): whether it leads, the epoch it leads in, whether its standby
    /// follows, the newest seq the standby holds durable, and how many sequenced actions it lacks.
    public var leader: Bool?
    public var epoch: UInt64?
    public var standbyFollowing: Bool?
    public var standbyDurable: UInt64?
    public var replicationLag: UInt64?
    /// The oldest seq the standby's journal holds, and what its retention last did, as its ACKs say.
    package var standbyJournalFirstSeq: UInt64?
    package var standbyRetention: String?
    /// A dispatcher with schedules: how many are pending, the first ``maxSchedulesListed`` of them by
    /// due time, and how many fired (late: more than a second after their time) and were cancelled, over
    /// the journal's whole history.
    package var schedulesPending: Int?
    package var schedules: [PendingSchedule]?
    package var schedulesFired: UInt64?
    package var schedulesCancelled: UInt64?
    package var schedulesLate: UInt64?
    /// The most pending schedules a STATUS lists.
    package static let maxSchedulesListed = 100

    public init(role: Role, pid: Int, uptimeMs: UInt64, subscribers: Int, rejected: UInt64) {
        self.role = role
        self.pid = pid
        self.uptimeMs = uptimeMs
        self.subscribers = subscribers
        self.rejected = rejected
    }

    /// How far along the node is: the dispatcher's head, or the store's version.
    public var position: UInt64 { head ?? version ?? 0 }

    /// Ready to serve: the dispatcher as soon as it answers; a store once it has caught up with the
    /// dispatcher (it answers views) and its subscription carries messages (every action dispatched
    /// from now on reaches it live and runs its effects).
    public var isReady: Bool { role != .store || (subscribed == true && caughtUp == true) }

    /// Every numeric field by its wire name (flags as 0 or 1), for metrics.
    public var numericFields: [(name: String, value: Int64)] {
        let fields: [(String, Int64?)] = [
            ("pid", Int64(pid)), ("uptime_ms", Int64(uptimeMs)), ("subscribers", Int64(subscribers)), ("rejected", Int64(rejected)),
            ("head", head.map(Int64.init)), ("accepted", accepted.map(Int64.init)), ("journal_bytes", journalBytes.map(Int64.init)),
            ("journal_first_seq", journalFirstSeq.map(Int64.init)), ("journal_syncs", journalSyncs.map(Int64.init)),
            ("journal_sync_p50_us", journalSyncP50Us.map(Int64.init)), ("journal_sync_p99_us", journalSyncP99Us.map(Int64.init)),
            ("journal_sync_max_us", journalSyncMaxUs.map(Int64.init)),
            ("journal_writable", journalWritable.map { $0 ? 1 : 0 }), ("quarantined", quarantined.map { Int64($0.count) }),
            ("version", version.map(Int64.init)), ("dispatcher_head", dispatcherHead.map(Int64.init)),
            ("applied", applied.map(Int64.init)), ("replayed", replayed.map(Int64.init)),
            ("gaps_repaired", gapsRepaired.map(Int64.init)), ("pending", pending.map(Int64.init)),
            ("reconnects", reconnects.map(Int64.init)), ("subscribed", subscribed.map { $0 ? 1 : 0 }),
            ("caught_up", caughtUp.map { $0 ? 1 : 0 }), ("snapshot_version", snapshotVersion.map(Int64.init)),
            ("effects_running", effectsRunning.map(Int64.init)), ("effects_unanswered", effectsUnanswered.map(Int64.init)),
            ("effects_held", effectsHeld.map(Int64.init)), ("effects_refused", effectsRefused.map(Int64.init)),
            ("snapshot_requests", snapshotRequests.map(Int64.init)), ("snapshot_requests_dropped", snapshotRequestsDropped.map(Int64.init)),
            ("snapshots_set_aside", snapshotsSetAside.map(Int64.init)),
            ("leader", leader.map { $0 ? 1 : 0 }), ("standby_following", standbyFollowing.map { $0 ? 1 : 0 }),
            ("standby_durable", standbyDurable.map(Int64.init)), ("replication_lag", replicationLag.map(Int64.init)),
            ("standby_journal_first_seq", standbyJournalFirstSeq.map(Int64.init)),
            ("schedules_pending", schedulesPending.map(Int64.init)), ("schedules_fired", schedulesFired.map(Int64.init)),
            ("schedules_cancelled", schedulesCancelled.map(Int64.init)), ("schedules_late", schedulesLate.map(Int64.init)),
        ]
        return fields.compactMap { name, value in value.map { (name, $0) } }
    }

    /// The STATUS payload.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of plain values cannot fail.
        return Array((try? encoder.encode(self)) ?? Data())
    }

    public static func decode(_ payload: [UInt8]) throws -> NodeStatus {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(NodeStatus.self, from: Data(payload))
    }
}

/// An action every store skips because it crashed a store's reducer (``MessageKind/quarantineRequest``).
public struct Quarantine: Codable, Equatable, Sendable {
    public var seq: UInt64
    public var app: String
    public var actionType: String
    /// Why, as the store that asked said it.
    public var reason: String
    /// The seq it was sequenced again at by `zflux quarantine release`, once it was.
    public var releasedAs: UInt64?

    public init(seq: UInt64, app: String, actionType: String, reason: String, releasedAs: UInt64? = nil) {
        self.seq = seq
        self.app = app
        self.actionType = actionType
        self.reason = reason
        self.releasedAs = releasedAs
    }
}

/// A quarantine list as a leader sends it to its standby (REPLICA-QUARANTINE): the entries sorted by
/// seq in the binary codec, named by a digest of those bytes, so a standby's REPLICA-ACK can say which
/// list it holds with one number.
package enum QuarantineList {
    /// At most this many entries, as the dispatcher keeps (`DispatcherCore.maxQuarantined`).
    package static let maxEntries = 1024
    /// No list at all: what a standby holds before it has been sent one.
    package static let none: UInt64 = 0

    package static func encode(_ entries: [Quarantine]) -> [UInt8] {
        (try? BinaryPayloadCodec(generated: false).encode(entries.sorted { $0.seq < $1.seq })) ?? []
    }

    /// The entries of `bytes`, or nil when they are not a list of at most ``maxEntries``.
    package static func decode(_ bytes: [UInt8]) -> [Quarantine]? {
        guard let entries = try? BinaryPayloadCodec(generated: false).decode([Quarantine].self, from: bytes),
            entries.count <= maxEntries, Set(entries.map(\.seq)).count == entries.count
        else { return nil }
        return entries
    }

    /// FNV-1a over the bytes, never ``none``.
    package static func digest(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash == none ? 1 : hash
    }
}

/// One key counted by the dispatcher's `count` middleware.
public struct MiddlewareCount: Codable, Equatable, Sendable {
    public var key: String
    public var count: UInt64
    public init(key: String, count: UInt64) {
        self.key = key
        self.count = count
    }
}
