/// An error from ``EtcdClient``: what went wrong, a message that says it in full, and the cause.
public struct EtcdError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is; codes can be added without breaking a `switch` that has a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case unreachable, rejected, leaseNotFound, malformedAnswer, invalidConfiguration
        }
        private let kind: Kind

        /// No endpoint answered: every one refused the connection or timed out.
        public static let unreachable = Code(kind: .unreachable)
        /// etcd answered and refused: ``EtcdError/status`` holds the HTTP status, the message etcd's own text.
        public static let rejected = Code(kind: .rejected)
        /// The lease expired or was revoked: whoever held keys under it holds them no more.
        public static let leaseNotFound = Code(kind: .leaseNotFound)
        /// The answer was not the JSON the v3 gateway sends.
        public static let malformedAnswer = Code(kind: .malformedAnswer)
        /// The client was given something it cannot use, such as no endpoint.
        public static let invalidConfiguration = Code(kind: .invalidConfiguration)

        public var description: String {
            switch kind {
            case .unreachable: "unreachable"
            case .rejected: "rejected"
            case .leaseNotFound: "lease not found"
            case .malformedAnswer: "malformed answer"
            case .invalidConfiguration: "invalid configuration"
            }
        }
    }

    public let code: Code
    /// What happened, with the endpoint, the operation and etcd's words where there are some.
    public let message: String
    /// The HTTP status when etcd answered with one.
    public let status: Int?
    /// The underlying error (a connection failure, a decoding error), if any.
    public let cause: (any Error)?

    init(_ code: Code, _ message: String, status: Int? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.cause = cause
    }

    public var description: String {
        if let cause { return "etcd: \(message) (\(cause))" }
        return "etcd: \(message)"
    }
}
