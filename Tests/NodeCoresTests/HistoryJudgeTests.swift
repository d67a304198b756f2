import FluxCore
import Testing

@testable import NodeCores

@Suite("History judge: which dispatcher history a store follows")
struct HistoryJudgeTests {
    let first = HistoryID(cluster: 0xC1, epoch: 10)

    func stamped(_ seq: UInt64, _ history: HistoryID) -> Message {
        Message(topic: "counter", header: Header(kind: .action, seq: seq, history: history.rawValue))
    }

    /// A judge following `first`, with actions applied up to `version` from it.
    func following(at version: UInt64) -> HistoryJudge {
        var judge = HistoryJudge()
        #expect(judge.judge(first.rawValue, since: 1, head: version, version: 0) == .follow)
        if version > 0 { judge.applied(history: first.rawValue) }
        return judge
    }

    @Test("the first history heard is followed, and so is a dispatcher that stamps none")
    func firstHeard() {
        var judge = HistoryJudge()
        #expect(judge.judge(0, since: nil, head: nil, version: 0) == .follow)
        #expect(judge.history == nil, "no stamp, nothing followed yet")
        #expect(judge.judge(first.rawValue, since: nil, head: nil, version: 0) == .follow)
        #expect(judge.history == first)
        #expect(judge.judge(first.rawValue, since: nil, head: nil, version: 3) == .follow)
    }

    @Test("another cluster's journal is refused, with what to do; the history followed stays")
    func foreign() {
        var judge = following(at: 3)
        let ruling = judge.judge(HistoryID(cluster: 0xF0, epoch: 99).rawValue, since: 1, head: 9, version: 3)
        guard case .refuse(let reason) = ruling else {
            Issue.record("not refused: \(ruling)")
            return
        }
        #expect(reason.contains("another journal") && reason.contains("docs/OPERATIONS.md"))
        #expect(judge.refusedForeign && judge.history == first)
    }

    @Test("a late message of an older epoch is ignored; a newer epoch waits for its heartbeat")
    func olderAndUnplaced() {
        var judge = following(at: 3)
        #expect(judge.judge(HistoryID(cluster: 0xC1, epoch: 9).rawValue, since: 1, head: 2, version: 3) == .ignore)
        let newer = HistoryID(cluster: 0xC1, epoch: 11)
        #expect(judge.judge(newer.rawValue, since: nil, head: nil, version: 3) == .wait)
        #expect(judge.history == first, "not followed until placed")
    }

    @Test("a newer epoch starting at or below the version means the journal lost applied actions: rebuild")
    func epochBelowVersion() {
        var judge = following(at: 5)
        let restored = HistoryID(cluster: 0xC1, epoch: 77)
        let ruling = judge.judge(restored.rawValue, since: 4, head: 3, version: 5)
        guard case .rebuild(let head, let reason) = ruling else {
            Issue.record("no rebuild: \(ruling)")
            return
        }
        #expect(head == 3 && reason.contains("starts at seq 4") && judge.history == restored)
    }

    @Test("a newer epoch starting past the version is followed, after checking the journal's action at the version")
    func epochPastVersion() {
        var judge = following(at: 5)
        let next = HistoryID(cluster: 0xC1, epoch: 78)
        #expect(judge.judge(next.rawValue, since: 6, head: 8, version: 5) == .newEpoch(head: 8, verify: true))
        #expect(judge.history == next && judge.replayStart(version: 5) == 5, "the replay starts at the action checked")
        #expect(judge.check([stamped(4, first)].map(\.header)) == nil && judge.verifying != nil, "not in this batch: still to check")
        #expect(judge.check([stamped(5, first), stamped(6, next)].map(\.header)) == nil, "the action the store applied")
        #expect(judge.verifying == nil && judge.replayStart(version: 5) == 6)
        var empty = following(at: 0)
        #expect(empty.judge(next.rawValue, since: 1, head: 8, version: 0) == .newEpoch(head: 8, verify: false), "nothing applied to check")
    }

    @Test("log matching: another action at the version, or a journal ending before it, means rebuild")
    func logMatching() {
        var judge = following(at: 5)
        let next = HistoryID(cluster: 0xC1, epoch: 90)
        _ = judge.judge(next.rawValue, since: 8, head: 7, version: 5)
        let cut = HistoryID(cluster: 0xC1, epoch: 80)
        #expect(judge.checkEnd(head: 5) == nil && judge.checkEnd(head: 4)?.contains("ends at seq 4") == true)
        #expect(judge.check([stamped(5, cut)].map(\.header))?.contains("is not the one this store applied") == true)
        #expect(judge.verifying == nil)
    }

    @Test("a snapshot is checked against the journal from its version; one without a history only by the head")
    func restoredSnapshots() {
        var judge = HistoryJudge()
        judge.restored(version: 10, history: first.rawValue)
        #expect(judge.history == first && judge.lastAppliedHistory == first.rawValue && judge.replayStart(version: 10) == 10)
        #expect(!judge.journal(endingAt: 3, stamped: first.rawValue, isBehind: 10), "both stamped: the epochs decide")
        var old = HistoryJudge()
        old.restored(version: 10, history: 0)
        #expect(old.history == nil && old.replayStart(version: 10) == 11)
        #expect(old.journal(endingAt: 3, stamped: first.rawValue, isBehind: 10) && !old.journal(endingAt: 10, stamped: 0, isBehind: 10))
        old.reset()
        #expect(!old.journal(endingAt: 3, stamped: first.rawValue, isBehind: 10) && old.lastAppliedHistory == 0)
    }
}
