import Logging
import Synchronization
import ZeroMQ

/// How many times keys were revoked in this process (by ``ZAPHandler``). A node's loop compares it each
/// turn and, when it moved, unbinds and binds again every tcp endpoint it listens on: libzmq closes the
/// connections accepted through an endpoint when it is unbound, and every peer that reconnects meets
/// the ZAP handler again, where a revoked key is refused.
public final class Revocations: Sendable {
    private let count = Mutex<UInt64>(0)
    public init() {}
    public var generation: UInt64 { count.withLock { $0 } }
    func bump() { count.withLock { $0 += 1 } }
}

/// A node loop's view of ``Revocations``: each turn it asks whether keys were revoked since it last
/// looked, and if so binds its tcp endpoints anew, which cuts every connection accepted through them.
public struct RevocationWatch {
    let revocations: Revocations?
    var seen: UInt64

    public init(_ revocations: Revocations?) {
        self.revocations = revocations
        seen = revocations?.generation ?? 0
    }

    /// Binds every tcp endpoint of `bound` again when keys were revoked since the last call.
    public mutating func cutIfRevoked(_ bound: [(socket: Socket, endpoint: String)], logger: Logger, metadata: Logger.Metadata = [:]) {
        guard let revocations, revocations.generation != seen else { return }
        seen = revocations.generation
        for (socket, endpoint) in bound where endpoint.hasPrefix("tcp://") {
            do {
                try socket.rebind(endpoint)
            } catch {
                logger.error(
                    "could not bind again after a revocation", metadata: metadata.merging(["endpoint": "\(endpoint)", "error": "\(error)"]) { $1 })
            }
        }
        logger.notice("a key was revoked: every connection was cut; listed peers reconnect", metadata: metadata)
    }
}
