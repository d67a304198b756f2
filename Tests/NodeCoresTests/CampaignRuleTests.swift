import FluxCore
import NodeCores
import Testing

private typealias F = CoreFixtures

/// Whether a pair member may campaign is one rule (``CampaignRule``), asked by the real pair member's
/// election and by the simulator's members: it was the pair's shell's alone, and the simulator's
/// members campaigned whatever they held.
@Suite("A pair member campaigns only when it would lead with every acknowledged action")
struct CampaignRuleTests {
    static let lease: UInt64 = 3_000

    static func member(
        holdsCommitted: Bool = true, inSync: Bool = false, repairPending: Bool = false, head: UInt64 = 10,
        replication: DispatcherRules.Replication = .sync, emptyAsking: UInt64 = 0
    ) -> CampaignRule.Member {
        CampaignRule.Member(
            holdsCommitted: holdsCommitted, inSync: inSync, repairPending: repairPending, head: head, replication: replication,
            emptyAskingMilliseconds: emptyAsking)
    }

    static func verdict(_ member: CampaignRule.Member, _ lastLeader: CampaignRule.LastLeader?, read: Bool = true) -> CampaignRule.Verdict {
        CampaignRule.verdict(member, lastLeader: lastLeader, read: read, leaseMilliseconds: lease)
    }

    @Test(
        "what the member knows of itself decides first: lacking what was committed, or repaired, it waits; in sync it campaigns; else etcd is asked"
    )
    func itself() {
        #expect(Self.verdict(Self.member(holdsCommitted: false, inSync: true), .neverLed) == .lacksCommitted)
        #expect(Self.verdict(Self.member(holdsCommitted: false, replication: .async), .neverLed) == .campaign, "async lags by design")
        #expect(Self.verdict(Self.member(inSync: true, repairPending: true), .neverLed) == .repairPending)
        #expect(Self.verdict(Self.member(inSync: true, head: 0), .head(50)) == .campaign)
        #expect(Self.verdict(Self.member(), nil, read: false) == .askLastLeader)
        #expect(Self.verdict(Self.member(), nil) == .lastLeaderUnknown, "etcd silent")
        #expect(Self.verdict(Self.member(), .unreadable) == .lastLeaderUnknown)
    }

    @Test(
        "a journal that ends before where the last leader began lacks acknowledged actions: under sync it waits; under async only an empty one does"
    )
    func behindLastLeader() {
        #expect(Self.verdict(Self.member(head: 9), .head(10)) == .behindLastLeader(10))
        #expect(Self.verdict(Self.member(head: 10), .head(10)) == .campaign)
        #expect(Self.verdict(Self.member(head: 9, replication: .async), .head(10)) == .campaign)
        #expect(Self.verdict(Self.member(head: 0, replication: .async), .head(10)) == .behindLastLeader(10))
    }

    @Test("in a pair that has not led, a member holding records (a single dispatcher's journal) campaigns at once; an empty one after a lease")
    func newPair() {
        #expect(Self.verdict(Self.member(head: 40), .neverLed) == .campaign)
        #expect(Self.verdict(Self.member(head: 0, emptyAsking: 0), .neverLed) == .emptyWaits)
        #expect(Self.verdict(Self.member(head: 0, emptyAsking: Self.lease - 1), .neverLed) == .emptyWaits)
        #expect(Self.verdict(Self.member(head: 0, emptyAsking: Self.lease), .neverLed) == .campaign)
    }

    @Test("the standby core says what the rule needs: it holds what was committed, and is in sync once it holds where its leader began")
    func fromTheStandbyCore() {
        let leading = HistoryID.leading(cluster: 0xC1, revision: 7)
        let core = StandbyCore(lastSeq: 3, lastStamp: leading.rawValue, newestEpoch: leading.epoch, committedHeard: 5, now: F.at(0), logger: F.logger)
        #expect(!core.holdsWhatWasCommitted && !core.isInSync)
        #expect(Self.verdict(core.campaigner(repairPending: false, head: 3), .head(3)) == .lacksCommitted)
        let fresh = StandbyCore(lastSeq: 3, lastStamp: leading.rawValue, newestEpoch: leading.epoch, now: F.at(0), logger: F.logger)
        #expect(fresh.holdsWhatWasCommitted && !fresh.isInSync, "it follows no leader yet")
        #expect(Self.verdict(fresh.campaigner(repairPending: false, head: 3), .head(5)) == .behindLastLeader(5))
    }
}
