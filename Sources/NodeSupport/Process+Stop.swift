import Foundation

extension Process {
    /// Waits up to `timeout` for the process to exit on its own; true if it did (or never ran).
    ///
    /// Foundation learns of a child's end on a thread of its own, which a loaded machine may run late:
    /// a child that has already exited (a zombie, waiting to be reaped) counts as exited at the
    /// deadline, and is then waited for, so the deadline bounds a hang of the child, not Foundation's
    /// bookkeeping.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        if isRunning && Process.hasEnded(processIdentifier) { waitUntilExit() }
        return !isRunning
    }

    /// Stops a child the one way every part of zflux does: SIGTERM, up to `grace` to shut down
    /// cleanly, then SIGKILL; returns once it is reaped. True if it exited within the grace period.
    @discardableResult
    public func stop(grace: Duration) -> Bool {
        guard processIdentifier != 0 else { return true }  // never started
        if isRunning { kill(processIdentifier, SIGTERM) }
        let clean = waitForExit(timeout: grace)
        if !clean { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
        return clean
    }

    /// Whether the process `pid` has ended but is not reaped yet (a zombie), from /proc: the state
    /// after the command's closing parenthesis in /proc/PID/stat is `Z` (or `X`, being reaped).
    package static func hasEnded(_ pid: Int32) -> Bool {
        guard pid > 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[close...].dropFirst().drop { $0 == " " }.first
        return state == "Z" || state == "X"
    }
}
