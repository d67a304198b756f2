import Leadership
import Testing

/// One at a time: these tests measure time, and share the machine's two cores with etcd.
@Suite("leader election agents against a real etcd", .serialized)
struct LeaderElectionTests {
    let key = "/zflux/test/leader"

    /// 3 s leases: on a loaded machine a 2 s one could lapse on its own, which is not what these tests are about.
    func agent(_ client: EtcdClient, _ value: String, leaseMs: Int = 3000, log: EventLog) -> LeaderElection {
        LeaderElection(client: client, key: key, value: Array(value.utf8), leaseMs: leaseMs, logger: testLogger) { log.record($0) }
    }

    @Test("two agents: exactly one is elected, the other learns who; when the leader crashes the other leads at a higher epoch")
    func crashHandover() async throws {
        try await withEtcd { _, client in
            let (aLog, bLog) = (EventLog(), EventLog())
            let a = agent(client, "a", log: aLog)
            let b = agent(client, "b", log: bLog)
            a.start()
            b.start()
            let (winner, winnerLog, loser, loserLog, winnerValue) =
                try await electedOne(a, aLog, b, bLog)
            let epoch = try #require(winnerLog.first { $0.isElected }?.event.epoch)
            _ = try await loserLog.wait(for: "the loser learns the leader") { $0 == .leaderIs(value: Array(winnerValue.utf8), epoch: epoch) }
            #expect(loserLog.first { $0.isElected } == nil)

            // A crash: the lease is left to expire, so the successor waits for it.
            let crashedAt = ContinuousClock.now
            await winner.abandon()
            #expect(winnerLog.all.last?.isLost == true)
            let elected = try await loserLog.wait(for: "the survivor is elected") { $0.isElected }
            let next = try #require(elected.event.epoch)
            #expect(next > epoch)
            // Not revoked: the key stayed until the lease ran out (3 s, renewed within the last second).
            #expect(elected.at - crashedAt > .milliseconds(1500), "\(elected.at - crashedAt)")
            #expect(try await client.get(key).keyValue?.createRevision == next)
            await loser.stop()
            #expect(loserLog.all.last == .lost(reason: "stopped"))
        }
    }

    /// When it reports lost is `LeaseClock`'s to decide, and LeaseClockTests checks that it never
    /// counts past the last answered keepalive's send time plus the TTL; this test checks that the agent
    /// acts on it once etcd is gone. (It used to time the report against the kill, which a busy machine
    /// stretched to 8.5 s.)
    @Test("the leader reports lost when etcd dies, and is elected only once")
    func etcdDies() async throws {
        try await withEtcd { etcd, client in
            let log = EventLog()
            let leader = agent(client, "a", leaseMs: 4000, log: log)
            leader.start()
            _ = try await log.wait(for: "elected") { $0.isElected }
            etcd.kill()
            _ = try await log.wait(for: "lost after etcd died") { $0.isLost }
            #expect(log.all.filter(\.isElected).count == 1)
            await leader.abandon()
        }
    }

    @Test("resign hands over at once: the leader reports lost, the other leads, and the resigner holds off")
    func plannedHandover() async throws {
        try await withEtcd { _, client in
            let (aLog, bLog) = (EventLog(), EventLog())
            let a = agent(client, "a", log: aLog)
            let b = agent(client, "b", log: bLog)
            a.start()
            b.start()
            let (winner, winnerLog, loser, loserLog, _) = try await electedOne(a, aLog, b, bLog)
            let epoch = try #require(winnerLog.first { $0.isElected }?.event.epoch)
            _ = try await loserLog.wait(for: "the loser learns the leader") { $0.epoch == epoch }

            await winner.resign(holdOff: .seconds(60))
            #expect(winnerLog.all.last == .lost(reason: "resigned"))
            let seen = winnerLog.count
            // The key went with the resignation, not when the lease would have expired.
            #expect(try await client.get(key).keyValue?.createRevision != epoch)
            let elected = try await loserLog.wait(for: "the other is elected") { $0.isElected }
            #expect(try #require(elected.event.epoch) > epoch)

            // stop revokes the lease, so the key goes at once.
            await loser.stop()
            #expect(loserLog.all.last == .lost(reason: "stopped"))
            #expect(try await client.get(key).keyValue == nil)
            // A check that nothing happens: an agent not holding off would have won the free key by now.
            try await Task.sleep(for: .seconds(2))
            #expect(winnerLog.first(from: seen) { $0.isElected } == nil)
            #expect(try await client.get(key).keyValue == nil)
            await winner.stop()
        }
    }

    /// Waits until one of the two agents is elected; returns it first.
    func electedOne(
        _ a: LeaderElection, _ aLog: EventLog, _ b: LeaderElection, _ bLog: EventLog
    ) async throws -> (LeaderElection, EventLog, LeaderElection, EventLog, String) {
        try await eventually("one agent elected") { aLog.first { $0.isElected } != nil || bLog.first { $0.isElected } != nil }
        return aLog.first { $0.isElected } != nil ? (a, aLog, b, bLog, "a") : (b, bLog, a, aLog, "b")
    }
}
