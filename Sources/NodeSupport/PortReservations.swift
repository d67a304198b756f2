import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Holds the tcp ports a node will bind later, so that no other process takes them meanwhile: a
/// dispatcher pair's standby binds none of its endpoints while it follows (clients send only on
/// connections that are up, and so reach the leader alone), and another local user bound a standby's
/// intake port and answered `ACK seq=424242` to clients (issue 35).
///
/// Each port is held by a plain socket that is bound but never listens: a connection to it is refused,
/// as to a port nobody has, but no other socket can bind it (this one does not set SO_REUSEADDR, and
/// Linux lets a second socket bind a port only when every socket on it does), and the kernel never
/// hands it out as the local port of an outgoing connection. ``release()`` closes them just before the
/// node binds the ports with libzmq.
public final class PortReservations {
    private var held: [(endpoint: String, descriptor: Int32)] = []

    /// Holds the port of each `tcp://ADDRESS:PORT` endpoint in `endpoints` (ipc and inproc need none).
    /// ADDRESS is an IPv4 address or `*`; one that cannot be held is logged and left alone.
    public init(endpoints: [String], logger: Logger) {
        for endpoint in endpoints where endpoint.hasPrefix("tcp://") {
            let rest = endpoint.dropFirst("tcp://".count)
            guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]) else { continue }
            let host = String(rest[..<colon])
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            if host == "*" || host == "0.0.0.0" {
                address.sin_addr.s_addr = INADDR_ANY
            } else if inet_pton(AF_INET, host, &address.sin_addr) != 1 {
                logger.info("not holding the port of an endpoint that is not an IPv4 address", metadata: ["endpoint": "\(endpoint)"])
                continue
            }
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { continue }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound == 0 {
                held.append((endpoint, descriptor))
            } else {
                let reason = String(cString: strerror(errno))
                _ = close(descriptor)
                logger.error(
                    "cannot hold this node's port while it waits: another process has it, and this node cannot bind it when it must",
                    metadata: ["endpoint": "\(endpoint)", "error": "\(reason)"])
            }
        }
    }

    /// The endpoints whose ports are held now.
    public var endpoints: [String] { held.map(\.endpoint) }

    /// Lets the ports go, for the node to bind them at once.
    public func release() {
        for (_, descriptor) in held { _ = close(descriptor) }
        held.removeAll()
    }

    deinit { release() }
}
