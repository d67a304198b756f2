import Logging
import Synchronization
import ZeroMQ

/// How many times keys were revoked in this process (by ``ZAPHandler``). A node's loop compares it each
/// turn and, when it moved, unbinds and binds again every tcp endpoint it listens on: libzmq closes the
/// connections accepted through an endpoint when it is unbound, and every peer that reconnects meets
/// the ZAP handler again, where a revoked key is refused.
///
/// A revocation wakes every loop that watches it, so it takes effect within one turn of the ZAP
/// handler's look at the file (a tenth of a second), not at the loop's next heartbeat or message.
public final class Revocations: Sendable {
    private let state = Mutex<(count: UInt64, wakes: [EventFD])>((0, []))
    public init() {}
    public var generation: UInt64 { state.withLock { $0.count } }

    func bump() {
        let wakes = state.withLock { state in
            state.count += 1
            return state.wakes
        }
        for wake in wakes { wake.signal() }
    }

    /// Signals `wake` on every later revocation: the eventfd a node's loop polls.
    /// (Once per eventfd: a loop built again for the same node, a pair member's, adds nothing.)
    func wakeOnRevocation(_ wake: EventFD) {
        state.withLock { state in
            if !state.wakes.contains(where: { $0 === wake }) { state.wakes.append(wake) }
        }
    }
}

/// A node loop's view of ``Revocations``: each turn it asks whether keys were revoked since it last
/// looked, and if so binds its tcp endpoints anew, which cuts every connection accepted through them.
public struct RevocationWatch {
    let revocations: Revocations?
    var seen: UInt64

    /// `wake`: the eventfd the loop polls (its ``NodeControl``'s), signalled when keys are revoked so
    /// that the loop turns and cuts at once.
    public init(_ revocations: Revocations?, wake: EventFD? = nil) {
        self.revocations = revocations
        seen = revocations?.generation ?? 0
        if let wake { revocations?.wakeOnRevocation(wake) }
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
