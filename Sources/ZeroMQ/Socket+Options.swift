import CZMQ

/// Integer socket options (see `man zmq_setsockopt`).
public struct SocketOption: Sendable, Hashable {
    let raw: Int32
    let name: String

    public static let linger = SocketOption(raw: ZMQ_LINGER, name: "ZMQ_LINGER")
    public static let sendHighWaterMark = SocketOption(raw: ZMQ_SNDHWM, name: "ZMQ_SNDHWM")
    public static let receiveHighWaterMark = SocketOption(raw: ZMQ_RCVHWM, name: "ZMQ_RCVHWM")
    public static let sendTimeout = SocketOption(raw: ZMQ_SNDTIMEO, name: "ZMQ_SNDTIMEO")
    public static let receiveTimeout = SocketOption(raw: ZMQ_RCVTIMEO, name: "ZMQ_RCVTIMEO")
    public static let immediate = SocketOption(raw: ZMQ_IMMEDIATE, name: "ZMQ_IMMEDIATE")
    public static let routerMandatory = SocketOption(raw: ZMQ_ROUTER_MANDATORY, name: "ZMQ_ROUTER_MANDATORY")
    public static let heartbeatInterval = SocketOption(raw: ZMQ_HEARTBEAT_IVL, name: "ZMQ_HEARTBEAT_IVL")
    public static let heartbeatTimeout = SocketOption(raw: ZMQ_HEARTBEAT_TIMEOUT, name: "ZMQ_HEARTBEAT_TIMEOUT")
    public static let heartbeatTTL = SocketOption(raw: ZMQ_HEARTBEAT_TTL, name: "ZMQ_HEARTBEAT_TTL")
    public static let reconnectInterval = SocketOption(raw: ZMQ_RECONNECT_IVL, name: "ZMQ_RECONNECT_IVL")
    public static let reconnectIntervalMax = SocketOption(raw: ZMQ_RECONNECT_IVL_MAX, name: "ZMQ_RECONNECT_IVL_MAX")
    public static let ipv6 = SocketOption(raw: ZMQ_IPV6, name: "ZMQ_IPV6")
    public static let handshakeInterval = SocketOption(raw: ZMQ_HANDSHAKE_IVL, name: "ZMQ_HANDSHAKE_IVL")
    public static let curveServer = SocketOption(raw: ZMQ_CURVE_SERVER, name: "ZMQ_CURVE_SERVER")
    public static let receiveBuffer = SocketOption(raw: ZMQ_RCVBUF, name: "ZMQ_RCVBUF")
    public static let xpubVerbose = SocketOption(raw: ZMQ_XPUB_VERBOSE, name: "ZMQ_XPUB_VERBOSE")
}

extension Socket {
    public func setOption(_ option: SocketOption, _ value: Int32) throws(ZMQError) {
        var v = value
        _ = try zmqCall("zmq_setsockopt", context: option.name) {
            zmq_setsockopt(handle, option.raw, &v, MemoryLayout<Int32>.size)
        }
    }

    public func option(_ option: SocketOption) throws(ZMQError) -> Int32 {
        var v: Int32 = 0
        var size = MemoryLayout<Int32>.size
        _ = try zmqCall("zmq_getsockopt", context: option.name) { zmq_getsockopt(handle, option.raw, &v, &size) }
        return v
    }

    /// ZMQ_MAXMSGSIZE: a peer sending a larger message is disconnected by libzmq. -1 means no limit.
    public func setMaxMessageSize(_ bytes: Int64) throws(ZMQError) {
        var v = bytes
        _ = try zmqCall("zmq_setsockopt", context: "ZMQ_MAXMSGSIZE") {
            zmq_setsockopt(handle, ZMQ_MAXMSGSIZE, &v, MemoryLayout<Int64>.size)
        }
    }

    public var maxMessageSize: Int64 {
        get throws(ZMQError) {
            var v: Int64 = 0
            var size = MemoryLayout<Int64>.size
            _ = try zmqCall("zmq_getsockopt", context: "ZMQ_MAXMSGSIZE") {
                zmq_getsockopt(handle, ZMQ_MAXMSGSIZE, &v, &size)
            }
            return v
        }
    }

    /// ZMQ_ROUTING_ID: the identity a DEALER presents to a ROUTER.
    public func setRoutingID(_ id: [UInt8]) throws(ZMQError) {
        try setBytesOption(ZMQ_ROUTING_ID, id)
    }

    /// True while more frames of the current message are waiting (ZMQ_RCVMORE).
    public var hasMore: Bool {
        get throws(ZMQError) {
            var v: Int32 = 0
            var size = MemoryLayout<Int32>.size
            _ = try zmqCall("zmq_getsockopt", context: "ZMQ_RCVMORE") { zmq_getsockopt(handle, ZMQ_RCVMORE, &v, &size) }
            return v != 0
        }
    }

    func setBytesOption(_ raw: Int32, _ bytes: [UInt8]) throws(ZMQError) {
        _ = try zmqCall("zmq_setsockopt") {
            bytes.withUnsafeBytes { zmq_setsockopt(handle, raw, $0.baseAddress, $0.count) }
        }
    }

    func stringOption(_ raw: Int32) throws(ZMQError) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        _ = try zmqCall("zmq_getsockopt") { zmq_getsockopt(handle, raw, &buffer, &size) }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
