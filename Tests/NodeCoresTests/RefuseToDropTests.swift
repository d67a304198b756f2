import FluxCore
import Logging
import NodeCores
import Testing

private typealias F = CoreFixtures

/// Refusing to drop what was acknowledged is the standby core's decision, taken by the interpreter the
/// pair member and the simulator share (it was the pair's shell's, and the simulator dropped anything).
@Suite("A standby refuses to drop what was acknowledged")
struct RefuseToDropTests {
    static let leading = HistoryID.leading(cluster: 0xC1, revision: 7)

    /// A standby whose journal ends at seq 8 (stamped `stamp`) after hearing that seq 5 was committed.
    static func standby(stamp: HistoryID = leading, replication: DispatcherRules.Replication = .sync) -> StandbyCore {
        var rules = StandbyCore.Rules()
        rules.replication = replication
        return StandbyCore(
            rules: rules, lastSeq: 8, lastStamp: stamp.rawValue, newestEpoch: stamp.epoch, committedHeard: 5, now: F.at(0), logger: F.logger)
    }

    @Test("under sync, nothing at or below the committed seq heard is dropped; past it, or under async, the cut is taken")
    func committed() {
        let core = Self.standby()
        #expect(core.refusalToDrop(after: 3, stampAfter: Self.leading.rawValue)?.contains("seq 5 was committed") == true)
        #expect(core.refusalToDrop(after: 5, stampAfter: Self.leading.rawValue) == nil)
        #expect(Self.standby(replication: .async).refusalToDrop(after: 3, stampAfter: Self.leading.rawValue) == nil)
    }

    @Test("records a single dispatcher journaled are never dropped: it acknowledged all it journaled")
    func singleDispatcher() {
        let single = HistoryID(cluster: 0xC1, epoch: 3)
        let core = Self.standby(stamp: single, replication: .async)
        #expect(core.refusalToDrop(after: 6, stampAfter: single.rawValue)?.contains("a single dispatcher journaled") == true)
    }

    @Test("the interpreter asks the core before a cut: a leader's mismatch below what was committed stops the member, and nothing is cut")
    func interpreterStops() throws {
        let core = Self.standby()
        let io = Journal()
        let interpreter = StandbyInterpreter(core: core, io: io, logger: F.logger)
        try interpreter.carryOut()  // the hello
        // The leader matched the standby's log through seq 3 only.
        core.received(
            Message(header: Header(kind: .replicaMismatch, seq: 8, ref: 4, history: Self.leading.rawValue)), now: F.at(1))
        #expect(throws: StandbyCore.RefusedToDrop.self) { try interpreter.carryOut() }
        #expect(io.cuts.isEmpty, "nothing was cut: \(io.cuts)")
    }

    /// A journal of 8 records, all stamped ``leading``, that counts its cuts.
    final class Journal: StandbyIO {
        var cuts: [UInt64] = []
        func time() -> NodeTime { F.at(1) }
        func sendToLeader(_ message: Message) {}
        func append(_ records: StampedRecords) throws -> StandbyAppend { .written }
        func sync(through seq: UInt64) throws -> Bool { true }
        func firstSeqOfRun(endingAt seq: UInt64) throws -> UInt64 { 1 }
        func stamp(at seq: UInt64) throws -> UInt64? { (1...8).contains(seq) ? RefuseToDropTests.leading.rawValue : nil }
        func truncate(after seq: UInt64) throws -> (lastSeq: UInt64, lastStamp: UInt64) {
            cuts.append(seq)
            return (seq, RefuseToDropTests.leading.rawValue)
        }
        func adopt(cluster: UInt32, clientScope: ClientScope) throws {}
        func reconnect() throws {}
        func keepQuarantine(_ entries: [Quarantine]) throws {}
    }
}
