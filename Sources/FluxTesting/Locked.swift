import Foundation

/// A value several tasks or threads of a test share: what effects sent, what a view showed, what a
/// client got acknowledged.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through the lock.
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
