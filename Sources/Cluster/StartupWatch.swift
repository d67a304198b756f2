import FluxCore

/// How `cluster up` decides, from each node's status answers over time, that the cluster is ready, is
/// still starting, or is stuck. A store replaying a long journal is waited for as long as its version
/// keeps moving, with a progress line every few seconds; a node silent, or a store not moving, for
/// `stallMilliseconds` fails the start with a reason. Time is an input: nothing here sleeps.
public struct StartupWatch: Sendable {
    public enum Verdict: Equatable, Sendable {
        case ready
        /// Not ready yet; `progress` is a line to show, now and then.
        case waiting(progress: String?)
        case stuck(String)
    }

    public let stallMilliseconds: UInt64
    public let progressEveryMilliseconds: UInt64
    private var moved: [String: (version: UInt64, at: UInt64)] = [:]
    private var reportedAtMs: [String: UInt64] = [:]

    public init(stallMilliseconds: UInt64 = 15_000, progressEveryMilliseconds: UInt64 = 2_000) {
        self.stallMilliseconds = stallMilliseconds
        self.progressEveryMilliseconds = progressEveryMilliseconds
    }

    /// What `status` (nil: no answer) of node `name`, asked at `now` (ms), means.
    public mutating func observe(_ name: String, status: NodeStatus?, now: UInt64) -> Verdict {
        let last = moved[name] ?? (0, now)
        if moved[name] == nil { moved[name] = last }
        guard let status else {
            let silent = now - last.at
            return silent > stallMilliseconds ? .stuck("\(name) did not answer for \(silent / 1000) s") : .waiting(progress: nil)
        }
        if status.isReady { return .ready }
        let version = status.version ?? 0
        var current = last
        if version > last.version {
            current = (version, now)
            moved[name] = current
        }
        let head = max(status.dispatcherHead ?? 0, version)
        if now - current.at > stallMilliseconds {
            let why = status.problem.map { ": \($0)" } ?? ""
            return .stuck("\(name) stopped catching up at version \(version) of \(head) for \((now - current.at) / 1000) s\(why)")
        }
        guard now - (reportedAtMs[name] ?? 0) >= progressEveryMilliseconds else { return .waiting(progress: nil) }
        reportedAtMs[name] = now
        // A fresh cluster has nothing to catch up with: the store waits for the dispatcher's word.
        guard head > 0 else { return .waiting(progress: "\(name) starting: waiting for the dispatcher's first heartbeat") }
        guard version < head else { return .waiting(progress: "\(name) caught up at version \(version): subscribing to the dispatcher") }
        return .waiting(progress: "\(name) catching up: version \(version) of \(head)")
    }
}
