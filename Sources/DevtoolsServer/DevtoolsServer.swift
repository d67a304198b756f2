import Foundation
import HTTPReply
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
/// - at most ``Limits/maxConnections`` connections: one past it closes the oldest that has not sent a
///   whole request, else the page heard from least recently if it has been silent for
///   ``Limits/idleAfter`` (pages are pinged every ``Limits/pingInterval``, which a browser answers),
///   else itself; frames of at most ``Limits/maxFrameBytes``, and ``Limits/messagesPerSecond``
///   requests a second per page; past that the page is closed;
/// - the worker takes the pages' requests in turn, at most ``Limits/queuedPerPage`` waiting per page.
package final class DevtoolsServer: Sendable {
    package struct Limits: Sendable {
        package var maxConnections = 16
        package var maxFrameBytes = 64 << 10
        /// Requests a page may send a second, on average (twice as many in a burst).
        package var messagesPerSecond = 20
        /// A plain HTTP request must arrive whole within this.
        package var requestTimeout: Duration = .seconds(5)
        /// Requests one page may have waiting for the worker; past it, that page's next is answered
        /// "busy". The worker takes the pages in turn, so a page's requests wait behind at most one of
        /// each other page's.
        package var queuedPerPage = 4
        /// How often each page is pinged: a browser answers at once, so a page that does not is idle.
        package var pingInterval: Duration = .seconds(10)
        /// A page silent this long (no request, no answer to a ping) gives its place to a new
        /// connection when the connection cap is reached.
        package var idleAfter: Duration = .seconds(30)
        /// The most bytes a page's export answers with (the session file, as a JSON string): the
        /// export stops there and says to run `journal export`, which streams to a file. An export is
        /// for a bug report's few actions; the cap bounds its memory and its time on the worker.
        package var maxExportBytes = 16 << 20
        package init() {}
    }

    /// The port it listens on (the one asked for, or the one the system chose for 0).
    package let port: Int
    private let listener: HTTPListener
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
        let worker = Worker(perPage: limits.queuedPerPage)
        let hello = backend.hello()
        let open = OpenConnections()
        let context = PageContext(
            hub: hub, backend: backend, gate: gate, worker: worker, connections: open, limits: limits, hello: hello, logger: logger)
        do {
            listener = try HTTPListener(host: host, port: port, backlog: 32) { channel in
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
                try channel.pipeline.syncOperations.addHandler(ConnectionCap(open: open, limits: limits))
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                    withServerUpgrade: (
                        upgraders: [upgrader],
                        completionHandler: { context in context.pipeline.removeHandler(name: HTTPHandler.name, promise: nil) }
                    ),
                    withErrorHandling: true)
                try channel.pipeline.syncOperations.addHandler(
                    HTTPHandler(gate: gate, connections: open, timeout: limits.requestTimeout), name: HTTPHandler.name)
            }
        } catch {
            worker.stop()
            throw DevtoolsServerError(
                "devtools: cannot listen on \(host):\(port): \(Self.why(error)); is another devtools running? Give it another port with --listen \(host):PORT (0: any free one)"
            )
        }
        self.port = listener.port ?? port
        self.worker = worker
    }

    /// Stops listening, closes every page and ends the worker.
    package func shutdown() {
        listener.close()
        worker.stop()
    }

    /// Waits until the server's channel closes (after ``shutdown()``).
    package func wait() async throws { try await listener.closed() }
}

package struct DevtoolsServerError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// The open connections of one server, pages and plain requests alike, with what the cap needs to
/// choose which to close when one comes past it. Touched on the server's one event loop only, and
/// locked all the same.
final class OpenConnections: Sendable {
    struct Entry {
        let channel: any Channel
        let opened: NIODeadline
        /// A page: when it last sent a frame (a request, a pong), else when it became a page.
        var heard: NIODeadline?
        /// A plain request: whether it has arrived whole.
        var requestDone = false
    }
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    var count: Int { entries.withLock { $0.count } }

