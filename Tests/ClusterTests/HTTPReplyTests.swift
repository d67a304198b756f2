import HTTPReply
import NIOHTTP1
import Testing

/// The one response writer of the metrics port and the devtools page: what every answer's head says.
@Suite("HTTP replies")
struct HTTPReplyTests {
    @Test("a reply's head has its status, its type, the server's own headers, the body's length, and closes unless kept alive")
    func head() {
        let reply = HTTPReply(
            status: 401, contentType: "text/plain; charset=utf-8", body: Array("no\n".utf8), headers: [(name: "WWW-Authenticate", value: "Bearer")])
        let closing = reply.head(keepAlive: false)
        #expect(closing.status == .unauthorized && closing.version == .http1_1)
        #expect(closing.headers.map(\.name) == ["Content-Type", "WWW-Authenticate", "Content-Length", "Connection"])
        #expect(closing.headers["Content-Length"] == ["3"] && closing.headers["Content-Type"] == ["text/plain; charset=utf-8"])
        #expect(closing.headers["Connection"] == ["close"])
        #expect(reply.head(keepAlive: true).headers["Connection"] == ["keep-alive"])
        #expect(HTTPReply(status: 200, contentType: "text/html", body: []).head(keepAlive: false).headers["Content-Length"] == ["0"])
    }
}
