import FluxCore

/// What a store's snapshot answers may hold in memory for its peers, all of them together: the
/// answers queued for peers that have not read them yet, each distinct answer once however many
/// peers it is queued for (the shell hands libzmq one shared copy, and counts it until libzmq lets go
/// of it). Past the budget a new answer is refused: its peer asks again after its timeout, as a view
/// does. The parts of large answers waiting for credit are bounded apart, by ``SnapshotTransfers``.
///
/// Before, every answer was copied into each peer's queue, up to 64 per peer: with a 3.6 MB state,
/// 20 peers that asked and never read took a store from 53 MiB to 3.1 GiB.
public enum SnapshotBudget {
    /// Bytes of answers queued for peers, all together.
    public static let queuedBytes = 64 << 20

    /// Whether a new answer of `size` bytes may be queued while `held` bytes are. A part is at most a
    /// few MiB, so an answer always fits an empty budget.
    public static func admits(_ size: Int, held: Int) -> Bool {
        precondition(size > 0 && size <= queuedBytes, "an answer part fits the budget alone")
        precondition(held >= 0, "bytes held are counted, never negative")
        return held + size <= queuedBytes
    }
}