    /// Counts `channel` in; past `limit`, takes out and returns the connection to close to make
    /// room: the oldest that has not sent a whole request (a slow or stalled client), else the page
    /// heard from least recently if it has been silent for `idleAfter`, else `channel` itself.
    func open(_ channel: any Channel, limit: Int, idleAfter: Duration) -> (any Channel)? {
        let now = NIODeadline.now()
        let idle = now - .nanoseconds(idleAfter.components.seconds * 1_000_000_000 + idleAfter.components.attoseconds / 1_000_000_000)
        return entries.withLock { entries in
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, opened: now)
            guard entries.count > limit else { return nil }
            let others = entries.filter { $0.key != ObjectIdentifier(channel) }
            let victim =
                others.filter { $0.value.heard == nil && !$0.value.requestDone }.min { $0.value.opened < $1.value.opened }?.key
                ?? others.compactMap { key, entry in entry.heard.flatMap { $0 < idle ? (key, $0) : nil } }.min { $0.1 < $1.1 }?.0
                ?? ObjectIdentifier(channel)
            let closed = entries.removeValue(forKey: victim)?.channel
            precondition(entries.count <= limit, "one out for each one in past the cap")
            return closed
        }
    }

    func closed(_ channel: any Channel) { _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) } }

    /// A plain request arrived whole: it is answered and closed, and no longer a slow client.
    func requestDone(_ channel: any Channel) { entries.withLock { $0[ObjectIdentifier(channel)]?.requestDone = true } }

    /// A page sent a frame (or just became one).
    func heard(_ channel: any Channel) { entries.withLock { $0[ObjectIdentifier(channel)]?.heard = .now() } }
}

/// Counts connections in and out, closing one past the cap (``OpenConnections/open(_:limit:idleAfter:)``).
private final class ConnectionCap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let open: OpenConnections
    let limits: DevtoolsServer.Limits

    init(open: OpenConnections, limits: DevtoolsServer.Limits) {
        self.open = open
        self.limits = limits
    }

    func channelActive(context: ChannelHandlerContext) {
        if let victim = open.open(context.channel, limit: limits.maxConnections, idleAfter: limits.idleAfter) {
            victim.close(promise: nil)
            if victim === context.channel { return }
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        open.closed(context.channel)
        context.fireChannelInactive()
    }
}

/// Everything a page's handler needs.
struct PageContext: Sendable {
    let hub: DevtoolsHub
    let backend: any DevtoolsBackend
    let gate: Gate
    let worker: Worker
    let connections: OpenConnections
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
    /// The headers of every answer of the page's server: never cached, its type taken as given, and
    /// everything from here with no frame around it (a dispatch form must not be clicked through
    /// another site).
    static let policy: [(name: String, value: String)] = [
        ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    ]

    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    static let name = "zflux-devtools-http"

    let gate: Gate
    let connections: OpenConnections
    let timeout: Duration
    var head: HTTPRequestHead?
    var bodyBytes = 0
    var answered = false
    var deadline: Scheduled<Void>?

