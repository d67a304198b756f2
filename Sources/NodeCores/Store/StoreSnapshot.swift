/// A store's state as a snapshot keeps it: the app, the state in wire form, its version and the
/// history it was built from. The shell reads and writes it (`SnapshotFile`); the core only restores
/// from it and asks for new ones.
public struct StoreSnapshot: Equatable, Sendable {
    public var version: UInt64
    public var app: String
    public var state: [UInt8]
    /// The history (``HistoryID``) the state was built from; 0 when not known (older snapshots).
    public var history: UInt64

    public init(version: UInt64, history: UInt64 = 0, app: String, state: [UInt8]) {
        self.version = version
        self.history = history
        self.app = app
        self.state = state
    }
}

/// Why a snapshot was not written, read or restored.
package struct SnapshotError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
