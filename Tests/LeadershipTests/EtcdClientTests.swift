import Leadership
import Testing

@Suite("the etcd client against a real etcd")
struct EtcdClientTests {
    let key = "/zflux/test/leader"

    @Test("a lease is granted (never under etcd's 2 s minimum), kept alive, revoked, and then is gone")
    func leases() async throws {
        try await withEtcd { _, client in
            let lease = try await client.grantLease(ttlSeconds: 5)
            #expect(lease.ttlSeconds == 5)
            #expect(try await client.keepAlive(lease) == 5)
            let left = try #require(try await client.timeToLive(lease))
            #expect((1...5).contains(left))
            #expect(try await client.grantLease(ttlSeconds: 1).ttlSeconds == 2)

            try await client.revoke(lease)
            #expect(try await client.timeToLive(lease) == nil)
            let afterRevoke = await #expect(throws: EtcdError.self) { try await client.keepAlive(lease) }
            #expect(afterRevoke?.code == .leaseNotFound)
            let secondRevoke = await #expect(throws: EtcdError.self) { try await client.revoke(lease) }
            #expect(secondRevoke?.code == .leaseNotFound)
        }
    }

    @Test("keys: put, get with the store's revision, delete; bytes and an empty value survive base64")
    func keys() async throws {
        try await withEtcd { _, client in
            #expect(try await client.get(key).keyValue == nil)
            let revision = try await client.put(key, value: [0, 255, 10])
            let (found, readAt) = try await client.get(key)
            #expect(found?.value == [0, 255, 10])
            #expect(found?.createRevision == revision)
            #expect(found?.lease == 0)
            #expect(readAt == revision)
            try await client.put(key, value: [])
            #expect(try await client.get(key).keyValue?.value == [])
            #expect(try await client.delete(key))
            #expect(!(try await client.delete(key)))
        }
    }

    @Test("the first campaigner wins at the key's create revision; the second finds the first's value; a retry of the winner still wins")
    func campaign() async throws {
        try await withEtcd { _, client in
            let first = try await client.grantLease(ttlSeconds: 10)
            let second = try await client.grantLease(ttlSeconds: 10)
            let won = try await client.campaign(key: key, value: Array("tcp://a:5555".utf8), lease: first)
            guard case .won(let epoch) = won else {
                Issue.record("the first campaign did not win: \(won)")
                return
            }
            let held = try await client.get(key).keyValue
            #expect(held?.createRevision == epoch)
            #expect(held?.lease == first.id)

            let lost = try await client.campaign(key: key, value: Array("tcp://b:5555".utf8), lease: second)
            guard case .held(let holder) = lost else {
                Issue.record("the second campaign did not lose: \(lost)")
                return
            }
            #expect(holder.value == Array("tcp://a:5555".utf8))
            #expect(holder.createRevision == epoch)
            #expect(holder.lease == first.id)
            #expect(try await client.campaign(key: key, value: Array("tcp://a:5555".utf8), lease: first) == .won(revision: epoch))
        }
    }

    @Test("each new win is at a higher revision: the epoch only grows")
    func epochsGrow() async throws {
        try await withEtcd { _, client in
            var epochs: [Int64] = []
            for _ in 0..<4 {
                let lease = try await client.grantLease(ttlSeconds: 10)
                guard case .won(let epoch) = try await client.campaign(key: key, value: [1], lease: lease) else {
                    Issue.record("a campaign for a free key did not win")
                    return
                }
                epochs.append(epoch)
                try await client.revoke(lease)
                #expect(try await client.get(key).keyValue == nil)
            }
            #expect(epochs == epochs.sorted() && Set(epochs).count == epochs.count, "\(epochs)")
        }
    }

    @Test("resign deletes the key only under the holder's lease, and lets the other win")
    func resign() async throws {
        try await withEtcd { _, client in
            let first = try await client.grantLease(ttlSeconds: 10)
            let second = try await client.grantLease(ttlSeconds: 10)
            guard case .won(let epoch) = try await client.campaign(key: key, value: [1], lease: first) else {
                Issue.record("the first campaign did not win")
                return
            }
            #expect(try await client.campaign(key: key, value: [2], lease: second) != .won(revision: epoch))
            #expect(!(try await client.resign(key: key, lease: second)))
            #expect(try await client.get(key).keyValue?.lease == first.id)
            #expect(try await client.resign(key: key, lease: first))
            guard case .won(let next) = try await client.campaign(key: key, value: [2], lease: second) else {
                Issue.record("the second campaign did not win after the resignation")
                return
            }
            #expect(next > epoch)
        }
    }

    @Test("a lease nobody keeps alive expires, its key goes, and the other campaigner wins")
    func expiry() async throws {
        try await withEtcd { _, client in
            let first = try await client.grantLease(ttlSeconds: 2)
            let second = try await client.grantLease(ttlSeconds: 30)
            guard case .won(let epoch) = try await client.campaign(key: key, value: [1], lease: first) else {
                Issue.record("the first campaign did not win")
                return
            }
            var outcome = Campaign.won(revision: 0)
            try await eventually("the second campaigner wins once the first lease expired") {
                outcome = try await client.campaign(key: key, value: [2], lease: second)
                if case .won = outcome { return true }
                return false
            }
            guard case .won(let next) = outcome else {
                Issue.record("unexpected holder: \(outcome)")
                return
            }
            #expect(next > epoch)
            let expired = await #expect(throws: EtcdError.self) { try await client.keepAlive(first) }
            #expect(expired?.code == .leaseNotFound)
        }
    }

    @Test("a member that refuses connections is passed over; with none left, the error names every endpoint")
    func failover() async throws {
        try await withEtcd { etcd, _ in
            // Port 1 on loopback: nothing listens there, so the connection is refused at once.
            let dead = "http://127.0.0.1:1"
            let client = try EtcdClient(endpoints: [dead, etcd.endpoint], timeout: .seconds(5), logger: testLogger)
            #expect(try await client.put(key, value: [7]) > 0)
            #expect(try await client.get(key).keyValue?.value == [7])
            try await client.shutdown()

            let nowhere = try EtcdClient(endpoints: [dead, "http://127.0.0.1:2/"], timeout: .seconds(5), logger: testLogger)
            let error = await #expect(throws: EtcdError.self) { try await nowhere.get(key) }
            #expect(error?.code == .unreachable)
            #expect(error?.message.contains("127.0.0.1:1") == true && error?.message.contains("127.0.0.1:2") == true, "\(String(describing: error))")
            try await nowhere.shutdown()

            #expect(throws: EtcdError.self) { try EtcdClient(endpoints: [], logger: testLogger) }
        }
    }

    @Test("etcd's own refusal comes back with its HTTP status and message")
    func refusal() async throws {
        try await withEtcd { _, client in
            let error = await #expect(throws: EtcdError.self) { try await client.put(key, value: [1], lease: Lease(id: 12345, ttlSeconds: 2)) }
            #expect(error?.code == .leaseNotFound)
            #expect(error?.status == 404)
            let empty = await #expect(throws: EtcdError.self) { try await client.get("") }
            #expect(empty?.code == .rejected)
            #expect(empty?.status == 400)
            #expect(empty?.message.contains("key is not provided") == true, "\(String(describing: empty))")
        }
    }
}
