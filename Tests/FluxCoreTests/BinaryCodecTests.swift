import Examples
import Foundation
import Testing

@testable import FluxCore
@testable import FluxFormat

@Suite("The binary wire codec and changes-only state updates")
struct BinaryCodecTests {
    struct Everything: Codable, Equatable {
        enum Kind: Codable, Equatable { case plain, labelled(name: String, weight: Double), positional(Int, [String]) }
        var int = -42, big = Int64.min, unsigned = UInt64.max, small: UInt8 = 200, flag = true
        var double = 3.25, float: Float = -1.5, text = "héllo \u{1F600}", empty = ""
        var optional: String? = nil, present: Int? = 7, nested: [[Int]] = [[], [1, 2], [3]]
        var byName: [String: Int] = ["a": 1, "b": 2], byNumber: [Int: String] = [10: "ten", -1: "minus"]
        var kinds: [Kind] = [.plain, .labelled(name: "x", weight: 0.5), .positional(-3, ["p", "q"])]
        var date = Date(timeIntervalSince1970: 1_700_000_000.25), data = Data([0, 1, 255])
        var set: Set<String> = ["s"], nilInArray: [Int?] = [1, nil, 3]
    }

    let binary = BinaryPayloadCodec()

    @Test("every kind of Codable value round-trips, and WireCodec reads both codecs")
    func roundTrip() throws {
        let value = Everything()
        let bytes = try binary.encode(value)
        #expect(bytes.first == BinaryPayloadCodec.marker)
        #expect(try binary.decode(Everything.self, from: bytes) == value)
        #expect(try WireCodec().decode(Everything.self, from: bytes) == value)
        #expect(try WireCodec().decode(Everything.self, from: try JSONPayloadCodec().encode(value)) == value)
        var other = value
        other.optional = "now set"
        other.kinds = []
        #expect(try binary.decode(Everything.self, from: try binary.encode(other)) == other)
        #expect(try binary.decode(Int.self, from: try binary.encode(5)) == 5)
        #expect(try binary.decode([String].self, from: try binary.encode(["a"])) == ["a"])
    }

    @Test("every example app's actions and states round-trip; the first key names the action")
    func exampleApps() throws {
        let actions: [Todo.Action] = [.addTodo(title: "Milk"), .toggleTodo(index: 2), .clearCompleted, .loadTapped]
        for action in actions {
            let bytes = try binary.encode(action)
            #expect(try binary.decode(Todo.Action.self, from: bytes) == action)
            #expect(BinaryPayloadCodec.firstKey(of: bytes, is: ActionCoding.caseName(of: action)))
            #expect(!BinaryPayloadCodec.firstKey(of: bytes, is: "removeTodo"))
        }
        let state = Todo.State(todos: (0..<50).map { Todo.Item(title: "item \($0)", done: $0 % 2 == 0) }, loadError: "x")
        #expect(try binary.decode(Todo.State.self, from: try binary.encode(state)) == state)
    }

