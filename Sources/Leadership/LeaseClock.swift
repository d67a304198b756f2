/// How long a leader may count on its lease, by its own monotonic clock, and when to renew it.
///
/// etcd counts a lease's time to live from when it handles a grant or a keepalive, which is after the
/// request was sent. So a lease renewed by a request sent at `t` lives at least until `t + ttl` on etcd's
/// side, whether or not the answer comes back, and whatever happens to etcd after. The only thing this
/// side cannot know is how fast etcd's clock runs compared with its own; ``margin`` covers that. The
/// lease counts as valid until ``validUntil``: the send time of the last renewal that was answered, plus
/// the time to live, minus the margin. Pure: the caller passes the times.
public struct LeaseClock: Sendable, Hashable {
    public typealias Instant = ContinuousClock.Instant

    /// The lease's time to live.
    public let ttl: Duration
    /// What is taken off the time to live for clock-rate drift and late wake-ups: 10% of it plus 100 ms.
    public let margin: Duration
    /// Until when the lease counts as valid (excluded).
    public private(set) var validUntil: Instant
    /// When the last answered renewal (or the grant) was sent.
    public private(set) var lastRenewalSent: Instant
    /// When the next keepalive is due: a third of the time to live after the last answered one, sooner
    /// after a failed attempt.
    public private(set) var nextRenewal: Instant

    /// The clock of a lease of `ttl` granted by a request sent at `grantSentAt`.
    public init(ttl: Duration, grantSentAt: Instant) {
        self.ttl = ttl
        margin = ttl / 10 + .milliseconds(100)
        validUntil = grantSentAt + ttl - margin
        lastRenewalSent = grantSentAt
        nextRenewal = grantSentAt + ttl / 3
    }

    /// The time between two keepalives: a third of the time to live, so that two can fail before the
    /// lease is given up.
    public var renewalInterval: Duration { ttl / 3 }

    /// How soon a failed keepalive is tried again.
    public var retryInterval: Duration { max(ttl / 10, .milliseconds(100)) }

    /// True while the lease still counts as valid at `now`.
    public func isValid(at now: Instant) -> Bool { now < validUntil }

    /// When something is next to be done: the next keepalive, or giving the lease up.
    public var nextWakeUp: Instant { min(nextRenewal, validUntil) }

    /// etcd answered a keepalive sent at `sentAt`: the lease was renewed for `renewedFor` (its time to live),
    /// counted from after `sentAt`.
    public mutating func renewed(sentAt: Instant, renewedFor: Duration) {
        validUntil = max(validUntil, sentAt + renewedFor - margin)
        lastRenewalSent = max(lastRenewalSent, sentAt)
        nextRenewal = lastRenewalSent + renewalInterval
    }

    /// A keepalive failed at `now` without an answer from etcd: try again after ``retryInterval``. The
    /// lease's validity does not move.
    public mutating func renewalFailed(at now: Instant) {
        nextRenewal = now + retryInterval
    }

    /// The time to live to ask etcd for, in whole seconds, for a lease of `leaseMs` milliseconds: rounded up,
    /// and at least 2 s, etcd's own minimum with its default election timeout (1.5 × 1 s, rounded up).
    public static func ttlSeconds(leaseMs: Int) -> Int64 {
        max(2, (Int64(max(leaseMs, 0)) + 999) / 1000)
    }
}
