import FluxCore
import Foundation
import HTTPReply
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOPosix
import NodeSupport
import Prometheus
import Synchronization

/// A node's opt-in HTTP port (`metrics_port`): `/metrics` in Prometheus text format, `/ready` and
/// `/live` for Kubernetes probes. It reads the node's own status over the node's status endpoint when
/// asked, so the node's loop pays nothing for it.
///
/// - `/ready`: 200 once the node serves (a store: subscribed and caught up with the dispatcher), else 503.
/// - `/live`: 200 while the node answers a status request within a second, else 503 (a wedged loop).
/// - `/metrics`: every number of the node's status as a gauge `zflux_<role>_<field>`, and the running
///   totals (accepted, rejected, applied, …) as counters `zflux_<role>_<field>_total`, via swift-metrics.
public final class MetricsServer: Sendable {
    private let answers: Answers
    private let listener: HTTPListener

    static let totals: Set<String> = [
        "accepted", "rejected", "applied", "replayed", "gaps_repaired", "reconnects", "schedules_fired", "schedules_cancelled", "schedules_late",
        "journal_syncs",
    ]

    /// What a connection may hold: a peer gets `requestTimeout` to send its whole request, body
    /// included, and at most `maxConnections` are open at once (the rest are closed as they connect),
    /// so the port never takes the file descriptors the node's ZeroMQ sockets need.
    public struct Limits: Sendable {
        public var maxConnections = 64
        public var requestTimeout: Duration = .seconds(10)
        public var maxBodyBytes = 1024
        public init() {}
    }

