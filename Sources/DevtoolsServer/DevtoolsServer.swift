import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// `zflux devtools`: one page over HTTP and a WebSocket at `/ws` that feeds it, on swift-nio (one
/// event-loop thread). What the page asks that may block (time travel, a dispatch) is answered on a
/// worker thread of its own, never on the event loop or Swift's cooperative threads.
///
/// Rules (docs/OPERATIONS.md, "The devtools page"):
/// - a WebSocket whose `Origin` is not the page's own (`http://` + the `Host` it asked for) is
///   refused, and on a loopback address so is any `Host` that is not a loopback name, so a web page
///   elsewhere, even one whose name resolves to 127.0.0.1, cannot read the cluster or dispatch;
/// - a dispatch, time travel and an export must carry a token (`zflux devtools` always has one, on
///   loopback too, since another local user reaches loopback): the fixed one, or one derived from an
///   authorized CURVE key (``DispatchAccess``); viewing the live states needs none;
/// - at most ``Limits/maxConnections`` connections, frames of at most ``Limits/maxFrameBytes``, and
///   ``Limits/messagesPerSecond`` requests a second per page; past that the page is closed.
package final class DevtoolsServer: Sendable {
    package struct Limits: Sendable {
        package var maxConnections = 16
        package var maxFrameBytes = 64 << 10
        /// Requests a page may send a second, on average (twice as many in a burst).
        package var messagesPerSecond = 20
        /// A plain HTTP request must arrive whole within this.
        package var requestTimeout: Duration = .seconds(10)
        /// Requests waiting for the worker, over every page; past it a request is answered "busy".
        package var queuedRequests = 64
        /// The most bytes a page's export answers with (the session file, as a JSON string): the
        /// export stops there and says to run `journal export`, which streams to a file. An export is
        /// for a bug report's few actions; the cap bounds its memory and its time on the worker.
        package var maxExportBytes = 16 << 20
        package init() {}
    }

    /// The port it listens on (the one asked for, or the one the system chose for 0).
    package let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let worker: Worker

    /// Listens on `host:port`. `access`: the tokens a dispatch, time travel or export may carry
    /// (none required by default, for tests in one process).
    /// `isLoopback`: which host names are this machine's loopback, for the listen address and the
    /// `Host` a page asks for (`localhost` and address literals only: a name such as
    /// `127.evil.example` resolves wherever its owner points it).
    package init(
        host: String, port: Int, access: DispatchAccess = DispatchAccess(), isLoopback: @escaping @Sendable (String) -> Bool,
        hub: DevtoolsHub, backend: any DevtoolsBackend, limits: Limits = Limits(), logger: Logger
    ) throws {
        let gate = Gate(listenHost: host, access: access, isLoopback: isLoopback)
        let worker = Worker(capacity: limits.queuedRequests)
        let hello = backend.hello()
        let context = PageContext(hub: hub, backend: backend, gate: gate, worker: worker, limits: limits, hello: hello, logger: logger)
        let open = OpenConnections()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 32)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.writeBufferWaterMark, value: .init(low: 1 << 20, high: 8 << 20))
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let upgrader = NIOWebSocketServerUpgrader(
                            maxFrameSize: limits.maxFrameBytes,
                            shouldUpgrade: { channel, head in
                                channel.eventLoop.makeSucceededFuture(head.uri == "/ws" && gate.refusal(head) == nil ? HTTPHeaders() : nil)
                            },
                            upgradePipelineHandler: { channel, _ in
                                channel.eventLoop.makeCompletedFuture {
                                    try channel.pipeline.syncOperations.addHandler(PageHandler(context: context))
                                }
                            })
                        try channel.pipeline.syncOperations.addHandler(ConnectionCap(open: open, limit: limits.maxConnections))
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                            withServerUpgrade: (
                                upgraders: [upgrader],
                                completionHandler: { context in context.pipeline.removeHandler(name: HTTPHandler.name, promise: nil) }
                            ),
                            withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPHandler(gate: gate, timeout: limits.requestTimeout), name: HTTPHandler.name)
                    }
                }
                .bind(host: host == "localhost" ? "127.0.0.1" : host, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            worker.stop()
            throw DevtoolsServerError("devtools: cannot listen on \(host):\(port) (\(error))")
        }
        self.port = channel.localAddress?.port ?? port
        self.group = group
        self.worker = worker
    }

    /// Stops listening, closes every page and ends the worker.
    package func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
        worker.stop()
    }

    /// Waits until the server's channel closes (after ``shutdown()``).
    package func wait() async throws { try await channel.closeFuture.get() }
}

package struct DevtoolsServerError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// The open connections of one server, pages and plain requests alike.
final class OpenConnections: Sendable {
    let count = Atomic<Int>(0)
}

