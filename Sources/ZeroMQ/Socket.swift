import CZMQ

/// The socket types zflux uses.
public enum SocketType: Sendable {
    case pub, sub, xpub, xsub, dealer, router, push, pull, pair, req, rep

    var raw: Int32 {
        switch self {
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .xpub: ZMQ_XPUB
        case .xsub: ZMQ_XSUB
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        }
    }
}

/// One libzmq socket.
///
/// libzmq sockets are not thread safe: a `Socket` is created, used and closed by the one thread that
/// owns it (a node's poll-loop thread). It is deliberately not `Sendable`.
public final class Socket {
    let handle: UnsafeMutableRawPointer
    public let type: SocketType
    private var closed = false

    public init(_ context: Context, _ type: SocketType) throws(ZMQError) {
        guard let h = zmq_socket(context.handle, type.raw) else { throw ZMQError.last("zmq_socket") }
        handle = h
        self.type = type
        // Shutdown must never hang on unsent messages (zguide: always set LINGER).
        try setOption(.linger, 0)
    }

    deinit { close() }

    /// Closes the socket now; later calls are no-ops.
    public func close() {
        guard !closed else { return }
        closed = true
        _ = zmq_close(handle)
    }

    public func bind(_ endpoint: String) throws(ZMQError) {
        _ = try zmqCall("zmq_bind", context: endpoint) { zmq_bind(handle, endpoint) }
    }

    public func connect(_ endpoint: String) throws(ZMQError) {
        _ = try zmqCall("zmq_connect", context: endpoint) { zmq_connect(handle, endpoint) }
    }

    public func unbind(_ endpoint: String) throws(ZMQError) {
        _ = try zmqCall("zmq_unbind", context: endpoint) { zmq_unbind(handle, endpoint) }
    }

    public func disconnect(_ endpoint: String) throws(ZMQError) {
        _ = try zmqCall("zmq_disconnect", context: endpoint) { zmq_disconnect(handle, endpoint) }
    }

    /// The endpoint the socket last bound, with a wildcard port resolved (e.g. `tcp://127.0.0.1:41234`).
    public var lastEndpoint: String {
        get throws(ZMQError) { try stringOption(ZMQ_LAST_ENDPOINT) }
    }

    public func subscribe(_ prefix: [UInt8] = []) throws(ZMQError) {
        try setBytesOption(ZMQ_SUBSCRIBE, prefix)
    }

    public func unsubscribe(_ prefix: [UInt8] = []) throws(ZMQError) {
        try setBytesOption(ZMQ_UNSUBSCRIBE, prefix)
    }
}