    @Test("a value of the wrong type, a missing field, or an out-of-range number is a DecodingError with its path")
    func typeErrors() throws {
        struct Small: Codable, Equatable { var a: UInt8; var b: String }
        struct Wide: Codable { var a: Int; var b: String }
        let wide = try binary.encode(Wide(a: 300, b: "x"))
        #expect {
            try binary.decode(Small.self, from: wide)
        } throws: { error in
            guard let error = error as? DecodingError, case .dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["a"]
        }
        struct OnlyA: Codable { var a: Int }
        #expect(throws: DecodingError.self) { try binary.decode(Wide.self, from: try binary.encode(OnlyA(a: 1))) }
        #expect(throws: DecodingError.self) { try binary.decode(String.self, from: try binary.encode(1)) }
        #expect(throws: DecodingError.self) { try binary.decode(Int.self, from: try binary.encode(1) + [0]) }
    }

    @Test("the decoders, generated and Codable, refuse what the transcoder refuses: a varint past 64 bits, a count past the length")
    func readersAgree() throws {
        struct Tally: Codable, Equatable { var count: UInt64 }
        let marker = BinaryPayloadCodec.marker
        // The largest UInt64 is nine bytes of 0xFF and then 0x01; a tenth byte of 0x02 would be bit 65.
        let widest = [marker, 0x04] + [UInt8](repeating: 0xFF, count: 9)
        #expect(try binary.decode(UInt64.self, from: widest + [0x01]) == .max)
        let wide = widest + [0x02]
        #expect(throws: GenericJSONError.self) { try GenericJSON.json(fromWire: wide) }
        for generated in [true, false] {
            #expect(throws: DecodingError.self) { try BinaryPayloadCodec(generated: generated).decode(UInt64.self, from: wide) }
        }
        // {"x": [nil], "count": 7}, whose array says it holds `entries` values in its one byte.
        func tally(_ entries: UInt8) -> [UInt8] {
            [marker, 0x09, 20, 0, 0, 0, 2, 0, 0, 0, 1] + Array("x".utf8) + [0x08, 1, 0, 0, 0, entries, 0, 0, 0, 0x00] + [5] + Array("count".utf8)
                + [0x04, 0x07]
        }
        #expect(try binary.decode(Tally.self, from: tally(1)) == Tally(count: 7))
        #expect(try GenericJSON.json(fromWire: tally(1)) == Array(#"{"count":7,"x":[null]}"#.utf8))
        #expect(throws: GenericJSONError.self) { try GenericJSON.json(fromWire: tally(5)) }
        #expect(throws: DecodingError.self) { try binary.decode(Tally.self, from: tally(5)) }
        // Generated code skips an unknown field with skipValue.
        var reader = WireReader(tally(5), offset: 1)
        _ = try reader.beginMap()
        _ = try reader.readKey()
        #expect(throws: DecodingError.self) { try reader.skipValue() }
    }

    @Test("every cut and every single-byte change of an encoded state is refused or decodes; none traps")
    func garbage() throws {
        let bytes = try binary.encode(Everything())
        for cut in 0..<bytes.count {
            #expect(throws: (any Error).self) { try binary.decode(Everything.self, from: Array(bytes.prefix(cut))) }
        }
        var decodedAnyway = 0
        for index in bytes.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var changed = bytes
                changed[index] ^= flip
                if (try? binary.decode(Everything.self, from: changed)) != nil { decodedAnyway += 1 }
            }
        }
        // Flipping bits inside a string or a number still gives a well-formed value; it must not be most.
        #expect(decodedAnyway < bytes.count * 3 / 2)
    }

    @Test("a tracked dictionary records exactly the keys set and removed; applying them reproduces the state")
    func changes() throws {
        var state = Ledger.State()
        _ = Ledger.reducer(&state, .open(count: 1000), ())
        var replica = try binary.decode(Ledger.State.self, from: try binary.encode(state))
        _ = state.takeChanges()
        _ = Ledger.reducer(&state, .post(account: 7, amount: 5, memo: "m"), ())
        _ = Ledger.reducer(&state, .close(account: 9), ())
        _ = Ledger.reducer(&state, .post(account: 5000, amount: 1, memo: ""), ())
        let changes = state.takeChanges()
        #expect(Set(changes.accounts.updated.map(\.key)) == [7, 5000])
        #expect(changes.accounts.removed == [9])
        #expect(state.takeChanges().accounts.isEmpty)
        replica.apply(try binary.decode(Ledger.State.Changes.self, from: try binary.encode(changes)))
        #expect(replica == state)
    }

    @Test("a store runtime publishes changes only; a view replica applies them in place")
    func runtimeAndReplica() throws {
        let app = Ledger.app()
        let runtime = app.makeRuntime { _, _, _ in }
        let replica = app.makeReplica()
        let open = try app.wirePayload(type: "open", argumentsJSON: Array(#"{"count":100}"#.utf8))
        #expect(try runtime.apply(app: "ledger", actionType: "open", payload: open, stamp: .unstamped, runEffects: false))
        try replica.load(try runtime.encodedState())
        runtime.forgetChanges()
        let post = try app.wirePayload(type: "post", argumentsJSON: Array(#"{"account":3,"amount":9,"memo":"hi"}"#.utf8))
        _ = try runtime.apply(app: "ledger", actionType: "post", payload: post, stamp: .unstamped, runEffects: false)
        let changes = try #require(try runtime.takeChanges())
        #expect(changes.count * 5 < (try runtime.encodedState()).count, "one account's change, not the 100 accounts")
        try replica.apply(changes: changes)
        let expected = try app.stateJSON(fromWire: try runtime.encodedState())
        let got = try app.stateJSON(fromWire: try replica.encodedState())
        let decode = { (bytes: [UInt8]) in try JSONDecoder().decode(Ledger.State.self, from: Data(bytes)) }
        #expect(try decode(expected) == decode(got))
        // A state that does not track changes says so, and its replica refuses a changes-only update.
        let todo = Todo.app().makeRuntime { _, _, _ in }
        #expect(try todo.takeChanges() == nil)
        #expect(throws: (any Error).self) { try Todo.app().makeReplica().apply(changes: changes) }
        // The wire action reads back as JSON for people.
        #expect(String(decoding: try app.actionJSON(fromWire: post), as: UTF8.self).contains(#""memo":"hi""#))
    }
}

extension BinaryCodecTests {
    class Base: Codable { var id = 1 }
    final class Derived: Base, @unchecked Sendable {
        var name = "n"
        enum Keys: String, CodingKey { case name }
        override init() { super.init() }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            name = try container.decode(String.self, forKey: .name)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(name, forKey: .name)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test("a subclass encoding its superclass under 'super' round-trips, though its keys have no such case")
    func superclass() throws {
        let value = Derived()
        value.id = 42
        value.name = "x"
        let decoded = try binary.decode(Derived.self, from: try binary.encode(value))
        #expect(decoded.id == 42 && decoded.name == "x")
    }
}

/// What the `Codable` decoder makes of every cut and every changed byte of one payload, pinned as a digest
/// of its outcomes taken before its keyed containers became structs (issue 56): a faster decoder must
/// read the same values and throw the same errors, with the same paths, on the same bytes.
extension BinaryCodecTests {
    enum Pinned {
        enum Op: Codable, Equatable { case add(amount: Int, memo: String?), clear, move(from: Int, to: Int), tag([String]) }
        struct Record: Codable, Equatable {
            var id: UInt64
            var name: String
            var ops: [Op]
            var score: Double
            var flags: [String: Bool]
            var parent: Int?
            var small: Int8
        }

        static let record = Record(
            id: 300, name: "née", ops: [.add(amount: -5, memo: nil), .add(amount: 7, memo: "m"), .clear, .move(from: 1, to: 2), .tag(["a", "b"])],
            score: 2.5, flags: ["on": true], parent: 9, small: -3)

        /// The payload cut at every length, with a byte after it, and each byte after the marker replaced by
        /// each of a few tags and lengths and by itself plus one.
        static func variants(of bytes: [UInt8]) -> [[UInt8]] {
            var variants = (0..<bytes.count).map { Array(bytes[0..<$0]) } + [bytes + [0]]
            for offset in 1..<bytes.count {
                for byte: UInt8 in [0x00, 0x01, 0x03, 0x07, 0x08, 0x09, 0x0A, 0x7F, 0x80, 0xFF, bytes[offset] &+ 1] where bytes[offset] != byte {
                    var changed = bytes
                    changed[offset] = byte
                    variants.append(changed)
                }
            }
            return variants
        }

        /// One line per variant: the value decoded (as sorted JSON), or the error with its path.
        static func outcome(_ bytes: [UInt8]) -> String {
            do {
                let record = try BinaryPayloadCodec(generated: false).decode(Record.self, from: bytes)
                return "value " + String(decoding: try JSONPayloadCodec().encode(record), as: UTF8.self)
            } catch let error as DecodingError {
                func context(_ c: DecodingError.Context) -> String {
                    "[\(c.codingPath.map(\.stringValue).joined(separator: "."))] \(c.debugDescription)"
                }
                switch error {
                case .typeMismatch(let type, let c): return "typeMismatch \(type) \(context(c))"
                case .valueNotFound(let type, let c): return "valueNotFound \(type) \(context(c))"
                case .keyNotFound(let key, let c): return "keyNotFound \(key.stringValue) \(context(c))"
                case .dataCorrupted(let c): return "dataCorrupted \(context(c))"
                @unknown default: return "\(error)"
                }
            } catch {
                return "other \(error)"
            }
        }

        /// FNV-1a, 64 bits, of the lines.
        static func digest(_ lines: [String]) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in lines.joined(separator: "\n").utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
            return hash
        }
    }

    @Test("the Codable decoder reads every cut and changed byte of a payload as it did before its containers became structs")
    func pinnedOutcomes() throws {
        let bytes = try BinaryPayloadCodec(generated: false).encode(Pinned.record)
        #expect(bytes.count == 260)
        let lines = Pinned.variants(of: bytes).map(Pinned.outcome)
        #expect(lines.count == 2976)
        #expect(lines.filter { $0.hasPrefix("value ") }.count == 482)
        // Taken with the decoder of 9bd92f8.
        #expect(String(Pinned.digest(lines), radix: 16) == "bd437f9dba28e50d")
    }
}
