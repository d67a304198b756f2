import FluxCore

/// The shape every node's core has (``DispatcherCore``, ``StandbyCore``, ``StoreCore``, ``ViewCore``), so
/// that someone who has read one can read the others, and the loops and the simulator drive each the
/// same way: events come in as method calls; decisions go out as `Command`s, taken in order with
/// ``takeCommands()``; the shell calls the core's `tick(now:)` again by ``nextDeadlineMs(now:)`` at the
/// latest; and what holds between any two events is checked each time the commands are taken, a broken
/// check reported to ``onBrokenInvariant`` when one is set (the simulator, ``invariant(_:_:report:)``).
package protocol NodeCore: AnyObject {
    /// What the core asks its shell to do.
    associatedtype Command
    /// Everything decided since the last call, in order; the core's invariants are checked first.
    func takeCommands() -> [Command]
    /// The latest the shell may wait, on its monotonic clock, before calling `tick(now:)` again.
    func nextDeadlineMs(now: NodeTime) -> UInt64
    /// Where a broken invariant is reported instead of stopping the process: set by the simulator alone.
    var onBrokenInvariant: ((String) -> Void)? { get set }
}
