import Foundation
import Synchronization
import Testing

@testable import ZeroMQ

/// A unique endpoint per test and transport; ipc files go to a fresh temporary directory.
func endpoint(_ transport: String, _ name: String = #function) -> String {
    let unique = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    switch transport {
    case "ipc": return "ipc://\(NSTemporaryDirectory())zmqtest-\(unique).sock"
    case "tcp": return "tcp://127.0.0.1:*"
    default: return "inproc://test-\(unique)"
    }
}

/// Removes an ipc endpoint's socket file: libzmq unlinks it on its I/O thread, which a test process may
/// not let run before it exits.
func removeSocketFile(_ endpoint: String) {
    if endpoint.hasPrefix("ipc://") { unlink(String(endpoint.dropFirst(6))) }
}

/// Receives with a deadline so a broken test fails instead of hanging.
func receive(_ socket: Socket, timeoutMilliseconds: Int = 5000) throws -> [[UInt8]]? {
    var poller = Poller()
    poller.add(.socket(socket))
    guard try poller.poll(timeoutMilliseconds: timeoutMilliseconds) > 0 else { return nil }
    return try socket.receive(dontWait: true)
}

@Suite("ZeroMQ sockets")
struct SocketTests {
    @Test("multipart DEALER → ROUTER → DEALER round trip", arguments: ["inproc", "ipc", "tcp"])
    func dealerRouterRoundTrip(transport: String) throws {
        let router = try Socket(.shared, .router)
        try router.bind(endpoint(transport))
        let bound = try router.lastEndpoint
        let dealer = try Socket(.shared, .dealer)
        try dealer.connect(bound)
        defer { dealer.close(); router.close(); removeSocketFile(bound) }

        let frames: [[UInt8]] = [Array("topic".utf8), [], [0, 1, 2, 255], Array(repeating: 7, count: 100_000)]
        try #require(try dealer.send(frames))
        let received = try #require(try receive(router))
        #expect(received.count == frames.count + 1, "the ROUTER prefixes the peer's routing id")
        #expect(Array(received.dropFirst()) == frames)

        try router.send([received[0], Array("reply".utf8), []])
        let reply = try #require(try receive(dealer))
        #expect(reply == [Array("reply".utf8), []])
    }

    @Test("PUB/SUB delivers only subscribed topics", arguments: ["inproc", "ipc", "tcp"])
    func publishSubscribe(transport: String) throws {
        let pub = try Socket(.shared, .pub)
        try pub.bind(endpoint(transport))
        let sub = try Socket(.shared, .sub)
        try sub.subscribe(Array("wanted".utf8))
        let bound = try pub.lastEndpoint
        try sub.connect(bound)
        defer { sub.close(); pub.close(); removeSocketFile(bound) }

        // A subscription takes effect asynchronously: publish until one arrives (bounded).
        var got: [[UInt8]]? = nil
        for _ in 0..<200 where got == nil {
            try pub.send([Array("other".utf8), [1]])
            try pub.send([Array("wanted".utf8), [2]])
            got = try receive(sub, timeoutMilliseconds: 25)
        }
        let message = try #require(got)
        #expect(message == [Array("wanted".utf8), [2]])
        while let more = try sub.receive(dontWait: true) { #expect(more[0] == Array("wanted".utf8)) }
    }

    @Test("receive(dontWait:) returns nil and poll times out when nothing is queued")
    func nothingQueued() throws {
        let pull = try Socket(.shared, .pull)
        try pull.bind(endpoint("inproc"))
        defer { pull.close() }
        #expect(try pull.receive(dontWait: true) == nil)
        var poller = Poller()
        let index = poller.add(.socket(pull))
        #expect(try poller.poll(timeoutMilliseconds: 20) == 0)
        #expect(!poller.isReadable(index))
    }

    @Test("an eventfd wakes a poll from another thread")
    func eventFDWakesPoll() async throws {
        let fd = try EventFD()
        let signaller = Thread {
            usleep(10_000); fd.signal()
        }
        signaller.start()
        var poller = Poller()
        let index = poller.add(.fileDescriptor(fd.descriptor))
        #expect(try poller.poll(timeoutMilliseconds: 5000) == 1)
        #expect(poller.isReadable(index))
        fd.drain()
        #expect(try poller.poll(timeoutMilliseconds: 0) == 0, "drain resets the eventfd")
    }

    @Test("options read back what was set")
    func optionsRoundTrip() throws {
        let socket = try Socket(.shared, .dealer)
        defer { socket.close() }
        #expect(try socket.option(.linger) == 0, "sockets default to LINGER 0 so shutdown never hangs")
        try socket.setOption(.sendHighWaterMark, 1234)
        try socket.setOption(.receiveHighWaterMark, 4321)
        try socket.setOption(.heartbeatInterval, 250)
        try socket.setOption(.immediate, 1)
        try socket.setMaxMessageSize(1 << 20)
        #expect(try socket.option(.sendHighWaterMark) == 1234)
        #expect(try socket.option(.receiveHighWaterMark) == 4321)
        #expect(try socket.option(.heartbeatInterval) == 250)
        #expect(try socket.option(.immediate) == 1)
        #expect(try socket.maxMessageSize == 1 << 20)
    }
}

@Suite("ZeroMQ errors")
struct ErrorTests {
    @Test("an unknown transport fails with EPROTONOSUPPORT, naming zmq_bind and the endpoint")
    func unknownTransport() throws {
        let socket = try Socket(.shared, .pub)
        defer { socket.close() }
        let error = #expect(throws: ZMQError.self) { try socket.bind("bogus://nowhere") }
        #expect(error?.code == .protocolNotSupported)
        #expect(error?.function == "zmq_bind")
        #expect(error?.description.contains("bogus://nowhere") == true)
    }

