import Foundation

extension Process {
    /// Waits up to `timeout` for the process to exit on its own; true if it did (or never ran).
    @discardableResult
    public func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning && ContinuousClock.now < deadline { usleep(10_000) }
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
}
