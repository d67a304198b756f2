import FluxCore

/// What a view's interpreter needs of the world it runs in: the real loop (`ViewLoop`) gives it its
/// DEALER to the store and the screen; the simulator its network and its checker.
package protocol ViewIO: AnyObject {
    /// Sends a snapshot request to the store.
    func requestSnapshot(_ message: Message)
    /// Replaces the snapshot connection: what the old one had in flight is gone.
    func replaceSnapshotSocket()
    /// Shows an update.
    func show(_ update: ViewUpdate)
}

/// Carries out a ``ViewCore``'s commands, in the order the core gave them, against a ``ViewIO``. The
/// real loop and the simulator both run it.
package final class ViewInterpreter {
    package let core: ViewCore
    unowned let io: any ViewIO

    package init(core: ViewCore, io: any ViewIO) {
        self.core = core
        self.io = io
    }

    /// Carries out what the core has decided so far.
    package func carryOut() {
        for command in core.takeCommands() {
            switch command {
            case .requestSnapshot(let request): io.requestSnapshot(request)
            case .replaceSnapshotSocket: io.replaceSnapshotSocket()
            case .show(let update): io.show(update)
            }
        }
    }
}
