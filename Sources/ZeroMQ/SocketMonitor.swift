import CZMQ

/// Counts the peers connected to a bound socket, from libzmq's socket monitor (ACCEPTED and
/// DISCONNECTED events). Monitors cover tcp and ipc; over inproc the count stays 0.
///
/// Like the socket it watches, a monitor belongs to one thread: call `drain()` before reading
/// `connected`, and ``drain(ifDueAt:)`` on each turn so that its events do not pile up, rather than
/// polling `socket` (libzmq's poll costs two system calls per socket on each pass, on every turn).
public final class SocketMonitor {
    public let socket: Socket
    public private(set) var connected = 0
    /// When ``drain(ifDueAt:)`` reads the events next (monotonic ms).
    private var nextDrainMs: UInt64 = 0
    /// How often ``drain(ifDueAt:)`` reads them.
    package static let drainIntervalMilliseconds: UInt64 = 1000
    private static let accepted = UInt16(ZMQ_EVENT_ACCEPTED)
    private static let disconnected = UInt16(ZMQ_EVENT_DISCONNECTED)

    /// Starts monitoring `watched`. `name` must be unique in the context (it names an inproc endpoint).
    public init(_ watched: Socket, context: Context, name: String) throws(ZMQError) {
        let endpoint = "inproc://zflux-monitor-\(name)"
        _ = try zmqCall("zmq_socket_monitor", context: endpoint) {
            zmq_socket_monitor(watched.handle, endpoint, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED)
        }
        socket = try Socket(context, .pair)
        try socket.connect(endpoint)
    }

    deinit { socket.close() }

    /// Reads every pending event when ``drainIntervalMilliseconds`` have passed since it last did, at
    /// `now` (monotonic ms).
    package func drain(ifDueAt now: UInt64) {
        guard now >= nextDrainMs else { return }
        nextDrainMs = now + Self.drainIntervalMilliseconds
        drain()
    }

    /// Reads every pending event and updates `connected`.
    public func drain() {
        while let frames = try? socket.receive(dontWait: true) {
            guard let first = frames.first, first.count >= 2 else { continue }
            let event = UInt16(first[0]) | UInt16(first[1]) << 8
            if event == SocketMonitor.accepted { connected += 1 }
            if event == SocketMonitor.disconnected { connected = max(0, connected - 1) }
        }
    }
}
