/// SplitMix64: small, fast and fully determined by its seed, so a seed replays bit for bit.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }

    /// A value in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    mutating func micros(_ range: ClosedRange<UInt64>) -> UInt64 { UInt64.random(in: range, using: &self) }
}

/// FNV-1a over the trace, so two runs of one seed can be compared by one number.
struct TraceHash {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func mix(_ number: UInt64) {
        var n = number
        for _ in 0..<8 {
            value = (value ^ (n & 0xFF)) &* 0x0000_0100_0000_01B3
            n >>= 8
        }
    }

    mutating func mix(_ text: String) {
        for byte in text.utf8 { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    }
}
