import CZMQ

/// A set of sockets and plain file descriptors waited on together with `zmq_poll`.
///
/// Like the sockets it holds, a poller belongs to one thread.
public struct Poller {
    public enum Item {
        case socket(Socket)
        case fileDescriptor(Int32)
    }

    private var items: [zmq_pollitem_t] = []
    private var sockets: [Socket?] = []

    public init() {}

    /// Adds an item polled for input; returns its index for `isReadable(_:)`.
    @discardableResult
    public mutating func add(_ item: Item) -> Int {
        switch item {
        case .socket(let socket):
            items.append(zmq_pollitem_t(socket: socket.handle, fd: -1, events: Int16(ZMQ_POLLIN), revents: 0))
            sockets.append(socket)
        case .fileDescriptor(let fd):
            items.append(zmq_pollitem_t(socket: nil, fd: fd, events: Int16(ZMQ_POLLIN), revents: 0))
            sockets.append(nil)
        }
        return items.count - 1
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever, 0: just look) and returns how many items are
    /// readable. An interrupted wait returns 0.
    public mutating func poll(timeoutMilliseconds: Int) throws(ZMQError) -> Int {
        let count = items.count
        let rc = items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, Int32(count), timeoutMilliseconds) }
        if rc < 0 {
            let err = zmq_errno()
            if err == EINTR { return 0 }
            throw ZMQError(errno: err, function: "zmq_poll")
        }
        return Int(rc)
    }

    public func isReadable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLIN) != 0
    }
}
