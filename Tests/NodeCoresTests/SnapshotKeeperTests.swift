import FluxCore
import Testing

@testable import NodeCores

@Suite("Snapshot keeper: when to write, who waits")
struct SnapshotKeeperTests {
    @Test("a snapshot is due every N actions, or when stopping if the state moved; never when not kept")
    func cadence() {
        var keeper = SnapshotKeeper(writes: true, everyActions: 10, maxWaiting: 2)
        #expect(!keeper.isDue(version: 9, force: false) && keeper.isDue(version: 10, force: false))
        keeper.wrote(10)
        #expect(!keeper.isDue(version: 10, force: true), "nothing new to keep")
        #expect(keeper.isDue(version: 11, force: true) && !keeper.isDue(version: 19, force: false))
        keeper.reset()
        #expect(keeper.writtenVersion == 0 && keeper.isDue(version: 10, force: false))
        let off = SnapshotKeeper(writes: false, everyActions: 10, maxWaiting: 2)
        #expect(!off.isDue(version: 100, force: true))
    }

    @Test("views asking before catch-up wait once each, bounded, and are taken in order")
    func waiting() {
        var keeper = SnapshotKeeper(writes: false, everyActions: 10, maxWaiting: 2)
        for peer: [UInt8] in [[1], [1], [2], [3]] { keeper.wait(peer) }
        #expect(keeper.takeWaiting() == [[1], [2]])
        #expect(keeper.waiting.isEmpty)
    }
}
