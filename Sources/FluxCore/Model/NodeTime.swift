/// One reading of both clocks. Node cores are handed one with every event instead of reading a clock
/// themselves: time is an input, so a simulator can drive them with time of its own. The clocks
/// themselves, and `NodeTime.now()`, are the shells' and live in `NodeSupport`, out of the cores' reach.
public struct NodeTime: Sendable, Equatable {
    /// Milliseconds on the monotonic clock: timeouts and intervals.
    public var milliseconds: UInt64
    /// Nanoseconds since the Unix epoch: timestamps in headers.
    public var wallNanoseconds: Int64

    public init(milliseconds: UInt64, wallNanoseconds: Int64) {
        self.milliseconds = milliseconds
        self.wallNanoseconds = wallNanoseconds
    }

    /// Milliseconds from `earlier` to this reading, 0 if `earlier` is later: a core stamps things in
    /// the same turn it was handed `now`, so never an overflow trap.
    public func elapsed(since earlier: UInt64) -> UInt64 { milliseconds > earlier ? milliseconds - earlier : 0 }
}
