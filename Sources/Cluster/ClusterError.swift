/// A cluster that cannot be configured, started or kept running, with a message a person can act on
/// (a config error names its file and line).
public struct ClusterError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
