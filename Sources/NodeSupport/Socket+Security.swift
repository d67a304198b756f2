import Foundation
import ZeroMQ

extension Socket {
    /// Binds, as a CURVE server when `security` holds a server key and the endpoint is tcp. Its ZAP
    /// requests name `zapDomain` (``ZAPHandler`` admits per domain).
    public func bindSecurely(_ endpoint: String, _ security: Security.Settings?, zapDomain: String = "zflux") throws {
        if endpoint.hasPrefix("tcp://"), let server = security?.server {
            try makeCurveServer(secretKey: server.secretKey, domain: zapDomain)
        }
        try bind(endpoint)
    }

    /// Connects, as a CURVE client when `security` is set and the endpoint is tcp.
    ///
    /// `endpoint` may list several, comma-separated: the dispatchers of a cluster with a standby. The
    /// socket then connects to each and sends only on connections that are up (`ZMQ_IMMEDIATE`), so
    /// what it sends reaches the one that has bound them: the leader.
    public func connectSecurely(_ endpoint: String, _ security: Security.Settings?) throws {
        let endpoints = Topology.endpointList(endpoint)
        if endpoints.contains(where: { $0.hasPrefix("tcp://") }), let security {
            try makeCurveClient(serverKey: security.serverPublicKey, publicKey: security.client.publicKey, secretKey: security.client.secretKey)
        }
        if endpoints.count > 1 { try setOption(.immediate, Int32(1)) }
        for one in endpoints { try connect(one) }
    }

    /// Unbinds `endpoint` (closing every connection accepted through it) and binds it again, retrying
    /// while the old listener is still being torn down.
    public func rebind(_ endpoint: String) throws {
        try unbind(endpoint)
        var attempts = 0
        while true {
            do {
                try bind(endpoint)
                return
            } catch {
                attempts += 1
                guard attempts < 100 else { throw error }
                usleep(10_000)
            }
        }
    }
}
