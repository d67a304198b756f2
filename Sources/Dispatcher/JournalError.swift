import Foundation

public struct JournalError: Error, CustomStringConvertible {
    public let message: String
    /// The errno of the system call that failed, when one did.
    public var code: Int32?
    public init(_ message: String, code: Int32? = nil) {
        self.message = message
        self.code = code
    }
    public var description: String { message }
    static func posix(_ call: String, _ path: String) -> JournalError {
        let code = errno
        return JournalError("\(call) \(path) failed: \(String(cString: strerror(code)))", code: code)
    }

    /// The disk (or the user's quota, or the file size limit) has no room: an append that fails so
    /// is undone whole, and may be tried again once there is room.
    public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }
}
