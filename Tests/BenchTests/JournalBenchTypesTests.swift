import FluxCore
import Testing

@testable import Bench

/// The journal bench's `WireTally` carries `@WireCodable`'s generated code written out (so that the
/// command line builds no swift-syntax): it must read and write exactly what `Codable` does.
@Suite("The journal bench's written-out wire conformances")
struct JournalBenchTypesTests {
    typealias Tally = JournalBenchmark.WireTally

    @Test("WireTally's state and action: the generated path writes Codable's bytes, and each reads the other's")
    func sameBytes() throws {
        let generated = BinaryPayloadCodec(generated: true)
        let codable = BinaryPayloadCodec(generated: false)
        for amount in [0, 1, -1, 300, Int.max, Int.min] {
            let action = Tally.Action.addTapped(amount: amount)
            let bytes = try codable.encode(action)
            #expect(try generated.encode(action) == bytes)
            #expect(try generated.decode(Tally.Action.self, from: bytes) == action)
            #expect(try codable.decode(Tally.Action.self, from: try generated.encode(action)) == action)
            let state = Tally.State(count: amount)
            #expect(try generated.encode(state) == (try codable.encode(state)))
            #expect(try generated.decode(Tally.State.self, from: try codable.encode(state)) == state)
        }
        // What the journal holds: the payload the bench's clients send, read by the generated path.
        #expect(try generated.decode(Tally.Action.self, from: JournalBenchmark.payload) == .addTapped(amount: 1))
    }

    @Test("a WireTally payload of another case, or cut short, is refused by the generated path as by Codable")
    func refusals() throws {
        let generated = BinaryPayloadCodec(generated: true)
        let codable = BinaryPayloadCodec(generated: false)
        let other = try codable.encode(["removeTapped": ["amount": 1]])
        #expect(throws: (any Error).self) { try generated.decode(Tally.Action.self, from: other) }
        #expect(throws: (any Error).self) { try codable.decode(Tally.Action.self, from: other) }
        let whole = try codable.encode(Tally.Action.addTapped(amount: 5))
        for cut in 1..<whole.count {
            #expect(throws: (any Error).self) { try generated.decode(Tally.Action.self, from: Array(whole.prefix(cut))) }
        }
        let missing = try codable.encode(["addTapped": [String: Int]()])
        #expect(throws: (any Error).self) { try generated.decode(Tally.Action.self, from: missing) }
    }
}
