import FluxCore
import Foundation
import ZeroMQ

/// One request/reply exchange with a node's ROUTER (snapshot, status), on the calling thread.
public func requestReply(
    context: Context = .shared, endpoint: String, security: Security.Settings? = nil, request: Message,
    expecting kind: MessageKind, timeoutMilliseconds: Int = 5000
) throws -> Message? {
    let socket = try SocketDefaults.dealer(context)
    defer { socket.close() }
    try socket.connectSecurely(endpoint, security)
    // The timeout is for silence: every part of an answer in parts moves the deadline on.
    var deadline = MonotonicClock.nowMilliseconds() + UInt64(timeoutMilliseconds)
    // Over a list of endpoints a message waits for a connection that is up (ZMQ_IMMEDIATE): never block.
    guard try socket.sendWhenConnected(request.frames, untilMilliseconds: deadline) else { return nil }
    var parts = MessageAssembler()  // a whole state over 4 MiB comes in parts
    while true {
        let now = MonotonicClock.nowMilliseconds()
        guard now < deadline else { return nil }
        var poller = Poller()
        poller.add(.socket(socket))
        guard try poller.poll(timeoutMilliseconds: Int(deadline - now)) > 0 else { continue }
        guard let frames = try socket.receive(dontWait: true), let part = try? Message(frames: frames) else { continue }
        // A snapshot in parts comes a few at a time: ask for the next ones.
        if part.header.flags.contains(.part) { deadline = MonotonicClock.nowMilliseconds() + UInt64(timeoutMilliseconds) }
        if let more = MessageParts.continuation(after: part) { _ = try socket.send(more.frames, dontWait: true) }
        guard let reply = parts.accept(part) else { continue }
        if reply.kind == kind { return reply }
    }
}

/// Asks a node for its status (bounded); nil without an answer or with one that is not a status.
public func nodeStatus(
    context: Context = .shared, endpoint: String, security: Security.Settings? = nil, timeoutMilliseconds: Int = 500
) -> NodeStatus? {
    guard
        let reply = try? requestReply(
            context: context, endpoint: endpoint, security: security, request: Message(header: Header(kind: .statusRequest)),
            expecting: .status, timeoutMilliseconds: timeoutMilliseconds)
    else { return nil }
    return try? NodeStatus.decode(reply.payload)
}

/// True once the node answers and is ready to serve (``NodeStatus/isReady``).
public func nodeIsReady(context: Context = .shared, endpoint: String, security: Security.Settings? = nil) -> Bool {
    nodeStatus(context: context, endpoint: endpoint, security: security)?.isReady ?? false
}

extension Socket {
    /// Sends without blocking, trying again every millisecond while no connection can take the message
    /// (a socket connected to a list of endpoints, ``connectSecurely(_:_:)``, sends only on connections
    /// that are up), until the monotonic `deadline` (ms). False: nothing was sent by then.
    public func sendWhenConnected(_ frames: [[UInt8]], untilMilliseconds deadline: UInt64) throws -> Bool {
        while true {
            if try send(frames, dontWait: true) { return true }
            if MonotonicClock.nowMilliseconds() >= deadline { return false }
            usleep(1000)
        }
    }
}
