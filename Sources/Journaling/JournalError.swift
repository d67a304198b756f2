import Foundation

public struct JournalError: Error, CustomStringConvertible {
    public let message: String
    /// The errno of the system call that failed, when one did.
    public var code: Int32?
    /// Set when a record fails its check with intact records after it (corruption, not a torn tail):
    /// the first seq that cannot be read intact, from which ``Journal/truncate(directory:fromSeq:)``
    /// would cut. A pair's member repairs from there (``PairLoop``); a single dispatcher stops.
    public var corruptFromSeq: UInt64?
    public init(_ message: String, code: Int32? = nil, corruptFromSeq: UInt64? = nil) {
        self.message = message
        self.code = code
        self.corruptFromSeq = corruptFromSeq
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
