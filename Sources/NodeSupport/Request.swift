import FluxCore
import Foundation
import ZeroMQ

/// One request/reply exchange with a node's ROUTER (snapshot, status), on the calling thread.
public func requestReply(
    context: Context = .shared, endpoint: String, request: Message, expecting kind: MessageKind,
    timeoutMilliseconds: Int = 5000
) throws -> Message? {
    let socket = try SocketDefaults.dealer(context)
    defer { socket.close() }
    try socket.connectSecurely(endpoint)
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

/// Asks a node for its status (bounded) and returns the decoded JSON document, or nil without an answer.
public func nodeStatus(context: Context = .shared, endpoint: String, timeoutMilliseconds: Int = 500) -> [String: Any]? {
    guard let reply = try? requestReply(
        context: context, endpoint: endpoint, request: Message(header: Header(kind: .statusRequest)),
        expecting: .status, timeoutMilliseconds: timeoutMilliseconds)
    else { return nil }
    return (try? JSONSerialization.jsonObject(with: Data(reply.payload))) as? [String: Any]
}

/// True once the node answers, and, for a store, once it has caught up with the dispatcher (it answers
/// views) and its subscription carries messages (every action dispatched from now on reaches it live
/// and runs its effects).
public func nodeIsReady(context: Context = .shared, endpoint: String) -> Bool {
    guard let status = nodeStatus(context: context, endpoint: endpoint) else { return false }
    return status["role"] as? String != "store"
        || (status["subscribed"] as? Bool == true && status["caught_up"] as? Bool == true)
}
