import FluxCore
import Foundation
import NodeSupport

extension Topology {
    /// This topology with a dispatcher pair on this host (`cluster up --ha`): `d1` keeps the single
    /// dispatcher's endpoints, `d2` gets its own (ipc files beside them, or the same ports plus
    /// `portOffset` over tcp), each binds a replication endpoint and keeps its journal in a directory of
    /// its own under the cluster's. Clients, stores and views connect to both (``HighAvailability/joined``).
    ///
    /// Under `[security]` over tcp each member gets a key pair of its own in `keyDirectory` (made there
    /// once, kept for the next run): the replication endpoints admit only the other member's.
    public func withLocalPair(
        etcd: [String], clusterName: String, leaseMilliseconds: Int = Defaults.leaseMilliseconds, replication: String = Defaults.replication,
        portOffset: Int = 100,
        keyDirectory: String? = nil
    ) throws -> Topology {
        guard ha == nil else { return self }
        let single = dispatcher
        func moved(_ endpoint: String, _ suffix: String, offset: Int) -> String {
            if endpoint.hasPrefix("ipc://") { return endpoint + suffix }
            guard let colon = endpoint.lastIndex(of: ":"), let port = Int(endpoint[endpoint.index(after: colon)...]) else { return endpoint + suffix }
            return "\(endpoint[...colon])\(port + offset)"
        }
        func memberKey(_ name: String) throws -> (file: String, publicKey: String)? {
            guard security != nil, single.intake.hasPrefix("tcp://") else { return nil }
            guard let keyDirectory else { throw ClusterError("a pair under [security] needs a directory for its members' keys") }
            let file = keyDirectory + "/" + name + ".key"
            if !FileManager.default.fileExists(atPath: file) { _ = try KeyPair.generate(name: name, directory: keyDirectory) }
            return (file, try KeyPair.load(file).publicKey)
        }
        func member(_ name: String, offset: Int) throws -> HighAvailability.Member {
            var endpoints = DispatcherEndpoints(
                intake: moved(single.intake, offset == 0 ? "" : "-\(name)", offset: offset),
                actions: moved(single.actions, offset == 0 ? "" : "-\(name)", offset: offset),
                replay: moved(single.replay, offset == 0 ? "" : "-\(name)", offset: offset))
            endpoints.listen = single.listen
            let journal = Settings.Journal.directory.value(durability?.journalDirectory) + "/" + name
            // Replication: next to the intake, on ports past both dispatchers' three each.
            let key = try memberKey(name)
            return HighAvailability.Member(
                name: name, endpoints: endpoints, replication: moved(single.intake, "-\(name)-replication", offset: 2 * portOffset + offset),
                journalDirectory: journal, keyFile: key?.file, publicKey: key?.publicKey)
        }
        var copy = self
        let pair = HighAvailability(
            etcd: etcd, leaseMilliseconds: leaseMilliseconds, replication: replication, key: ClusterConfig.leaderKey(cluster: clusterName),
            dispatchers: [try member("d1", offset: 0), try member("d2", offset: portOffset)])
        var seen = Set<String>()
        for endpoint in pair.dispatchers.flatMap({ [$0.endpoints.intake, $0.endpoints.actions, $0.endpoints.replay, $0.replication] }) {
            guard seen.insert(endpoint).inserted else { throw ClusterError("two dispatchers of the pair would listen on \(endpoint)") }
        }
        copy.ha = pair
        var joined = pair.joined
        joined.listen = single.listen
        copy.dispatcher = joined
        return copy
    }
}
