import Logging
import Synchronization

/// What a ``LeaderElection`` tells its owner.
public enum LeadershipEvent: Sendable, Hashable, CustomStringConvertible {
    /// This process leads from now on; `epoch` is the etcd revision at which it won the key, its fencing epoch.
    case elected(epoch: Int64)
    /// Another process holds the key: its value (the endpoints it names) and its epoch.
    case leaderIs(value: [UInt8], epoch: Int64)
    /// This process must stop acting as leader now: its lease may be gone, or it gave the key up.
    case lost(reason: String)

    /// For logs: the key's value as the text it is.
    public var description: String {
        switch self {
        case .elected(let epoch): "elected at revision \(epoch)"
        case .leaderIs(let value, let epoch): "\(String(decoding: value, as: UTF8.self)) leads, since revision \(epoch)"
        case .lost(let reason): "lost: \(reason)"
        }
    }
}

/// Campaigns for a lease-bound key in etcd, keeps the lease alive while it holds the key, and tells its
/// owner whether it leads.
///
/// It counts on its lease only as far as its own clock allows (``LeaseClock``): it sends a keepalive every
/// third of the time to live and, if none has been answered for the time to live less a margin, reports
/// ``LeadershipEvent/lost(reason:)`` then, before etcd can have let the lease go, whether or not etcd can be
/// reached. It then asks for a new lease and campaigns again. A follower reads the key every third of the
/// time to live and campaigns as soon as it is gone.
///
/// The owner's callback runs on the agent's task, one event at a time; it must return quickly. On a
/// handover the agent reports `.lost` before it gives the key up, so that the owner has stopped leading
/// before a successor can start.
public final class LeaderElection: Sendable {
    public let key: String
    public let value: [UInt8]
    /// The time to live asked of etcd, in seconds.
    public let ttlSeconds: Int64
    private let client: EtcdClient
    private let logger: Logger
    private let onEvent: @Sendable (LeadershipEvent) -> Void
    /// Asked before each campaign: false holds this agent back (another is to lead: a planned handover).
    private let mayCampaign: (@Sendable () async -> Bool)?
    private let state = Mutex(State())

    private struct State {
        /// The campaign loop while it runs.
        var loop: Task<Void, Never>?
        /// The last of the commands (resign, stop, abandon), which run one after another.
        var commands: Task<Void, Never>?
        var stopped = false
        /// The lease the loop holds, from its grant on.
        var lease: Lease?
        /// The epoch while this process leads.
        var epoch: Int64?
    }

    /// An agent for `key`, which it sets to `value` when it wins, with a lease of `leaseMs` milliseconds
    /// (rounded up to whole seconds, at least 2: ``LeaseClock/ttlSeconds(leaseMs:)``). ``start()`` starts it.
    public init(
        client: EtcdClient, key: String, value: [UInt8], leaseMs: Int, logger: Logger,
        mayCampaign: (@Sendable () async -> Bool)? = nil, onEvent: @escaping @Sendable (LeadershipEvent) -> Void
    ) {
        self.mayCampaign = mayCampaign
        self.client = client
        self.key = key
        self.value = value
        self.ttlSeconds = LeaseClock.ttlSeconds(leaseMs: leaseMs)
        self.logger = logger
        self.onEvent = onEvent
    }

    /// Writes `value` at `key` (without a lease) only while this agent leads and etcd still holds the
    /// leader's key under its lease; false otherwise (a successor's writes stay).
    package func putWhileLeading(_ key: String, value: [UInt8]) async throws -> Bool {
        guard let lease = state.withLock({ $0.epoch != nil ? $0.lease : nil }) else { return false }
        return try await client.put(key, value: value, whileHolding: self.key, lease: lease)
    }

    /// Whether etcd still holds the leader's key under this agent's lease, read now: what a leader asks
    /// when a peer claims a newer epoch, instead of believing the peer. False when this agent does not
    /// lead. Throws when etcd cannot be asked (then nothing is known, and the lease decides as ever).
    package func holdsKey() async throws -> Bool {
        guard let lease = state.withLock({ $0.epoch != nil ? $0.lease : nil }) else { return false }
        guard let holder = try await client.get(key).keyValue else { return false }
        return holder.lease == lease.id
    }