    @Test("binding a tcp port twice fails with EADDRINUSE")
    func addressInUse() throws {
        let first = try Socket(.shared, .pull)
        try first.bind("tcp://127.0.0.1:*")
        let second = try Socket(.shared, .pull)
        defer { first.close(); second.close() }
        let error = #expect(throws: ZMQError.self) { try second.bind(try first.lastEndpoint) }
        #expect(error?.code == .addressInUse)
        #expect(error?.errno == EADDRINUSE)
    }

    @Test("a malformed endpoint fails with EINVAL")
    func malformedEndpoint() throws {
        let socket = try Socket(.shared, .dealer)
        defer { socket.close() }
        let error = #expect(throws: ZMQError.self) { try socket.connect("tcp://") }
        #expect(error?.code == .invalidArgument)
        #expect(error?.function == "zmq_connect")
    }

    @Test("ROUTER_MANDATORY reports an unknown peer with EHOSTUNREACH")
    func routerMandatory() throws {
        let router = try Socket(.shared, .router)
        try router.setOption(.routerMandatory, 1)
        try router.bind(endpoint("inproc"))
        defer { router.close() }
        let error = #expect(throws: ZMQError.self) { try router.send([Array("nobody".utf8), [1]]) }
        #expect(error?.code == .hostUnreachable)
        #expect(error?.function == "zmq_send")
    }

    @Test("a message over MAXMSGSIZE is refused: the receiver never sees it")
    func maxMessageSize() throws {
        let pull = try Socket(.shared, .pull)
        try pull.setMaxMessageSize(1024)
        try pull.bind("tcp://127.0.0.1:*")
        let push = try Socket(.shared, .push)
        try push.connect(try pull.lastEndpoint)
        defer { push.close(); pull.close() }
        try push.send([Array(repeating: 1, count: 4096)])
        #expect(try receive(pull, timeoutMilliseconds: 300) == nil)
    }
}

@Suite("ZeroMQ sockets: the ZAP User-Id")
struct UserIDTests {
    /// libzmq 4.3.4's ROUTER leaves the metadata off the routing-id frame of a message it prefetched
    /// while a poll asked whether the socket was readable (fixed upstream after 4.3.4, "ROUTER loses
    /// first frame metadata on message prefetch"): read from that frame alone, the first message after
    /// every poll came without its peer's User-Id, so the dispatcher took an authenticated DISPATCH for
    /// an unauthenticated one, and a retry of it could be sequenced a second time under another id.
    @Test("every message received after a poll carries its connection's User-Id, the first of the burst too")
    func userIDAfterPoll() throws {
        guard Curve.isAvailable else { return }
        let context = try Context()
        let server = try Curve.keyPair(), client = try Curve.keyPair()
        // A ZAP handler that admits every CURVE peer as "alice".
        let zap = try Socket(context, .rep)
        try zap.bind("inproc://zeromq.zap.01")
        nonisolated(unsafe) let handler = zap
        let stop = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        Thread {
            defer { handler.close(); done.signal() }
            while !stop.withLock({ $0 }) {
                var poller = Poller()
                poller.add(.socket(handler))
                guard (try? poller.poll(timeoutMilliseconds: 50)) ?? 0 > 0, let request = try? handler.receive(dontWait: true), request.count >= 2
                else {
                    continue
                }
                _ = try? handler.send([Array("1.0".utf8), request[1], Array("200".utf8), Array("OK".utf8), Array("alice".utf8), []])
            }
        }.start()
        let router = try Socket(context, .router)
        try router.makeCurveServer(secretKey: server.secretKey)
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try Socket(context, .dealer)
        try dealer.makeCurveClient(serverKey: server.publicKey, publicKey: client.publicKey, secretKey: client.secretKey)
        try dealer.connect(try router.lastEndpoint)
        defer {
            dealer.close()
            router.close()
            stop.withLock { $0 = true }
            done.wait()
        }
        for round in 0..<3 {
            for index in 0..<4 { try dealer.send([[UInt8(round), UInt8(index)]]) }
            var received = 0
            let deadline = Date().addingTimeInterval(10)
            while received < 4 && Date() < deadline {
                var poller = Poller()
                poller.add(.socket(router))
                guard try poller.poll(timeoutMilliseconds: 100) > 0 else { continue }
                var userID: [UInt8]? = nil
                while let frames = try router.receive(dontWait: true, userID: &userID) {
                    #expect(userID == Array("alice".utf8), "round \(round), message \(frames.last ?? [])")
                    received += 1
                }
            }
            #expect(received == 4)
        }
    }
}
