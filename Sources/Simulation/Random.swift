import FluxCore

extension SplitMix64 {
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
