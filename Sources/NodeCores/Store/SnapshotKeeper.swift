/// A store's snapshots: when the next one is written, the views waiting for one while the store
/// catches up, and the whole state encoded for their answers.
///
/// A snapshot is written every `everyActions` actions and when the store stops, if the store keeps
/// snapshots at all. Views are answered only once the store has caught up, so that nobody sees a state
/// it is about to leave; those that ask before wait here, each once, at most `maxWaiting` of them.
struct SnapshotKeeper {
    /// Whether the store keeps snapshots (false: a restart replays everything).
    let writes: Bool
    let everyActions: Int
    let maxWaiting: Int
    /// The version of the last snapshot written to (or read from) disk.
    private(set) var writtenVersion: UInt64 = 0
    /// Peers of the snapshot endpoint that asked while the store was catching up, in order.
    private(set) var waiting: [[UInt8]] = []
    /// The whole state in wire form and its version, for snapshot answers: encoded when first asked for
    /// (or when published whole), so a store publishing changes only does not encode its whole state per
    /// update.
    var wholeState: (version: UInt64, bytes: [UInt8])?

    init(writes: Bool, everyActions: Int, maxWaiting: Int) {
        precondition(maxWaiting > 0, "a view may wait for a snapshot")
        self.writes = writes
        self.everyActions = everyActions
        self.maxWaiting = maxWaiting
    }

    /// Whether a snapshot of the state at `version` is due: `everyActions` after the last one, or at
    /// once when `force`d (the store is stopping), as long as the state moved since the last one.
    func isDue(version: UInt64, force: Bool) -> Bool {
        guard writes, version > writtenVersion else { return false }
        return force || version - writtenVersion >= UInt64(everyActions)
    }

    /// A snapshot at `version` was written, or the state was read from one. A write that fails counts
    /// as written too: the shell logs it, and the next is tried after as many actions more, not on
    /// every turn.
    mutating func wrote(_ version: UInt64) {
        // Read at start, then written only when due: past the last one.
        precondition(version >= writtenVersion, "snapshots are written at growing versions: \(version) after \(writtenVersion)")
        writtenVersion = version
    }

    /// The state was dropped for an empty one: nothing written or encoded describes it.
    mutating func reset() {
        writtenVersion = 0
        wholeState = nil
    }

    /// `peer` asked for a snapshot before the store caught up: it is answered then, once.
    mutating func wait(_ peer: [UInt8]) {
        guard waiting.count < maxWaiting, !waiting.contains(peer) else { return }
        waiting.append(peer)
        assert(waiting.count <= maxWaiting, "the views waiting for a snapshot are bounded")
    }

    /// The peers waiting, in the order they asked, no longer waiting.
    mutating func takeWaiting() -> [[UInt8]] {
        defer { waiting.removeAll() }
        return waiting
    }
}
