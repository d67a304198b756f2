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
///
/// A port may not be holdable at first: without SO_REUSEADDR a bind fails while connections of the
/// node's last run linger in TIME_WAIT on it (a leader that just stepped down and starts again as the
/// standby), or while another process has it. ``retry(now:)`` tries those again, once a second.
/// Only IPv4 addresses and `*` are held; an endpoint named by a host name or an IPv6 address is not.
package final class PortReservations {
    private struct Pending {
        let endpoint: String
        let address: sockaddr_in
        let since: UInt64
        var warned: Bool
    }

    private var held: [(endpoint: String, descriptor: Int32)] = []
    private var pending: [Pending] = []
    private var lastTry: UInt64 = 0
    private let logger: Logger

    /// Holds the port of each `tcp://ADDRESS:PORT` endpoint in `endpoints` (ipc and inproc need none).
    package init(endpoints: [String], logger: Logger) {
        self.logger = logger
        let now = MonotonicClock.nowMilliseconds()
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
                logger.warning(
                    "not holding the port of an endpoint that is not an IPv4 address while this node waits", metadata: ["endpoint": "\(endpoint)"])
                continue
            }
            if let descriptor = Self.hold(address) {
                held.append((endpoint, descriptor))
            } else {
                let reason = String(cString: strerror(errno))
                pending.append(Pending(endpoint: endpoint, address: address, since: now, warned: false))
                logger.notice(
                    "this node's port is not held yet (connections of its last run in TIME_WAIT, or another process has it): trying again every second",
                    metadata: ["endpoint": "\(endpoint)", "error": "\(reason)"])
            }
        }
        lastTry = now
    }

    private static func hold(_ address: sockaddr_in) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = address
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound == 0 { return descriptor }
        let error = errno
        _ = close(descriptor)
        errno = error
        return nil
    }

    /// Tries the ports not held yet again, at most once a second; past two minutes (TIME_WAIT lasts one),
    /// says once that another process holds one.
    package func retry(now: UInt64 = MonotonicClock.nowMilliseconds()) {
        guard !pending.isEmpty, now >= lastTry + 1_000 else { return }
        lastTry = now
        var still: [Pending] = []
        for var entry in pending {
            if let descriptor = Self.hold(entry.address) {
                held.append((entry.endpoint, descriptor))
                logger.info("holding this node's port now", metadata: ["endpoint": "\(entry.endpoint)"])
                continue
            }
            if !entry.warned && now >= entry.since + 120_000 {
                entry.warned = true
                logger.error(
                    "another process has this node's port: it cannot bind it when it must lead",
                    metadata: ["endpoint": "\(entry.endpoint)", "error": "\(String(cString: strerror(errno)))"])
            }
            still.append(entry)
        }
        pending = still
    }

    /// The endpoints whose ports are held now.
    package var endpoints: [String] { held.map(\.endpoint) }

    /// Lets the ports go, for the node to bind them at once.
    package func release() {
        for (_, descriptor) in held { _ = close(descriptor) }
        held.removeAll()
        pending.removeAll()
    }

    deinit { release() }
}
