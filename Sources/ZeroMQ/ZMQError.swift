import CZMQ

/// An error from libzmq: the errno it set, libzmq's own description, and the function that failed.
public struct ZMQError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stable code over errno values callers commonly branch on; new codes can be added without
    /// breaking a `switch` that has a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let errno: Int32
        public static let wouldBlock = Code(errno: EAGAIN)
        public static let interrupted = Code(errno: EINTR)
        public static let hostUnreachable = Code(errno: EHOSTUNREACH)
        public static let invalidArgument = Code(errno: EINVAL)
        public static let terminated = Code(errno: ETERM)
        public static let protocolNotSupported = Code(errno: EPROTONOSUPPORT)
        public static let addressInUse = Code(errno: EADDRINUSE)
        public static let noSuchDevice = Code(errno: ENODEV)
        public var description: String { "errno \(errno)" }
    }

    public let code: Code
    /// The libzmq function (or wrapper operation) that failed, e.g. `zmq_bind`.
    public let function: String
    /// libzmq's text for the errno (`zmq_strerror`) plus any context the wrapper added.
    public let message: String

    public var errno: Int32 { code.errno }

    public init(errno: Int32, function: String, context: String? = nil) {
        self.code = Code(errno: errno)
        self.function = function
        let text = String(cString: zmq_strerror(errno))
        self.message = context.map { "\(text) (\($0))" } ?? text
    }

    /// Reads errno (through libzmq's `zmq_errno`) right after a failed libzmq call.
    static func last(_ function: String, context: String? = nil) -> ZMQError {
        ZMQError(errno: zmq_errno(), function: function, context: context)
    }

    public var description: String { "\(function) failed: \(message) [errno \(errno)]" }
}

/// Runs a libzmq call that returns -1 on failure, retrying on EINTR and throwing anything else.
@inline(__always)
func zmqCall(_ function: String, context: @autoclosure () -> String? = nil, _ body: () -> Int32) throws(ZMQError) -> Int32 {
    while true {
        let rc = body()
        if rc >= 0 { return rc }
        let err = zmq_errno()
        if err == EINTR { continue }
        throw ZMQError(errno: err, function: function, context: context())
    }
}