    /// Starts campaigning; does nothing if it runs already or was stopped.
    public func start() {
        state.withLock { state in
            guard !state.stopped, state.loop == nil else { return }
            state.loop = Task { await self.campaign(after: .zero) }
        }
    }

    /// A planned handover: reports `.lost` if leading, deletes the key if it is still held under this
    /// agent's lease, revokes the lease, and campaigns again only after `holdOff`.
    public func resign(holdOff: Duration) async {
        await serialized {
            guard let (lease, epoch) = await self.endLoop(stopping: false) else { return }
            if epoch != nil { self.report(.lost(reason: "resigned")) }
            if let lease {
                if epoch != nil { await self.attempt("resign") { try await self.client.resign(key: self.key, lease: lease) } }
                await self.attempt("revoke") { try await self.client.revoke(lease) }
            }
            self.state.withLock { state in
                if !state.stopped { state.loop = Task { await self.campaign(after: holdOff) } }
            }
        }
    }

    /// Ends the agent: reports `.lost` if leading, then revokes the lease, so that the key goes at once.
    public func stop() async {
        await serialized {
            guard let (lease, epoch) = await self.endLoop(stopping: true) else { return }
            if epoch != nil { self.report(.lost(reason: "stopped")) }
            if let lease { await self.attempt("revoke") { try await self.client.revoke(lease) } }
        }
    }

    /// Ends the agent as a crash would: reports `.lost` if leading but leaves the lease to expire, so a
    /// successor waits out the time to live.
    public func abandon() async {
        await serialized {
            guard let (_, epoch) = await self.endLoop(stopping: true) else { return }
            if epoch != nil { self.report(.lost(reason: "abandoned")) }
        }
    }

    /// Runs `body` after the commands called before it have finished.
    private func serialized(_ body: @escaping @Sendable () async -> Void) async {
        let command = state.withLock { state in
            let previous = state.commands
            let next = Task {
                await previous?.value
                await body()
            }
            state.commands = next
            return next
        }
        await command.value
    }

    /// Cancels the campaign loop and waits for it; returns the lease it held and the epoch if it led, or
    /// nil if the agent was stopped already.
    private func endLoop(stopping: Bool) async -> (lease: Lease?, epoch: Int64?)? {
        let loop: Task<Void, Never>?? = state.withLock { state in
            if state.stopped { return .none }
            state.stopped = stopping
            defer { state.loop = nil }
            return .some(state.loop)
        }
        guard let loop else { return nil }
        loop?.cancel()
        await loop?.value
        return state.withLock { state in
            defer {
                state.lease = nil
                state.epoch = nil
            }
            return (state.lease, state.epoch)
        }
    }

    private func report(_ event: LeadershipEvent) {
        logger.info("leadership", metadata: ["key": "\(key)", "event": "\(event)"])
        onEvent(event)
    }

    /// Runs an etcd call whose failure changes nothing for the agent, logging the failure.
    private func attempt<T>(_ what: String, _ call: () async throws -> T) async {
        do {
            _ = try await call()
        } catch {
            logger.debug("etcd call failed", metadata: ["key": "\(key)", "call": "\(what)", "error": "\(error)"])
        }
    }
}

// MARK: The campaign loop

extension LeaderElection {
    /// The time between two reads of the key by a follower, and between attempts after an error.
    private var pollInterval: Duration { .seconds(ttlSeconds) / 3 }