/// Closes connections past the cap as they come.
private final class ConnectionCap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let open: OpenConnections
    let limit: Int
    var counted = false

    init(open: OpenConnections, limit: Int) {
        self.open = open
        self.limit = limit
    }

    func channelActive(context: ChannelHandlerContext) {
        counted = true
        if open.count.wrappingAdd(1, ordering: .relaxed).newValue > limit {
            context.close(promise: nil)
            return
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if counted { open.count.wrappingSubtract(1, ordering: .relaxed) }
        counted = false
        context.fireChannelInactive()
    }
}

/// Everything a page's handler needs.
struct PageContext: Sendable {
    let hub: DevtoolsHub
    let backend: any DevtoolsBackend
    let gate: Gate
    let worker: Worker
    let limits: DevtoolsServer.Limits
    let hello: String
    let logger: Logger
    let refusals = RefusalLog()

    /// A request that needs a token (a dispatch, time travel, an export), as a job for the worker: the
    /// token is checked there, since a key-derived one means reading the authorized-keys file again.
    /// `doing`: what it does, for the refusal ("dispatch"); `what`: which, for the log
    /// ("counter.incrementTapped"), logged at `level` with whose token it carried; `refused` makes the
    /// answer from the refusal's reason.
    func guarded(
        _ doing: String, _ what: String, token: String?, level: Logger.Level = .info, refused: @escaping @Sendable (String) -> String,
        work: @escaping @Sendable () -> String
    ) -> @Sendable () -> String {
        let access = gate.access, logger = logger, refusals = refusals
        return {
            guard let holder = access.holder(of: token) else {
                refusals.refused(what, tokenGiven: !(token ?? "").isEmpty, logger: logger)
                return refused(
                    ((token ?? "").isEmpty
                        ? "this devtools needs a token to \(doing): "
                        : "the token this page carries is not one this devtools takes (mistyped, from another devtools, or its key was revoked): ")
                        + access.hint)
            }
            if access.required { logger.log(level: level, "request from a page", metadata: ["request": "\(what)", "token": "\(holder)"]) }
            return work()
        }
    }
}

