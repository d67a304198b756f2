import FluxCore
import ZeroMQ

/// One request/reply exchange with a node's ROUTER (snapshot, status), on the calling thread.
public func requestReply(
    context: Context = .shared, endpoint: String, request: Message, expecting kind: MessageKind,
    timeoutMilliseconds: Int = 5000
) throws -> Message? {
    let socket = try SocketDefaults.dealer(context)
    defer { socket.close() }
    try socket.connect(endpoint)
    try socket.send(request.frames)
    let deadline = MonotonicClock.nowMilliseconds() + UInt64(timeoutMilliseconds)
    while true {
        let now = MonotonicClock.nowMilliseconds()
        guard now < deadline else { return nil }
        var poller = Poller()
        poller.add(.socket(socket))
        guard try poller.poll(timeoutMilliseconds: Int(deadline - now)) > 0 else { continue }
        guard let frames = try socket.receive(dontWait: true), let reply = try? Message(frames: frames) else { continue }
        if reply.kind == kind { return reply }
    }
}