    /// Grants a lease, campaigns, then leads or follows; again and again until cancelled.
    private func campaign(after holdOff: Duration) async {
        if holdOff > .zero, !(await pause(holdOff)) { return }
        var reported: LeadershipEvent?
        var stale: [Lease] = []
        while !Task.isCancelled {
            // Leases given up while etcd did not answer: revoking them frees a key they still hold.
            for lease in stale { await attempt("revoke") { try await client.revoke(lease) } }
            stale = []
            if let mayCampaign, !(await mayCampaign()) {
                if !(await pause(pollInterval)) { return }
                continue
            }

            let sent = ContinuousClock.now
            let lease: Lease
            do {
                lease = try await client.grantLease(ttlSeconds: ttlSeconds)
            } catch {
                if Task.isCancelled { return }
                logger.warning("cannot get a lease", metadata: ["key": "\(key)", "error": "\(error)"])
                if !(await pause(pollInterval)) { return }
                continue
            }
            state.withLock { $0.lease = lease }
            let clock = LeaseClock(ttl: .seconds(lease.ttlSeconds), grantSentAt: sent)

            let outcome: Campaign?
            do {
                outcome = try await raced(until: clock.validUntil) { try await self.client.campaign(key: self.key, value: self.value, lease: lease) }
            } catch {
                if Task.isCancelled { return }
                logger.warning("campaign failed", metadata: ["key": "\(key)", "error": "\(error)"])
                outcome = nil
            }
            switch outcome {
            case .won(let epoch):
                state.withLock { $0.epoch = epoch }
                reported = nil
                report(.elected(epoch: epoch))
                guard let reason = await lead(lease, clock) else { return }
                state.withLock { state in
                    state.epoch = nil
                    state.lease = nil
                }
                report(.lost(reason: reason))
                stale.append(lease)
            case .held(let holder):
                state.withLock { $0.lease = nil }
                // This lease holds nothing; a campaign after the key has gone takes a new one.
                await attempt("revoke") { try await client.revoke(lease) }
                if !(await follow(holder, reported: &reported)) { return }
            case nil:
                state.withLock { $0.lease = nil }
                stale.append(lease)
                if !(await pause(pollInterval)) { return }
            }
        }
    }

    /// Keeps `lease` alive while leading; returns why leadership ended, or nil when cancelled.
    private func lead(_ lease: Lease, _ start: LeaseClock) async -> String? {
        var clock = start
        var failures = 0
        while true {
            let now = ContinuousClock.now
            guard clock.isValid(at: now) else {
                return "no keepalive answered since \(now - clock.lastRenewalSent) ago: the lease may expire in etcd"
            }
            if now < clock.nextRenewal {
                do {
                    try await Task.sleep(until: clock.nextWakeUp, clock: .continuous)
                } catch {
                    return nil
                }
                continue
            }
            let sent = ContinuousClock.now
            do {
                // Past `validUntil` the answer no longer matters: leadership is given up then, not later.
                if let ttl = try await raced(until: clock.validUntil, { try await self.client.keepAlive(lease) }) {
                    clock.renewed(sentAt: sent, renewedFor: .seconds(ttl))
                    failures = 0
                }
            } catch let error as EtcdError where error.code == .leaseNotFound {
                return "the lease is gone in etcd (revoked by a planned handover, zflux failover, or expired)"
            } catch {
                if Task.isCancelled { return nil }
                // The first failure is news; the retries until an answer or the deadline are not.
                failures += 1
                logger.log(
                    level: failures == 1 ? .warning : .debug, "keepalive failed",
                    metadata: ["key": "\(key)", "lease": "\(lease.id)", "failures": "\(failures)", "error": "\(error)"])
                clock.renewalFailed(at: .now)
            }
        }
    }

    /// Reads the key until it is gone, reporting each new holder; false when cancelled.
    private func follow(_ holder: KeyValue, reported: inout LeadershipEvent?) async -> Bool {
        var holder = holder
        while true {
            let event = LeadershipEvent.leaderIs(value: holder.value, epoch: holder.createRevision)
            if event != reported {
                reported = event
                report(event)
            }
            if !(await pause(pollInterval)) { return false }
            do {
                guard let current = try await client.get(key).keyValue else { return true }
                holder = current
            } catch {
                if Task.isCancelled { return false }
                logger.debug("cannot read the leader key", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }

    /// Waits `duration`; false when cancelled.
    private func pause(_ duration: Duration) async -> Bool {
        do {
            try await Task.sleep(for: duration)
            return true
        } catch {
            return false
        }
    }
}

/// The result of `operation`, or nil if `deadline` comes first (the operation is then cancelled).
func raced<T: Sendable>(until deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(until: deadline, clock: .continuous)
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}
