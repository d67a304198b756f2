import FluxCore
import ZeroMQ

/// Socket settings every node applies the same way.
public enum SocketDefaults {
    /// Largest message a node accepts from a peer; larger ones make libzmq drop the peer's connection.
    public static let maxMessageSize: Int64 = 16 << 20
    /// Largest action payload a cluster may accept: the receive limit less room for the headers and
    /// lengths around it in a REPLAY-BATCH, so every accepted action can also be replayed.
    public static let maxPayloadBytes = Int(maxMessageSize) - (64 << 10)
    /// Bytes a socket may hold queued for one peer (`[cluster] queue_mb`). libzmq counts its queues
    /// in messages, so a node turns this into a high-water mark with ``highWaterMark(queueBytes:largestMessage:ceiling:)``.
    public static let queueBytes = Settings.Cluster.queueMb.fallback << 20
    /// Messages a socket queues for one peer unless a node sets fewer (`[cluster] high_water_mark`); a
    /// node lowers it further so that the queue fits ``queueBytes``.
    public static let highWaterMarkMessages = Int32(Settings.Cluster.highWaterMark.fallback)
    /// Largest request a replay or snapshot ROUTER takes: requests are a header and a few bytes.
    public static let maxRequestSize: Int64 = 64 << 10

    /// The high-water mark that keeps a queue of messages no larger than `largestMessage` within
    /// `queueBytes`: at most `ceiling` (the configured count), at least one.
    public static func highWaterMark(queueBytes: Int, largestMessage: Int, ceiling: Int32) -> Int32 {
        let fits = queueBytes / max(largestMessage, 1)
        return Int32(clamping: max(1, min(Int(ceiling), fits)))
    }

    /// ZMTP heartbeats on every connection, both ways: a peer silent for `heartbeatTimeout` is dropped
    /// (and a connecting side reconnects), so dead peers are noticed even when no messages flow.
    static func heartbeat(_ socket: Socket) throws(ZMQError) {
        try socket.setOption(.heartbeatInterval, 1000)
        try socket.setOption(.heartbeatTimeout, 3000)
        try socket.setOption(.heartbeatTTL, 3000)
    }

    /// A ROUTER that reports unroutable replies instead of dropping them silently, and refuses
    /// oversized messages.
    public static func router(_ context: Context) throws(ZMQError) -> Socket {
        let socket = try Socket(context, .router)
        try socket.setOption(.routerMandatory, 1)
        try socket.setMaxMessageSize(maxMessageSize)
        try socket.setOption(.sendHighWaterMark, highWaterMarkMessages)
        try socket.setOption(.receiveHighWaterMark, highWaterMarkMessages)
        try heartbeat(socket)
        return socket
    }

    /// A ROUTER that answers small requests (replay, snapshot, status): a peer sending anything larger
    /// is dropped, and at most 64 of its requests wait, so what a peer can push in stays small.
    public static func requestRouter(_ context: Context) throws(ZMQError) -> Socket {
        let socket = try router(context)
        try socket.setMaxMessageSize(maxRequestSize)
        try socket.setOption(.receiveHighWaterMark, 64)
        return socket
    }

    public static func publisher(_ context: Context) throws(ZMQError) -> Socket {
        let socket = try Socket(context, .pub)
        try socket.setOption(.sendHighWaterMark, highWaterMarkMessages)
        try heartbeat(socket)
        return socket
    }

    /// A publisher that also reports its subscriptions (XPUB): every subscribe, so each new follower
    /// of a topic can be served, and the unsubscribe of the last one.
    public static func subscriptionPublisher(_ context: Context) throws(ZMQError) -> Socket {
        let socket = try Socket(context, .xpub)
        try socket.setOption(.sendHighWaterMark, highWaterMarkMessages)
        try socket.setOption(.xpubVerbose, 1)
        try socket.setMaxMessageSize(maxRequestSize)
        try heartbeat(socket)
        return socket
    }

    public static func subscriber(_ context: Context) throws(ZMQError) -> Socket {
        let socket = try Socket(context, .sub)
        try socket.setOption(.receiveHighWaterMark, highWaterMarkMessages)
        try socket.setMaxMessageSize(maxMessageSize)
        try socket.setOption(.reconnectInterval, 50)
        try socket.setOption(.reconnectIntervalMax, 1000)
        try heartbeat(socket)
        return socket
    }

    public static func dealer(_ context: Context) throws(ZMQError) -> Socket {
        let socket = try Socket(context, .dealer)
        try socket.setMaxMessageSize(maxMessageSize)
        try socket.setOption(.reconnectInterval, 50)
        try socket.setOption(.reconnectIntervalMax, 1000)
        try socket.setOption(.sendHighWaterMark, highWaterMarkMessages)
        try socket.setOption(.receiveHighWaterMark, highWaterMarkMessages)
        try heartbeat(socket)
        return socket
    }
}
