/// Peers of a ROUTER that did not read an answer (a send to them found their queue full): their
/// requests are left alone for a while, so a peer that never reads cannot make a node build answer
/// after answer for it. A peer that merely stalled asks again after the pause.
public struct StalledPeers: Sendable {
    public static let pauseMilliseconds: UInt64 = 1000
    private var until: [[UInt8]: UInt64] = [:]

    public init() {}

    /// Whether `peer` is still being left alone at `now` (monotonic ms).
    public func contains(_ peer: [UInt8], now: UInt64) -> Bool { until[peer].map { now < $0 } ?? false }

    /// `peer` did not read: leave it alone from `now` on (and forget pauses that are over).
    public mutating func stall(_ peer: [UInt8], now: UInt64) {
        until = until.filter { $0.value > now }
        until[peer] = now + StalledPeers.pauseMilliseconds
        assert(contains(peer, now: now), "a stalled peer is left alone from now on")
    }
}
