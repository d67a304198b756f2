import FluxCore
import Testing

@testable import NodeCores

@Suite("Pending actions: live actions held across a gap")
struct PendingActionsTests {
    func action(_ seq: UInt64, bytes: Int = 10, history: UInt64 = 0) -> Message {
        Message(topic: "counter", header: Header(kind: .action, seq: seq, history: history), payload: [UInt8](repeating: 0, count: bytes))
    }

    @Test("held within both bounds, taken in order, counted in bytes")
    func pending() {
        var pending = PendingActions(maxCount: 3, maxBytes: 25)
        pending.hold(action(3))
        pending.hold(action(3, bytes: 1))
        pending.hold(action(4))
        pending.hold(action(5))
        #expect(pending.count == 2 && pending.bytes == 20, "a seq held already stays; past the bytes the newest is dropped")
        #expect(pending.take(2) == nil && pending.take(3)?.payload.count == 10 && pending.bytes == 10)
        pending.hold(action(6, bytes: 5, history: 9))
        pending.hold(action(7, bytes: 5))
        pending.hold(action(8, bytes: 1))
        #expect(pending.count == 3, "past the count the newest is dropped")
        pending.drop(through: 4)
        #expect(pending.count == 2 && pending.bytes == 10)
        pending.retain { $0.header.history == 9 }
        #expect(pending.count == 1 && pending.bytes == 5)
        pending.removeAll()
        #expect(pending.isEmpty && pending.bytes == 0)
    }
}
