import ArgumentParser
import Dispatcher
import Foundation
import Leadership
import Logging
import NodeSupport

/// `zflux failover`: hands leadership of a dispatcher pair to the standby on purpose.
///
/// It revokes the leader's lease in etcd. The leader's next keepalive finds the lease gone: it stops
/// acknowledging (a dispatch sent to it meanwhile is NACKed "not the leader", and clients send it
/// again) and its process exits, for the supervisor to start it again as the standby. The standby,
/// which holds every acknowledged action (sync replication), sees the key free and wins it.
struct FailoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "failover",
        abstract: "Hand leadership of a dispatcher pair ([ha]) to the standby, and wait until it leads.",
        discussion: """
            The leader's lease is revoked in etcd: the leader stops acknowledging within a third of the \
            lease and exits (its supervisor starts it again as the standby), and the standby wins the \
            lease and leads in a new epoch. Clients that know both dispatchers resend what was not \
            acknowledged and see no error. Prints who leads afterwards; exits 1 if nobody took over \
            within --timeout seconds.

            Example:
              zflux failover --run-dir .zflux
            """)

    @OptionGroup var runDir: RunDirOptions
    @Option(help: "Seconds to wait for the new leader (1…3600).") var timeout = 30

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be 1…3600 seconds") }
    }

    func run() async throws {
        let topology = try runDir.topology()
        guard let ha = topology.ha else {
            throw CLIError("this cluster has one dispatcher: failover needs a pair (cluster up --ha, or [ha] in the config)")
        }
        var logger = Logger(label: "zflux.failover")
        logger.logLevel = .warning
        let client = try EtcdClient(endpoints: ha.etcd, logger: logger)
        do {
            try await handOver(client, key: ha.key, members: ha.dispatchers.map(\.name))
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private func handOver(_ client: EtcdClient, key: String, members: [String]) async throws {
        guard let held = try await client.get(key).keyValue else { throw CLIError("nobody leads now (etcd holds no \(key)): nothing to hand over") }
        let before = LeaderRecord.decode(held.value)?.name ?? "?"
        guard let successor = members.first(where: { $0 != before }) else { throw CLIError("\(before) has no standby to hand over to") }
        // Only the successor may campaign for a while: the old leader, started again at once, waits.
        let hold = try await client.grantLease(ttlSeconds: Int64(max(10, timeout)))
        try await client.put(Handover.key(for: key), value: Array(successor.utf8), lease: hold)
        try await client.revoke(Lease(id: held.lease, ttlSeconds: 0))
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if let now = try await client.get(key).keyValue, now.createRevision > held.createRevision {
                let name = LeaderRecord.decode(now.value)?.name ?? "?"
                emitLine("\(name) leads now (epoch won at etcd revision \(now.createRevision)); \(before) led before")
                try? await client.revoke(hold)
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        try? await client.revoke(hold)
        printError("nobody took the lease over within \(timeout) s: is the standby running? (\(RootCommand.binaryName) status, RUN_DIR/logs)")
        throw ExitCode(1)
    }
}