    /// Listens on `host:port` and serves until the process ends. HTTP is swift-nio's (one event-loop
    /// thread); the answers, which wait up to a second for the node's status, are computed off that
    /// loop, so a slow or stuck client never holds up a probe of another. With a `token`, every request
    /// must carry `Authorization: Bearer TOKEN` (what Prometheus sends with `authorization:
    /// credentials_file`), or is answered 401.
    public init(
        host: String, port: Int, statusEndpoint: String, security: Security.Settings?, node: String, token: String? = nil,
        limits: Limits = Limits(), logger: Logger
    ) throws {
        let answers = Answers(statusEndpoint: statusEndpoint, security: security, node: node)
        let budget = ConnectionBudget(limits: limits, token: token)
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: answers.registry))
        let queue = DispatchQueue(label: "zflux-metrics-answers", attributes: .concurrent)
        do {
            listener = try HTTPListener(host: host, port: port, backlog: 64) { channel in
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                try channel.pipeline.syncOperations.addHandler(ProbeHandler(answers: answers, queue: queue, budget: budget))
            }
        } catch {
            throw ClusterError("metrics: cannot listen on \(host):\(port) (\(error))")
        }
        self.answers = answers
        logger.info(
            "metrics, readiness and liveness over http", metadata: ["listen": "\(host):\(port)", "token": "\(token == nil ? "none" : "required")"])
    }

    /// Stops listening and closes every connection (a node's process usually just ends instead).
    public func shutdown() { listener.close() }

    /// What the port answers, computed from the node's status; safe to call from any thread.
    final class Answers: Sendable {
        let statusEndpoint: String
        let security: Security.Settings?
        let node: String
        let registry = PrometheusCollectorRegistry()
        /// The running totals last turned into counter increments; `/metrics` requests take turns on it.
        private let lastTotals = Mutex<[String: Int64]>([:])

        init(statusEndpoint: String, security: Security.Settings?, node: String) {
            self.statusEndpoint = statusEndpoint
            self.security = security
            self.node = node
        }

        /// The answer to a GET of `path` (a query string is ignored): (status, body).
        func answer(_ path: String) -> (Int, [UInt8]) {
            switch path.split(separator: "?").first.map(String.init) ?? path {
            case "/live":
                return nodeStatus(endpoint: statusEndpoint, security: security, timeoutMilliseconds: 1000) != nil
                    ? (200, Array("live\n".utf8)) : (503, Array("no answer\n".utf8))
            case "/ready":
                return nodeIsReady(endpoint: statusEndpoint, security: security)
                    ? (200, Array("ready\n".utf8)) : (503, Array("not ready\n".utf8))
            case "/metrics":
                guard let status = nodeStatus(endpoint: statusEndpoint, security: security, timeoutMilliseconds: 1000) else {
                    return (503, Array("the node did not answer its status request\n".utf8))
                }
                return lastTotals.withLock { totals in
                    Answers.record(status, node: node, lastTotals: &totals)
                    return (200, registry.emitToBuffer())
                }
            default:
                return (404, Array("try /metrics, /ready or /live\n".utf8))
            }
        }

        /// Turns one status document into metrics; counters grow by what the node's totals grew since
        /// the last scrape.
        private static func record(_ status: NodeStatus, node: String, lastTotals: inout [String: Int64]) {
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
}

/// What every connection of one metrics port shares: the count of open connections and the rules.
///
/// Past the cap, a new connection does not wait for a slot: the oldest connection that has not sent a
/// whole request yet is closed to make room. A peer holding idle connections cannot lock the probes
/// out (a probe sends its request at once); only connections being answered are never closed for it.
final class ConnectionBudget: Sendable {
    let limits: MetricsServer.Limits
    let open = Atomic<Int>(0)
    /// Open connections without a whole request yet, oldest first: the ones closed to make room.
    private let incomplete = Mutex<[(id: ObjectIdentifier, channel: any Channel)]>([])
    /// `Bearer TOKEN`, as bytes, when a token is required.
    let expected: [UInt8]?

    init(limits: MetricsServer.Limits, token: String?) {
        self.limits = limits
        self.expected = token.map { Array("Bearer \($0)".utf8) }
    }

    /// Counts a new connection; past the cap, closes the oldest incomplete one to make room. False when
    /// every other connection is being answered (the new one is closed instead).
    func admit(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let count = open.wrappingAdd(1, ordering: .relaxed).newValue
        incomplete.withLock { $0.append((id, channel)) }
        guard count > limits.maxConnections else { return true }
        let victim = incomplete.withLock { list -> (any Channel)? in
            guard let index = list.firstIndex(where: { $0.id != id }) else { return nil }
            return list.remove(at: index).channel
        }
        guard let victim else { return false }
        victim.close(promise: nil)
        return true
    }

    /// The connection sent its whole request (or is gone): it is no longer closed to make room.
    func complete(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        incomplete.withLock { $0.removeAll { $0.id == id } }
    }

    /// Whether an `Authorization` header value is the expected one, in time that does not depend on
    /// where they differ.
    func authorizes(_ value: String?) -> Bool {
        guard let expected else { return true }
        let given = Array((value ?? "").utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }
}

/// One HTTP connection of the metrics port: answers one GET (computed on `answers`, off the event
/// loop) and closes. Everything here runs on the channel's event loop.
private final class ProbeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let answers: MetricsServer.Answers
    private let queue: DispatchQueue
    private let budget: ConnectionBudget
    private var uri: String?
    private var authorized = false
    private var bodyBytes = 0
    private var answering = false
    private var counted = false
    private var deadline: Scheduled<Void>?

    init(answers: MetricsServer.Answers, queue: DispatchQueue, budget: ConnectionBudget) {
        self.answers = answers
        self.queue = queue
        self.budget = budget
    }

    func channelActive(context: ChannelHandlerContext) {
        counted = true
        guard budget.admit(context.channel) else {
            context.close(promise: nil)
            return
        }
        // The whole request, body included, within the time limit: a peer trickling bytes is cut too.
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(budget.limits.requestTimeout.components.seconds) * 1_000_000_000)) {
            if !bound.value.handler.answering { bound.value.context.close(promise: nil) }
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if counted { budget.open.wrappingSubtract(1, ordering: .relaxed) }
        counted = false
        budget.complete(context.channel)
        deadline?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            uri = head.uri
            authorized = budget.authorizes(head.headers.first(name: "Authorization"))
        case .body(let part):
            bodyBytes += part.readableBytes
            // Probes have no body to speak of; a large one is refused before it is read.
            if bodyBytes > budget.limits.maxBodyBytes && !answering {
                answering = true
                budget.complete(context.channel)
                reply(context: context, status: 413, body: Array("a probe takes no body\n".utf8))
            }
        case .end:
            guard let uri, !answering else { return }
            answering = true
            budget.complete(context.channel)
            guard authorized else {
                reply(context: context, status: 401, body: Array("this port needs Authorization: Bearer TOKEN\n".utf8))
                return
            }
            let loop = context.eventLoop
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
            let answers = answers
            queue.async {
                let (status, body) = answers.answer(uri)
                loop.execute { bound.value.handler.reply(context: bound.value.context, status: status, body: body) }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or a malformed request: nothing to answer to.
        context.close(promise: nil)
    }

    private func reply(context: ChannelHandlerContext, status: Int, body: [UInt8]) {
        let challenge = status == 401 ? [(name: "WWW-Authenticate", value: "Bearer")] : []
        HTTPReply(status: status, contentType: "text/plain; version=0.0.4; charset=utf-8", body: body, headers: challenge).write(on: context)
    }
}

extension Topology {
    /// Where a node's status requests reach it from inside its own process (its bound endpoint, with a
    /// wildcard listen address swapped for loopback).
    public static func localEndpoint(_ endpoint: String, listen: String?) -> String {
        let local = listen == "0.0.0.0" || listen == "*" ? "127.0.0.1" : listen
        return bindEndpoint(endpoint, listen: local)
    }
}
