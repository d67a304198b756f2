import CZMQ

extension Socket {
    /// Sends one multipart message. Returns false when `dontWait` is set and the message could not be
    /// queued now (EAGAIN: high-water mark reached, or no peer for a ROUTER/DEALER).
    @discardableResult
    public func send(_ frames: [[UInt8]], dontWait: Bool = false) throws(ZMQError) -> Bool {
        try send(frames, dontWait: dontWait, more: false)
    }

    /// Sends `frames`; with `more`, the message goes on with the frames of the next send.
    func send(_ frames: [[UInt8]], dontWait: Bool, more: Bool) throws(ZMQError) -> Bool {
        precondition(!frames.isEmpty, "a message has at least one frame")
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = index < last || more ? ZMQ_SNDMORE : 0
            if dontWait { flags |= ZMQ_DONTWAIT }
            let rc: Int32 = frame.withUnsafeBytes { buf in
                while true {
                    let rc = zmq_send(handle, buf.baseAddress, buf.count, flags)
                    if rc >= 0 || zmq_errno() != EINTR { return rc }
                }
            }
            if rc < 0 {
                let err = zmq_errno()
                // libzmq queues a multipart message atomically: EAGAIN can only come on the first frame.
                if err == EAGAIN && index == 0 { return false }
                throw ZMQError(errno: err, function: "zmq_send")
            }
        }
        return true
    }

    /// Receives one whole multipart message, or nil when `dontWait` is set and none is waiting.
    public func receive(dontWait: Bool = false) throws(ZMQError) -> [[UInt8]]? {
        var ignored: [UInt8]? = nil
        return try receive(dontWait: dontWait, userID: &ignored)
    }

    /// Receives one whole multipart message and the "User-Id" its connection was admitted with by the
    /// ZAP handler (for CURVE, what the handler answered: the peer's public key); nil without one.
    public func receive(dontWait: Bool = false, userID: inout [UInt8]?) throws(ZMQError) -> [[UInt8]]? {
        userID = nil
        var frames: [[UInt8]] = []
        var msg = zmq_msg_t()
        while true {
            zmq_msg_init(&msg)
            defer { zmq_msg_close(&msg) }
            let flags: Int32 = (dontWait && frames.isEmpty) ? ZMQ_DONTWAIT : 0
            var rc: Int32
            repeat { rc = zmq_msg_recv(&msg, handle, flags) } while rc < 0 && zmq_errno() == EINTR
            if rc < 0 {
                let err = zmq_errno()
                if err == EAGAIN && frames.isEmpty { return nil }
                throw ZMQError(errno: err, function: "zmq_msg_recv")
            }
            let size = zmq_msg_size(&msg)
            if size == 0 {
                frames.append([])
            } else {
                // libzmq gives every message with content its data: without it, fail like a bad receive.
                guard let data = zmq_msg_data(&msg)?.assumingMemoryBound(to: UInt8.self) else {
                    throw ZMQError(errno: EFAULT, function: "zmq_msg_data")
                }
                frames.append(Array(UnsafeBufferPointer(start: data, count: size)))
            }
            // Every frame of a connection carries its metadata, except the routing-id frame a ROUTER
            // made while a poll prefetched the message (libzmq 4.3.4): the first frame that has it says.
            if userID == nil, let property = zmq_msg_gets(&msg, "User-Id") {
                let id = Array(String(cString: property).utf8)
                if !id.isEmpty { userID = id }
            }
            if zmq_msg_more(&msg) == 0 { return frames }
        }
    }
}