    init(gate: Gate, connections: OpenConnections, timeout: Duration) {
        self.gate = gate
        self.connections = connections
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(
            in: .milliseconds(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        ) {
            bound.value.close(promise: nil)
        }
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
            connections.requestDone(context.channel)
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
        HTTPReply(status: status, contentType: type, body: body, headers: HTTPHandler.policy).write(on: context)
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
    var page: Page?
    var pings: RepeatedTask?

    init(context: PageContext) {
        self.context = context
        allowance = Double(context.limits.messagesPerSecond * 2)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context.connections.heard(context.channel)
        page = self.context.hub.join(context.channel, hello: self.context.hello)
        // A browser answers a ping at once; a page that does not is idle, and may give its place to a
        // new page at the connection cap.
        let interval = TimeAmount.milliseconds(
            self.context.limits.pingInterval.components.seconds * 1000
                + self.context.limits.pingInterval.components.attoseconds / 1_000_000_000_000_000)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        pings = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            let context = bound.value
            context.writeAndFlush(NIOAny(WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(capacity: 0))), promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) { pings?.cancel() }

    func channelInactive(context: ChannelHandlerContext) {
        pings?.cancel()
        self.context.hub.leave(context.channel)
        self.context.worker.forget(ObjectIdentifier(context.channel))
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        self.context.connections.heard(context.channel)
        switch frame.opcode {
        case .text where frame.fin:
            guard spend() else { return close(context, code: .policyViolation) }
            guard let page else { return }
            var data = frame.unmaskedData
            let text = data.readString(length: data.readableBytes) ?? ""
            handle(text, page: page)
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

    func handle(_ text: String, page client: Page) {
        let page = self.context, hub = page.hub
        guard let request = try? JSONDecoder().decode(PageRequest.self, from: Data(text.utf8)) else {
            return hub.send("{\"kind\":\"error\",\"message\":\"a request is a JSON object with an op\"}", to: client)
        }
        let id = request.id ?? 0
        @Sendable func answered(_ body: String) -> String {
            // Every answer names the request it answers.
            "{\"id\":\(id)," + body.dropFirst()
        }
        let job: (@Sendable () -> String)?
        switch request.op {
        case "at":
            guard let seq = request.seq else { return hub.send(answered("{\"kind\":\"error\",\"message\":\"at needs a seq\"}"), to: client) }
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
                return hub.send(answered("{\"kind\":\"error\",\"message\":\"export needs from and to\"}"), to: client)
            }
            job = page.guarded("export", "export \(from)…\(to)", token: request.token) { reason in
                "{\"kind\":\"exported\",\"error\":\(jsonString(reason))}"
            } work: {
                page.backend.export(from: from, to: to, maxBytes: page.limits.maxExportBytes)
            }
        case "dispatch":
            guard let app = request.app, let type = request.type else {
                return hub.send(answered("{\"kind\":\"error\",\"message\":\"dispatch needs an app and a type\"}"), to: client)
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
            return hub.send(answered("{\"kind\":\"error\",\"message\":\(jsonString("unknown op " + request.op))}"), to: client)
        }
        let queued = page.worker.submit(from: ObjectIdentifier(client.channel)) {
            hub.send(answered(job()), to: client)
        }
        if !queued { hub.send(answered("{\"kind\":\"error\",\"message\":\"busy: this page has too many requests waiting\"}"), to: client) }
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

/// The thread that answers requests which may block, one at a time: each page's in the order it sent
/// them, the pages in turn (round robin), so that one page's requests never make another's wait
/// behind more than one of its own.
final class Worker: Sendable {
    private struct Queues {
        var jobs: [ObjectIdentifier: [@Sendable () -> Void]] = [:]
        /// Pages with jobs waiting, the next to be served first.
        var turn: [ObjectIdentifier] = []
        var stopped = false

        mutating func next() -> (@Sendable () -> Void)? {
            guard !turn.isEmpty else { return nil }
            let page = turn.removeFirst()
            guard var waiting = jobs[page], !waiting.isEmpty else { return next() }
            let job = waiting.removeFirst()
            jobs[page] = waiting.isEmpty ? nil : waiting
            if !waiting.isEmpty { turn.append(page) }
            precondition(turn.count == jobs.count, "every page with jobs waiting has a turn")
            return job
        }
    }
    private final class Jobs: Sendable {
        let queues = Mutex(Queues())
        let signal = DispatchSemaphore(value: 0)
    }

    private let jobs = Jobs()
    private let perPage: Int

    init(perPage: Int) {
        self.perPage = perPage
        let jobs = jobs
        let thread = Thread {
            while true {
                jobs.signal.wait()
                let next = jobs.queues.withLock { queues -> (@Sendable () -> Void)?? in
                    if queues.stopped { return .none }
                    return .some(queues.next())
                }
                guard let next else { return }
                next?()
            }
        }
        thread.name = "zflux-devtools-worker"
        thread.start()
    }

    /// Queues `job` for `page`; false when that page has ``DevtoolsServer/Limits/queuedPerPage`` waiting already.
    func submit(from page: ObjectIdentifier, _ job: @escaping @Sendable () -> Void) -> Bool {
        let queued = jobs.queues.withLock { queues -> Bool in
            let waiting = queues.jobs[page, default: []]
            guard waiting.count < perPage, !queues.stopped else { return false }
            if waiting.isEmpty { queues.turn.append(page) }
            queues.jobs[page] = waiting + [job]
            return true
        }
        if queued { jobs.signal.signal() }
        return queued
    }

    /// A page left: what it still had waiting is not done.
    func forget(_ page: ObjectIdentifier) {
        jobs.queues.withLock { queues in
            queues.jobs[page] = nil
            queues.turn.removeAll { $0 == page }
        }
    }

    func stop() {
        jobs.queues.withLock { $0.stopped = true }
        jobs.signal.signal()
    }
}

extension DevtoolsServer {
    /// What went wrong with a bind, in the words of the system ("Address already in use"), not in
    /// those of the call that failed.
    static func why(_ error: any Error) -> String {
        guard let failed = error as? IOError else { return "\(error)" }
        return String(cString: strerror(failed.errnoCode))
    }
}
