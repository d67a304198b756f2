import Leadership
import Testing

@Suite("a leader counts on its lease only as long as its own clock allows")
struct LeaseClockTests {
    let t0 = ContinuousClock.now

    @Test("a fresh lease: valid until the grant's send time plus the TTL less the margin; a keepalive due after a third")
    func fresh() {
        let clock = LeaseClock(ttl: .seconds(2), grantSentAt: t0)
        #expect(clock.margin == .milliseconds(300))
        #expect(clock.validUntil == t0 + .milliseconds(1700))
        #expect(clock.nextRenewal == t0 + .seconds(2) / 3)
        #expect(clock.nextWakeUp == clock.nextRenewal)
        #expect(clock.isValid(at: t0 + .milliseconds(1699)))
        #expect(!clock.isValid(at: t0 + .milliseconds(1700)))
    }

    @Test("an answered keepalive extends the lease from when it was sent, not from when the answer came")
    func renewal() {
        var clock = LeaseClock(ttl: .seconds(3), grantSentAt: t0)
        clock.renewed(sentAt: t0 + .seconds(1), renewedFor: .seconds(3))
        #expect(clock.validUntil == t0 + .seconds(4) - clock.margin)
        #expect(clock.lastRenewalSent == t0 + .seconds(1))
        #expect(clock.nextRenewal == t0 + .seconds(2))
    }

    @Test("failed keepalives are retried sooner, and move the deadline not at all; then the lease is given up")
    func failures() {
        var clock = LeaseClock(ttl: .seconds(2), grantSentAt: t0)
        clock.renewed(sentAt: t0 + .milliseconds(600), renewedFor: .seconds(2))
        let deadline = clock.validUntil
        #expect(deadline == t0 + .milliseconds(2300))
        var now = clock.nextRenewal
        while clock.isValid(at: now) {
            clock.renewalFailed(at: now)
            #expect(clock.nextRenewal == now + clock.retryInterval)
            #expect(clock.validUntil == deadline)
            now = clock.nextWakeUp
        }
        #expect(now == deadline)
        #expect(clock.retryInterval == .milliseconds(200))
    }

    @Test("an answer to an older keepalive, arriving late, shortens nothing")
    func lateAnswer() {
        var clock = LeaseClock(ttl: .seconds(6), grantSentAt: t0)
        clock.renewed(sentAt: t0 + .seconds(4), renewedFor: .seconds(6))
        clock.renewed(sentAt: t0 + .seconds(2), renewedFor: .seconds(6))
        #expect(clock.lastRenewalSent == t0 + .seconds(4))
        #expect(clock.validUntil == t0 + .seconds(10) - clock.margin)
        #expect(clock.nextRenewal == t0 + .seconds(6))
    }

    @Test("whatever the answers, the lease never counts past the last answered send time plus the TTL less the margin")
    func neverBeyondTTL() {
        var random = SplitMix(seed: 27)
        for _ in 0..<200 {
            let ttl = Duration.milliseconds(Int64(random.next(below: 10_000)) + 2000)
            var clock = LeaseClock(ttl: ttl, grantSentAt: t0)
            var now = t0
            for _ in 0..<50 {
                now = clock.nextWakeUp
                guard clock.isValid(at: now) else { break }
                let delay = Duration.milliseconds(Int64(random.next(below: 3000)))
                if random.next(below: 3) == 0 {
                    clock.renewalFailed(at: now + delay)
                } else {
                    clock.renewed(sentAt: now, renewedFor: ttl)
                }
                #expect(clock.validUntil <= clock.lastRenewalSent + ttl - clock.margin)
                #expect(clock.nextWakeUp <= clock.validUntil)
                #expect(clock.margin == ttl / 10 + .milliseconds(100))
            }
        }
    }

    @Test("lease_ms becomes whole seconds, rounded up, at least etcd's minimum of 2 s")
    func ttlSeconds() {
        #expect(LeaseClock.ttlSeconds(leaseMs: 0) == 2)
        #expect(LeaseClock.ttlSeconds(leaseMs: 1500) == 2)
        #expect(LeaseClock.ttlSeconds(leaseMs: 2000) == 2)
        #expect(LeaseClock.ttlSeconds(leaseMs: 2001) == 3)
        #expect(LeaseClock.ttlSeconds(leaseMs: 10_000) == 10)
    }
}

/// A small seeded generator, so that a failure can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next(below bound: UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return (z ^ (z >> 31)) % bound
    }
}
