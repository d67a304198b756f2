/// Whether a member of a pair may campaign for the lease: the rule `PairLoop`'s election asks before
/// each campaign, and the simulator's members ask too (issue 54: no decision in a shell). A member
/// that would lead without actions a leader acknowledged waits; the shells only gather what it rests
/// on (the standby core's state, whether the journal was repaired, etcd's record of the last leader)
/// and act on the verdict.
package enum CampaignRule {
    /// What etcd holds of the last leader (`<lease key>/led`).
    package enum LastLeader: Equatable, Sendable {
        /// No record: the pair has not led yet.
        case neverLed
        /// The head the last leader began at; under `sync` moved up to what it committed since.
        case head(UInt64)
        /// A record that does not decode.
        case unreadable
    }

    /// What a member knows of itself when it asks.
    package struct Member: Equatable, Sendable {
        /// It holds durable all that the leaders it followed said they had committed
        /// (``StandbyCore/holdsWhatWasCommitted``).
        package var holdsCommitted: Bool
        /// It follows a leader, holding what that leader committed and the head it began at
        /// (``StandbyCore/isInSync``).
        package var inSync: Bool
        /// Opening its journal set a corrupt part aside, not yet held again from a leader.
        package var repairPending: Bool
        /// The last seq of its journal.
        package var head: UInt64
        /// How the pair replicates.
        package var replication: DispatcherRules.Replication
        /// How long it has been asking with an empty journal in a pair that has not led (0: not asked).
        package var emptyAskingMilliseconds: UInt64

        package init(
            holdsCommitted: Bool, inSync: Bool, repairPending: Bool, head: UInt64, replication: DispatcherRules.Replication,
            emptyAskingMilliseconds: UInt64 = 0
        ) {
            (self.holdsCommitted, self.inSync, self.repairPending, self.head) = (holdsCommitted, inSync, repairPending, head)
            (self.replication, self.emptyAskingMilliseconds) = (replication, emptyAskingMilliseconds)
        }
    }

    package enum Verdict: Equatable, Sendable {
        case campaign
        /// It lacks what a leader it followed said was committed.
        case lacksCommitted
        /// Its journal was repaired and lacks what it set aside.
        case repairPending
        /// Only etcd's record of the last leader can tell: ask it, then ask again with it.
        case askLastLeader
        /// An empty journal in a pair that has not led waits a lease: a member holding records (a single
        /// dispatcher's journal carried over) leads first.
        case emptyWaits
        /// Its journal ends before what the last leader began at (or committed): it lacks acknowledged
        /// actions, and waits until it has followed a leader.
        case behindLastLeader(UInt64)
        /// etcd's record does not decode, or etcd did not answer.
        case lastLeaderUnknown
    }

    /// The verdict for `member`, given etcd's record of the last leader (nil: not read yet, or etcd
    /// silent once `read` is true), for a lease of `leaseMilliseconds`.
    package static func verdict(_ member: Member, lastLeader: LastLeader?, read: Bool = false, leaseMilliseconds: UInt64) -> Verdict {
        // A standby that lacks what a leader has committed must not lead: it would lead without it.
        // (Under async the leader commits ahead of its standby by design: that loss is the mode's.)
        guard member.replication == .async || member.holdsCommitted else { return .lacksCommitted }
        // Repaired: the records it set aside may have been acknowledged, and only a leader that holds
        // them can give them back (etcd's record may lag the last ACKs by seconds).
        guard !member.repairPending else { return .repairPending }
        // In sync with its leader: it holds all that was acknowledged.
        if member.inSync { return .campaign }
        guard let lastLeader else { return read ? .lastLeaderUnknown : .askLastLeader }
        switch lastLeader {
        case .neverLed:
            // A new pair: a member with records gets a lease's head start over an empty one, which
            // would otherwise lead without them.
            guard member.head == 0 else { return .campaign }
            return member.emptyAskingMilliseconds >= leaseMilliseconds ? .campaign : .emptyWaits
        case .unreadable:
            return .lastLeaderUnknown
        case .head(let head):
            // Under async a standby lags by design and only an empty journal is held back.
            guard member.head < head, member.replication == .sync || member.head == 0 else { return .campaign }
            return .behindLastLeader(head)
        }
    }
}

extension StandbyCore {
    /// It holds durable all that the leaders it followed said they had committed (under `async`, as
    /// much as the mode promises: always).
    package var holdsWhatWasCommitted: Bool { rules.replication == .async || durableSeq >= committedHeard }

    /// It follows a leader and holds what that leader committed and the head it began at (a fresh
    /// leader has committed nothing yet, though earlier epochs acknowledged up to there).
    package var isInSync: Bool { leader != nil && durableSeq >= max(committedHeard, leaderBegan) }

    /// What the campaign rule needs of this member (``CampaignRule/Member``).
    package func campaigner(repairPending: Bool, head: UInt64, emptyAskingMilliseconds: UInt64 = 0) -> CampaignRule.Member {
        CampaignRule.Member(
            holdsCommitted: holdsWhatWasCommitted, inSync: isInSync, repairPending: repairPending, head: head, replication: rules.replication,
            emptyAskingMilliseconds: emptyAskingMilliseconds)
    }
}
