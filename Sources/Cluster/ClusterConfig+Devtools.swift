import Foundation
import NodeSupport

/// `[devtools]`: checked with the rest of the config, so `cluster check` refuses a section that
/// `zflux devtools` would refuse, before anyone runs it.
extension ClusterConfig {
    /// The devtools' settings, checked: a listen address that is HOST:PORT, and off loopback only with
    /// a token file (or a key of their own, whose authorized keys' tokens are needed then) (on another address anyone who reaches the port could dispatch otherwise, and a
    /// token made up at start would change with every restart of a service), and a connection cap of
    /// at least one. The token file's path is made absolute against the config's directory; whether it
    /// exists is left to `zflux devtools`, which may run on another host than the one checking.
    func devtoolsSettings() throws -> Topology.Devtools? {
        guard let devtools else { return nil }
        if let listen = devtools.listen {
            guard let (host, _) = ClusterConfig.splitListen(listen) else {
                throw error(
                    "listen '\(listen)' is not HOST:PORT with a port from 0 to 65535, like 127.0.0.1:8745", key: "listen", table: "devtools")
            }
            if !isLoopbackHost(host), devtools.tokenFile == nil, devtools.key == nil {
                throw error(
                    "listen '\(listen)' is not a loopback address: off loopback the devtools need token_file (a file whose first line "
                        + "is the token a dispatch must carry) or key (their own key pair, for the authorized keys' tokens), or keep loopback and reach the page through an SSH tunnel",
                    key: "listen", table: "devtools")
            }
        }
        if let tokenFile = devtools.tokenFile, tokenFile.isEmpty {
            throw error("token_file is empty: name a file whose first line is the token", key: "token_file", table: "devtools")
        }
        if let cap = devtools.maxConnections, !DevtoolsSection.connectionRange.contains(cap) {
            let range = DevtoolsSection.connectionRange
            throw error("max_connections must be between \(range.lowerBound) and \(range.upperBound)", key: "max_connections", table: "devtools")
        }
        var settings = Topology.Devtools(
            listen: devtools.listen, tokenFile: devtools.tokenFile.map { ClusterConfig.resolve($0, against: baseDirectory ?? ".") },
            maxConnections: devtools.maxConnections)
        if let key = devtools.key {
            // Key tokens are made for the keys the cluster admits: without [security] there are none.
            guard security != nil else {
                throw error(
                    "key needs a [security] section: the devtools take the tokens of the keys in its authorized_keys", key: "key",
                    table: "devtools")
            }
            let file = ClusterConfig.resolve(key, against: baseDirectory ?? ".")
            settings.key = file
            settings.publicKey = try ClusterConfig.publicKey(keyFile: file, whose: "the devtools'")
        }
        return settings
    }

    /// `HOST:PORT` (`[v6]:PORT` too, without its brackets) or nil: the form `--listen` takes.
    public static func splitListen(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]), (0...65535).contains(port)
        else { return nil }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }
}