/// The plain HTTP side: the page and its two files, and an answer that says why a WebSocket was refused.
private final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    static let name = "zflux-devtools-http"

    let gate: Gate
    let timeout: Duration
    var head: HTTPRequestHead?
    var bodyBytes = 0
    var answered = false
    var deadline: Scheduled<Void>?

    init(gate: Gate, timeout: Duration) {
        self.gate = gate
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: .seconds(timeout.components.seconds)) { bound.value.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { deadline?.cancel() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(let part):
            bodyBytes += part.readableBytes
            if bodyBytes > 1024 && !answered { reply(context, 413, "text/plain", Array("the devtools take no request body\n".utf8)) }
        case .end:
            guard let head, !answered else { return }
            answer(context, head)
        }
    }

    func answer(_ context: ChannelHandlerContext, _ head: HTTPRequestHead) {
        guard head.method == .GET else { return reply(context, 405, "text/plain", Array("GET only\n".utf8)) }
        if let refusal = gate.refusal(head.withoutOrigin) { return reply(context, 403, "text/plain", Array((refusal + "\n").utf8)) }
        switch head.uri.split(separator: "?").first.map(String.init) ?? head.uri {
        case "/", "/index.html": reply(context, 200, "text/html; charset=utf-8", Array(DevtoolsPage.html.utf8))
        case "/devtools.js": reply(context, 200, "text/javascript; charset=utf-8", Array(DevtoolsPage.script.utf8))
        case "/devtools.css": reply(context, 200, "text/css; charset=utf-8", Array(DevtoolsPage.style.utf8))
        case "/ws":
            let why = gate.refusal(head) ?? "not a WebSocket upgrade request"
            reply(context, why.hasPrefix("not a") ? 400 : 403, "text/plain", Array((why + "\n").utf8))
        default: reply(context, 404, "text/plain", Array("no such page: try /\n".utf8))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A refused upgrade is reported here, then passed on as a plain request: answered 403 with the reason.
        if error is NIOWebSocketUpgradeError { return }
        context.close(promise: nil)
    }

    func reply(_ context: ChannelHandlerContext, _ status: Int, _ type: String, _ body: [UInt8]) {
        answered = true
        deadline?.cancel()
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        // Everything from here, and no frame around it (a dispatch form must not be clicked through another site).
        headers.add(name: "Content-Security-Policy", value: "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
        headers.add(name: "Connection", value: "close")
        let response = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

extension HTTPRequestHead {
    /// The page and its files are fetched without Origin; only the Host rule applies to them.
    fileprivate var withoutOrigin: HTTPRequestHead {
        var head = self
        head.headers.remove(name: "Origin")
        return head
    }
}

/// One page's WebSocket: requests in, answers and the hub's news out.
private final class PageHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let context: PageContext
    var allowance: Double
    var lastRefill = ContinuousClock.now

    init(context: PageContext) {
        self.context = context
        allowance = Double(context.limits.messagesPerSecond * 2)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context.hub.join(context.channel, hello: self.context.hello)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.context.hub.leave(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text where frame.fin:
            guard spend() else { return close(context, code: .policyViolation) }
            var data = frame.unmaskedData
            let text = data.readString(length: data.readableBytes) ?? ""
            handle(text, channel: context.channel)
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            break
        case .connectionClose:
            close(context, code: .normalClosure)
        default:
            // Binary and fragmented messages are not part of the protocol.
            close(context, code: .unacceptableData)
        }
    }

    /// One request's allowance: false past the rate.
    func spend() -> Bool {
        let now = ContinuousClock.now
        let elapsed = lastRefill.duration(to: now)
        lastRefill = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(self.context.limits.messagesPerSecond)
        allowance = min(rate * 2, allowance + seconds * rate)
        guard allowance >= 1 else { return false }
        allowance -= 1
        return true
    }

    func handle(_ text: String, channel: any Channel) {
        let page = self.context
        guard let request = try? JSONDecoder().decode(PageRequest.self, from: Data(text.utf8)) else {
            return DevtoolsHub.send("{\"kind\":\"error\",\"message\":\"a request is a JSON object with an op\"}", to: channel)
        }
        let id = request.id ?? 0
        @Sendable func answered(_ body: String) -> String {
            // Every answer names the request it answers.
            "{\"id\":\(id)," + body.dropFirst()
        }
        let job: (@Sendable () -> String)?
        switch request.op {
        case "at":
            guard let seq = request.seq else { return DevtoolsHub.send(answered("{\"kind\":\"error\",\"message\":\"at needs a seq\"}"), to: channel) }
            // At debug: a slider being dragged asks for every seq it passes.
            job = page.guarded("travel in time", "at seq \(seq)", token: request.token, level: .debug) { reason in
                "{\"kind\":\"at\",\"seq\":\(seq),\"error\":\(jsonString(reason))}"
            } work: {
                page.backend.states(at: seq)
            }
        case "range":
            job = { page.backend.range() }
        case "export":
            guard let from = request.from, let to = request.to else {
                return DevtoolsHub.send(answered("{\"kind\":\"error\",\"message\":\"export needs from and to\"}"), to: channel)
            }
            job = page.guarded("export", "export \(from)…\(to)", token: request.token) { reason in
                "{\"kind\":\"exported\",\"error\":\(jsonString(reason))}"
            } work: {
                page.backend.export(from: from, to: to, maxBytes: page.limits.maxExportBytes)
            }
        case "dispatch":
            guard let app = request.app, let type = request.type else {
                return DevtoolsHub.send(answered("{\"kind\":\"error\",\"message\":\"dispatch needs an app and a type\"}"), to: channel)
            }
            let arguments = request.arguments ?? "{}"
            job = page.guarded("dispatch", "\(app).\(type)", token: request.token) { reason in
                "{\"kind\":\"dispatched\",\"outcome\":\"refused\",\"reason\":\(jsonString(reason))}"
            } work: {
                page.backend.dispatch(app: app, type: type, arguments: arguments)
            }
        default:
            job = nil
        }
        guard let job else {
            return DevtoolsHub.send(answered("{\"kind\":\"error\",\"message\":\(jsonString("unknown op " + request.op))}"), to: channel)
        }
        let queued = page.worker.submit {
            DevtoolsHub.send(answered(job()), to: channel)
        }
        if !queued { DevtoolsHub.send(answered("{\"kind\":\"error\",\"message\":\"busy: too many requests waiting\"}"), to: channel) }
    }

    func close(_ context: ChannelHandlerContext, code: WebSocketErrorCode) {
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))).assumeIsolated().whenComplete {
            _ in context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

/// The thread that answers requests which may block, one at a time, in order.
final class Worker: Sendable {
    private final class Jobs: Sendable {
        let queue = Mutex<(jobs: [@Sendable () -> Void], stopped: Bool)>(([], false))
        let signal = DispatchSemaphore(value: 0)
    }

    private let jobs = Jobs()
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        let jobs = jobs
        let thread = Thread {
            while true {
                jobs.signal.wait()
                let next = jobs.queue.withLock { state -> (@Sendable () -> Void)?? in
                    if state.stopped { return .none }
                    return state.jobs.isEmpty ? .some(nil) : .some(state.jobs.removeFirst())
                }
                guard let next else { return }
                next?()
            }
        }
        thread.name = "zflux-devtools-worker"
        thread.start()
    }

    /// False when too many jobs wait already.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let queued = jobs.queue.withLock { state -> Bool in
            guard state.jobs.count < capacity, !state.stopped else { return false }
            state.jobs.append(job)
            return true
        }
        if queued { jobs.signal.signal() }
        return queued
    }

    func stop() {
        jobs.queue.withLock { $0.stopped = true }
        jobs.signal.signal()
    }
}
