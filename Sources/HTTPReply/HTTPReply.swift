import NIOCore
import NIOHTTP1

/// One answer of zflux's small HTTP servers (a node's metrics port, the devtools page): the one place
/// that writes a status line, the headers every answer carries, the body's length, and whether the
/// connection stays open after it. Each server says only what is its own: the status, the body and
/// its type, and the headers of its rules (a bearer challenge, the page's security policy).
package struct HTTPReply: Sendable {
    package var status: HTTPResponseStatus
    package var contentType: String
    package var body: [UInt8]
    /// Headers besides Content-Type, Content-Length and Connection, which the reply writes itself.
    package var headers: [(name: String, value: String)]

    package init(status: Int, contentType: String, body: [UInt8], headers: [(name: String, value: String)] = []) {
        precondition((100...599).contains(status), "an HTTP status is three digits")
        self.status = HTTPResponseStatus(statusCode: status)
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// The response's head: the status line, the server's headers, then the body's length and whether
    /// the connection is kept (`Connection: keep-alive`) or closed after this answer.
    package func head(keepAlive: Bool) -> HTTPResponseHead {
        var fields = HTTPHeaders()
        fields.add(name: "Content-Type", value: contentType)
        for header in headers {
            precondition(!HTTPReply.ownHeaders.contains(header.name.lowercased()), "\(header.name) is the reply's own to write")
            fields.add(name: header.name, value: header.value)
        }
        fields.add(name: "Content-Length", value: String(body.count))
        fields.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        return HTTPResponseHead(version: .http1_1, status: status, headers: fields)
    }

    static let ownHeaders: Set<String> = ["content-type", "content-length", "connection"]

    /// Writes the whole answer on the channel of `context`, whose handler sends `HTTPServerResponsePart`s,
    /// and closes the connection once it is written unless `keepAlive`. Both servers answer one request
    /// per connection (their connection limits count requests), so they close.
    package func write(on context: ChannelHandlerContext, keepAlive: Bool = false) {
        guard context.channel.isActive else { return }
        context.write(NIOAny(HTTPServerResponsePart.head(head(keepAlive: keepAlive))), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let written = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
        if !keepAlive { written.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
    }
}
