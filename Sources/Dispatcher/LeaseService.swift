import Logging

/// The service a dispatcher pair (`[ha]`) holds its lease in, and keeps its records of leading.
///
/// The Dispatcher module links no client of any such service: a single dispatcher carries no etcd
/// code, and the command line, which has etcd's client (the Leadership module), gives a pair member
/// one through ``DispatcherNode/HighAvailability/leases``. Another service with a lease, a revision
/// that grows with each win, and a put that succeeds only while the lease holds the key can stand in
/// for etcd. (Package access: the command line is its one implementer today; it becomes public API
/// once a package outside zflux implements it in a test.)
package protocol LeaseService: Sendable {
    /// The value stored under `key`; nil when there is none. Throws when the service cannot be asked.
    func value(at key: String) async throws -> [UInt8]?
    /// An election for `key`: while `mayCampaign` allows, it campaigns with `value` under a lease of
    /// `leaseMilliseconds`, keeps the lease alive while it holds the key, and tells `events` when this
    /// process wins or must stop leading. Nothing starts before ``LeaseElection/start()``.
    func election(
        key: String, value: [UInt8], leaseMilliseconds: Int, logger: Logger, mayCampaign: @escaping @Sendable () async -> Bool,
        events: @escaping @Sendable (LeaseEvent) -> Void
    ) -> any LeaseElection
    /// Closes the connection to the service.
    func shutdown() async throws
}

/// What an election tells the dispatcher.
package enum LeaseEvent: Sendable, Equatable {
    /// This process leads from now on; `revision` is the service's revision at which it won the key,
    /// which names the new epoch.
    case elected(revision: Int64)
    /// This process must stop leading now: its lease may be gone, or it gave the key up.
    case lost(reason: String)
}

/// One campaign for the leader's key (``LeaseService/election(key:value:leaseMilliseconds:logger:mayCampaign:events:)``).
package protocol LeaseElection: Sendable {
    func start()
    /// Gives the key up, if held, and stops campaigning.
    func stop() async
    /// Writes `value` under `key` only if this process still holds the leader's key under its lease;
    /// false when it does not.
    func putWhileLeading(_ key: String, value: [UInt8]) async throws -> Bool
    /// Whether the service says this process holds the leader's key under its lease now.
    func holdsKey() async throws -> Bool
}
