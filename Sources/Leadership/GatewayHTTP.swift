import NIOCore
import NIOHTTP1
import NIOPosix

/// One HTTP/1.1 POST to etcd's JSON gateway, on a connection of its own, through swift-nio's HTTP codec
/// (NIOHTTP1 writes the request and parses the answer; this file only wires a channel to them).
///
/// etcd's gateway speaks plain HTTP on a cluster's own network, and the client sends a few requests a
/// second at most (a campaign, a lease's keep-alive), so it keeps no pool and no TLS: an `https`
/// endpoint is refused by ``EtcdClient`` when it is made.
struct GatewayHTTP: Sendable {
    struct Response: Sendable {
        var status: UInt
        var body: ByteBuffer
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Where a URL such as `http://127.0.0.1:2379` points: its host, port and path prefix.
    struct Endpoint: Sendable, Equatable {
        var host: String
        var port: Int
        var path: String

        /// nil unless `url` is `http://HOST[:PORT][/PATH]` (the port defaults to 80).
        init?(_ url: String) {
            guard url.hasPrefix("http://") else { return nil }
            let rest = url.dropFirst("http://".count)
            let authority = rest.prefix { $0 != "/" }
            path = String(rest.dropFirst(authority.count))
            if path.hasSuffix("/") { path.removeLast() }
            if authority.hasPrefix("[") {
                // [::1]:2379
                guard let close = authority.firstIndex(of: "]") else { return nil }
                host = String(authority[authority.index(after: authority.startIndex)..<close])
                let tail = authority[authority.index(after: close)...]
                guard tail.isEmpty || tail.hasPrefix(":"), let port = tail.isEmpty ? 80 : Int(tail.dropFirst()) else { return nil }
                self.port = port
            } else {
                let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count <= 2, let first = parts.first, !first.isEmpty else { return nil }
                host = String(first)
                guard let port = parts.count == 2 ? Int(parts[1]) : 80 else { return nil }
                self.port = port
            }
            guard !host.isEmpty, (1...65_535).contains(port) else { return nil }
        }
    }

    let group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton

    /// POSTs `body` (JSON) to `path` at `endpoint`, and reads the answer's status and at most `limit`
    /// bytes of its body, all within `timeout`.
    func post(_ endpoint: Endpoint, path: String, body: [UInt8], timeout: Duration, limit: Int) async throws -> Response {
        let loop = group.next()
        let answer = loop.makePromise(of: Response.self)
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(Collector(answer: answer, limit: limit))
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port).get()
        } catch {
            answer.fail(error)
            throw error
        }
        // Past the deadline the collector hears of it as an error, and ends the request (it alone
        // completes the answer once the channel is up).
        let timer = loop.scheduleTask(deadline: deadline) {
            channel.pipeline.fireErrorCaught(Failure(description: "no answer within \(timeout)"))
        }
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: endpoint.path + path)
        head.headers.add(
            name: "Host", value: endpoint.host.contains(":") ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)")
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: String(body.count))
        head.headers.add(name: "Connection", value: "close")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        return try await answer.futureResult.get()
    }

    /// Collects one response and completes the promise once: with the response at its end, or with
    /// why it cannot (a body past the limit, an error, the connection closed first).
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart

        let answer: EventLoopPromise<Response>
        let limit: Int
        var status: UInt = 0
        var body = ByteBuffer()
        var done = false

        init(answer: EventLoopPromise<Response>, limit: Int) {
            self.answer = answer
            self.limit = limit
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !done else { return }
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = head.status.code
            case .body(var part):
                guard body.readableBytes + part.readableBytes <= limit else {
                    finish(.failure(Failure(description: "an answer longer than \(limit) bytes")), context)
                    return
                }
                body.writeBuffer(&part)
            case .end:
                finish(.success(Response(status: status, body: body)), context)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            finish(.failure(error), context)
        }

        func channelInactive(context: ChannelHandlerContext) {
            finish(.failure(Failure(description: "the connection closed before the answer ended")), context)
            context.fireChannelInactive()
        }

        private func finish(_ result: Result<Response, any Error>, _ context: ChannelHandlerContext) {
            guard !done else { return }
            done = true
            answer.completeWith(result)
            context.close(promise: nil)
        }
    }
}
