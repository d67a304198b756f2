import Foundation
import ZeroMQ

extension Socket {
    /// Binds, as a CURVE server when `security` holds a server key and the endpoint is tcp.
    public func bindSecurely(_ endpoint: String, _ security: Security.Settings?) throws {
        if endpoint.hasPrefix("tcp://"), let server = security?.server {
            try makeCurveServer(secretKey: server.secretKey)
        }
        try bind(endpoint)
    }

    /// Connects, as a CURVE client when `security` is set and the endpoint is tcp.
    public func connectSecurely(_ endpoint: String, _ security: Security.Settings?) throws {
        if endpoint.hasPrefix("tcp://"), let security {
            try makeCurveClient(serverKey: security.serverPublicKey, publicKey: security.client.publicKey, secretKey: security.client.secretKey)
        }
        try connect(endpoint)
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
