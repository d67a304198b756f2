import Dispatcher
import Leadership
import Logging

/// etcd as a dispatcher pair's lease service: the Leadership module's client and election behind the
/// Dispatcher module's ``LeaseService``, so that only the command line links them.
struct EtcdLeases: LeaseService {
    let client: EtcdClient

    /// The `leases` a pair member's ``DispatcherNode/HighAvailability`` is given.
    static let connect: @Sendable ([String], Logger) throws -> any LeaseService = { endpoints, logger in
        EtcdLeases(client: try EtcdClient(endpoints: endpoints, logger: logger))
    }

    func value(at key: String) async throws -> [UInt8]? { try await client.get(key).keyValue?.value }

    func election(
        key: String, value: [UInt8], leaseMilliseconds: Int, logger: Logger, mayCampaign: @escaping @Sendable () async -> Bool,
        events: @escaping @Sendable (LeaseEvent) -> Void
    ) -> any LeaseElection {
        EtcdElection(
            election: LeaderElection(client: client, key: key, value: value, leaseMs: leaseMilliseconds, logger: logger, mayCampaign: mayCampaign) {
                switch $0 {
                case .elected(let revision): events(.elected(revision: revision))
                case .lost(let reason): events(.lost(reason: reason))
                case .leaderIs: break  // a standby learns its leader from the replication port, not from here
                }
            })
    }

    func shutdown() async throws { try await client.shutdown() }
}

struct EtcdElection: LeaseElection {
    let election: LeaderElection
    func start() { election.start() }
    func stop() async { await election.stop() }
    func putWhileLeading(_ key: String, value: [UInt8]) async throws -> Bool { try await election.putWhileLeading(key, value: value) }
    func holdsKey() async throws -> Bool { try await election.holdsKey() }
}
