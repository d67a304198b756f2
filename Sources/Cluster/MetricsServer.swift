import FluxCore
import Foundation
import Logging
import Metrics
import NodeSupport
import Prometheus

/// A node's opt-in HTTP port (`metrics_port`): `/metrics` in Prometheus text format, `/ready` and
/// `/live` for Kubernetes probes. It reads the node's own status over the node's status endpoint when
/// asked, so the node's loop pays nothing for it.
///
/// - `/ready`: 200 once the node serves (a store: subscribed and caught up with the dispatcher), else 503.
/// - `/live`: 200 while the node answers a status request within a second, else 503 (a wedged loop).
/// - `/metrics`: every number of the node's status as a gauge `zflux_<role>_<field>`, and the running
///   totals (accepted, rejected, applied, …) as counters `zflux_<role>_<field>_total`, via swift-metrics.
public final class MetricsServer: @unchecked Sendable {
    // @unchecked: the listening descriptor is set once; the serving thread owns everything else.
    private let descriptor: Int32
    private let statusEndpoint: String
    private let security: Security.Settings?
    private let logger: Logger
    private let registry = PrometheusCollectorRegistry()
    private let node: String
    private var lastTotals: [String: Int64] = [:]

    static let totals: Set<String> = ["accepted", "rejected", "duplicates", "applied", "replayed", "gaps_repaired", "reconnects"]

    /// Listens on `host:port` (IPv4) and serves on its own thread until the process ends.
    public init(host: String, port: Int, statusEndpoint: String, security: Security.Settings?, node: String, logger: Logger) throws {
        self.statusEndpoint = statusEndpoint
        self.security = security
        self.logger = logger
        self.node = node
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError("metrics: socket() failed (errno \(errno))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let resolved = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, resolved, &address.sin_addr) == 1 else {
            close(fd)
            throw ClusterError("metrics: '\(host)' is not an IPv4 address to listen on")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw ClusterError("metrics: cannot listen on \(host):\(port) (\(String(cString: strerror(code))))")
        }
        descriptor = fd
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let thread = Thread { [self] in serve() }
        thread.name = "zflux-metrics"
        thread.start()
        logger.info("metrics, readiness and liveness over http", metadata: ["listen": "\(host):\(port)"])
    }

    private func serve() {
        while true {
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else { continue }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(client, &buffer, buffer.count)
            let request = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
            let path = request.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? ""
            let (status, body) = respond(to: path)
            let reason = [200: "OK", 404: "Not Found", 503: "Service Unavailable"][status] ?? "Error"
            let head =
                "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            let bytes = Array(head.utf8) + body
            _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            close(client)
        }
    }

    func respond(to path: String) -> (Int, [UInt8]) {
        switch path.split(separator: "?").first.map(String.init) ?? path {
        case "/live":
            return nodeStatus(endpoint: statusEndpoint, security: security, timeoutMilliseconds: 1000) != nil
                ? (200, Array("live\n".utf8)) : (503, Array("no answer\n".utf8))
        case "/ready":
            return nodeIsReady(endpoint: statusEndpoint, security: security) ? (200, Array("ready\n".utf8)) : (503, Array("not ready\n".utf8))
        case "/metrics":
            guard let status = nodeStatus(endpoint: statusEndpoint, security: security, timeoutMilliseconds: 1000) else {
                return (503, Array("the node did not answer its status request\n".utf8))
            }
            record(status)
            return (200, registry.emitToBuffer())
        default:
            return (404, Array("try /metrics, /ready or /live\n".utf8))
        }
    }

    /// Turns one status document into metrics (on the serving thread only).
    func record(_ status: NodeStatus) {
        let dimensions = [("node", node)]
        Gauge(label: "zflux_up", dimensions: dimensions).record(1)
        for (field, number) in status.numericFields {
            let name = "zflux_\(status.role.rawValue)_\(field)"
            if MetricsServer.totals.contains(field) {
                let delta = number - (lastTotals[field] ?? 0)
                lastTotals[field] = number
                if delta > 0 { Counter(label: name + "_total", dimensions: dimensions).increment(by: delta) }
            } else {
                Gauge(label: name, dimensions: dimensions).record(Double(number))
            }
        }
        for counted in status.middlewareCounts ?? [] {
            let field = "middleware:" + counted.key
            let delta = Int64(clamping: counted.count) - (lastTotals[field] ?? 0)
            lastTotals[field] = Int64(clamping: counted.count)
            if delta > 0 {
                Counter(label: "zflux_middleware_count_total", dimensions: dimensions + [("key", counted.key)]).increment(by: delta)
            }
        }
    }
}

extension Topology {
    /// Where a node's status requests reach it from inside its own process (its bound endpoint, with a
    /// wildcard listen address swapped for loopback).
    public static func localEndpoint(_ endpoint: String, listen: String?) -> String {
        let local = listen == "0.0.0.0" || listen == "*" ? "127.0.0.1" : listen
        return bindEndpoint(endpoint, listen: local)
    }

    /// The address a node's metrics port listens on: its listen address, else its tcp host, else loopback.
    public static func metricsHost(endpoint: String, listen: String?) -> String {
        if let listen { return listen == "*" ? "0.0.0.0" : listen }
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") else { return "127.0.0.1" }
        return String(endpoint[endpoint.index(endpoint.startIndex, offsetBy: 6)..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
    }
}
