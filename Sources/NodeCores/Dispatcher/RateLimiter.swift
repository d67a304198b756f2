/// A token bucket per client: `perSecond` tokens a second, at most `perSecond` saved up. Bounded: past
/// `maxClients` buckets, the ones idle longest are forgotten (a forgotten client starts full again).
struct RateLimiter {
    let perSecond: Int
    let maxClients: Int
    private var buckets: [UInt64: (tokens: Double, at: UInt64)] = [:]

    init(perSecond: Int, maxClients: Int = 16_384) {
        precondition(maxClients > 0, "a limiter keeps a bucket")
        self.perSecond = max(perSecond, 1)
        self.maxClients = maxClients
    }

    /// Takes one token for `client`, if it has one. `now` is the caller's reading of a monotonic clock,
    /// in nanoseconds: the limiter reads no clock itself.
    mutating func allow(_ client: UInt64, now: UInt64) -> Bool {
        if buckets[client] == nil && buckets.count >= maxClients {
            for (key, _) in buckets.sorted(by: { $0.value.at < $1.value.at }).prefix(maxClients / 2) { buckets[key] = nil }
        }
        let rate = Double(perSecond)
        var bucket = buckets[client] ?? (rate, now)
        bucket.tokens = min(rate, bucket.tokens + Double(now &- bucket.at) / 1e9 * rate)
        bucket.at = now
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        assert(bucket.tokens >= 0 && bucket.tokens <= rate, "a bucket holds 0 to perSecond tokens")
        buckets[client] = bucket
        return allowed
    }

    /// A key for a client that sent no client id: its connection's routing id.
    static func key(_ peer: [UInt8]) -> UInt64 {
        peer.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
    }
}
