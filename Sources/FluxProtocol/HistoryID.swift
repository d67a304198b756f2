/// Which history the dispatcher serves: its journal's cluster id (24 random bits, made when the
/// journal is created and kept with it) and an epoch (40 bits: when the dispatcher opened the journal,
/// in milliseconds since 2024, and always past the journal's previous epoch). The dispatcher's
/// heartbeat carries it with the epoch's first seq ("since").
///
/// A store compares it with the history its state came from: another cluster id is a foreign
/// history, refused; an older epoch is a late message from a dispatcher that has since restarted,
/// ignored; a newer epoch whose first seq is at or below the store's version means the journal no
/// longer holds actions the store applied (restored from an older copy, or its tail lost under fsync
/// `none`), so the store rebuilds from the journal; any other newer epoch is simply followed.
public struct HistoryID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    static let epochBits: UInt64 = 40
    static let epochMask: UInt64 = (1 << epochBits) - 1
    /// 2024-01-01T00:00:00Z in milliseconds since the Unix epoch.
    static let epochOrigin: Int64 = 1_704_067_200_000

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(cluster: UInt32, epoch: UInt64) {
        rawValue = UInt64(cluster & 0xFF_FFFF) << HistoryID.epochBits | (epoch & HistoryID.epochMask)
    }

    public var cluster: UInt32 { UInt32(truncatingIfNeeded: rawValue >> HistoryID.epochBits) }
    public var epoch: UInt64 { rawValue & HistoryID.epochMask }

    /// A random cluster id for a new journal.
    public static func newCluster<G: RandomNumberGenerator>(using generator: inout G) -> UInt32 {
        UInt32.random(in: 1...0xFF_FFFF, using: &generator)
    }

    /// The epoch of a journal opened at `wallNanoseconds` whose previous epoch was `previous`: the time
    /// of opening, and always later than the previous one (even if the clock went back).
    public static func opening(cluster: UInt32, previousEpoch previous: UInt64, wallNanoseconds: Int64) -> HistoryID {
        let now = UInt64(max(0, wallNanoseconds / 1_000_000 - epochOrigin)) & epochMask
        return HistoryID(cluster: cluster, epoch: max(previous + 1, now))
    }

    /// The bit that marks an epoch won through etcd (``leading(cluster:revision:)``).
    static let leadershipBit: UInt64 = 1 << 39

    /// The history of a dispatcher that won leadership at etcd revision `revision`: epoch
    /// `2^39 | revision`. Epochs from ``opening(cluster:previousEpoch:wallNanoseconds:)`` count
    /// milliseconds since 2024 and stay below 2^39 until 2041, so a won epoch is newer than every
    /// opening before it, and two wins compare as their revisions.
    public static func leading(cluster: UInt32, revision: Int64) -> HistoryID {
        precondition(revision >= 1 && UInt64(revision) < leadershipBit, "an etcd revision is in 1..<2^39")
        return HistoryID(cluster: cluster, epoch: leadershipBit | UInt64(revision))
    }

    /// Whether the epoch was won through etcd (``leading(cluster:revision:)``) rather than taken from the clock.
    public var isLeadership: Bool { epoch & HistoryID.leadershipBit != 0 }

    public var description: String { String(cluster, radix: 16) + "/" + String(epoch) }

    /// An epoch as people read it: an epoch won through etcd as `r` and its revision, any other as is.
    public static func epochDescription(_ epoch: UInt64) -> String {
        epoch & leadershipBit != 0 ? "r\(epoch & ~leadershipBit)" : String(epoch)
    }
}
