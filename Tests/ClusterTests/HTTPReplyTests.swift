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

/// The one way the metrics port and the devtools page bind.
@Suite("HTTP listeners")
struct HTTPListenerTests {
    @Test("a listener on port 0 says which port it took, holds it until closed, and a second bind of that port throws")
    func bindAndClose() throws {
        let first = try HTTPListener(host: "localhost", port: 0, backlog: 8) { _ in }
        let port = try #require(first.port)
        #expect(port > 0)
        #expect(throws: (any Error).self) { try HTTPListener(host: "127.0.0.1", port: port, backlog: 8) { _ in } }
        first.close()
        #expect(first.port == nil)
        let again = try HTTPListener(host: "127.0.0.1", port: port, backlog: 8) { _ in }
        #expect(again.port == port)
        again.close()
    }
}
