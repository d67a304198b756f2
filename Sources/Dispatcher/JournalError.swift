import Foundation

public struct JournalError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    static func posix(_ call: String, _ path: String) -> JournalError {
        JournalError("\(call) \(path) failed: \(String(cString: strerror(errno)))")
    }
}
