import Examples
import Foundation
import Testing

@testable import FluxCore
@testable import FluxFormat

/// The intake's check of a binary payload's structure, in place (issue 36): what it calls well formed
/// is exactly one value that a reader can walk to its end.
@Suite("A binary payload's structure, checked in place")
struct BinaryStructureTests {
    /// Values of every tag, nested, as the codec writes them.
    static func sample(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch depth > 3 ? Int(random.next() % 4) : Int(random.next() % 6) {
        case 0: .null
        case 1: .bool(random.next() % 2 == 0)
        case 2: .number(Double(Int64(bitPattern: random.next()) >> Int(random.next() % 64)) / (random.next() % 2 == 0 ? 1 : 8))
        case 3: .string(["", "a", "é😀", String(repeating: "x", count: 200)][Int(random.next() % 4)])
        case 4: .array((0..<random.next() % 4).map { _ in sample(&random, depth: depth + 1) })
        default:
            .object(
                Dictionary((0..<random.next() % 4).map { i in ("k\(i)", sample(&random, depth: depth + 1)) }, uniquingKeysWith: { a, _ in a }))
        }
    }

    @Test("every encoded value is well formed, and none of its proper prefixes is (500 generated values)")
    func encodedValues() throws {
        var random = SplitMix64(seed: 36)
        for _ in 0..<500 {
            let bytes = try BinaryPayloadCodec(generated: false).encode(Self.sample(&random))
            #expect(BinaryPayloadCodec.isWellFormed(bytes), "\(bytes)")
            for length in 0..<bytes.count where BinaryPayloadCodec.isWellFormed(Array(bytes.prefix(length))) {
                Issue.record("a prefix of \(length) of \(bytes.count) bytes is called well formed: \(bytes)")
                break
            }
            #expect(!BinaryPayloadCodec.isWellFormed(bytes + [0]), "a byte after the value")
        }
    }

    @Test(
        "what does not hold together is refused: a bad tag, a varint that never ends, a string that is not UTF-8, a count or length that lies, nesting past the limit"
    )
    func malformed() throws {
        let good = try BinaryPayloadCodec(generated: false).encode(["addTapped": ["amount": 5]])
        #expect(BinaryPayloadCodec.isWellFormed(good))
        var badTag = good
        badTag[1] = 0x0A
        var lyingCount = good
        lyingCount[6] = 2
        var lyingLength = good
        lyingLength[2] &+= 1
        let cases: [[UInt8]] = [
            [], [0x7B], [BinaryPayloadCodec.marker], badTag, lyingCount, lyingLength,
            [BinaryPayloadCodec.marker, 0x03] + [UInt8](repeating: 0xFF, count: 11),
            [BinaryPayloadCodec.marker, 0x07, 2, 0xC3, 0x28],
            [BinaryPayloadCodec.marker, 0x07, 3, 0xED, 0xA0, 0x80],  // a surrogate
            [BinaryPayloadCodec.marker, 0x05, 0, 0, 0],
            [BinaryPayloadCodec.marker] + Array(repeating: [0x08, 0xFF, 0xFF, 0xFF, 0x7F, 1, 0, 0, 0], count: 70).flatMap { $0 },
        ]
        for bytes in cases { #expect(!BinaryPayloadCodec.isWellFormed(bytes), "\(bytes)") }
        // Nested to the limit is fine; one deeper is not.
        func nested(_ depth: Int) throws -> [UInt8] {
            var value = JSONValue.null
            for _ in 0..<depth { value = .array([value]) }
            return try BinaryPayloadCodec(generated: false).encode(value)
        }
        #expect(BinaryPayloadCodec.isWellFormed(try nested(BinaryPayloadCodec.structureDepth)))
        #expect(!BinaryPayloadCodec.isWellFormed(try nested(BinaryPayloadCodec.structureDepth + 1)))
    }
}
