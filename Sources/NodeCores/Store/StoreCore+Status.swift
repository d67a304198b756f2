import FluxCore

extension StoreCore {
    /// The store's status document; `subscribers` and `pid` are the shell's to know, and so is how many
    /// effects are running (`effectsRunning`), since the shell runs them.
    public func status(now: NodeTime, subscribers: Int, pid: Int) -> NodeStatus {
        var status = NodeStatus(
            role: .store, pid: pid, uptimeMs: now.elapsed(since: startedAtMs), subscribers: subscribers, rejected: rejected)
        status.name = rules.name
        status.app = rules.app.name
        status.version = version
        status.dispatcherHead = dispatcherHead
        status.applied = applied
        status.replayed = replayed
        status.gapsRepaired = gapsRepaired
        status.pending = pending.count
        status.dispatcher =
            now.elapsed(since: lastHeardFromDispatcherMs) <= UInt64(rules.dispatcherTimeoutMilliseconds) ? "connected" : "silent"
        status.reconnects = reconnects
        status.subscribed = liveAfter != nil
        status.caughtUp = caughtUp
        status.snapshotVersion = snapshotVersion
        status.effectsUnanswered = outbox.count
        status.effectsHeld = outbox.held
        status.effectsRefused = outbox.refused
        status.problem =
            problem
            ?? (outbox.held > 0
                ? "\(outbox.held) effects' actions refused as unknown by the dispatcher, kept and sent again: upgrade the dispatcher" : nil)
        status.history = history?.description
        if !quarantined.isEmpty { status.quarantined = quarantined }
        return status
    }
}
