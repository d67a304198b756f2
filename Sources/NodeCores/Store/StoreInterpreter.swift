import FluxCore
import Logging

/// What a store's interpreter needs of the world it runs in. The real loop (`StoreLoop`) gives it
/// libzmq sockets, effect tasks and the snapshot file; the simulator its network and disk.
package protocol StoreIO: AnyObject {
    /// Sends on the replay DEALER, to the dispatcher.
    func requestReplay(_ message: Message)
    /// Publishes on the state PUB: a whole state over ``MessageParts`` 's limit comes in parts.
    func publish(_ message: Message)
    /// Answers one peer of the snapshot ROUTER.
    func reply(to peer: [UInt8], _ message: Message)
    /// Answers one peer of the snapshot ROUTER with the store's status.
    func replyStatus(to peer: [UInt8])
    /// Sends an effect's action to the dispatcher's intake.
    func dispatch(_ message: Message)
    func runEffects(_ effects: PendingEffects)
    func cancelEffects()
    /// Drops the dispatcher-facing connections (subscription, replay) and makes new ones.
    func reconnect() throws
    /// Writes the snapshot where it survives the process (whole or not at all).
    func writeSnapshot(_ snapshot: StoreSnapshot)
}

/// Carries out a ``StoreCore``'s commands, in the order the core gave them, against a ``StoreIO``.
/// The real loop and the simulator both run it.
///
/// One rule is its own: a store that died ``Defaults/crashesBeforeQuarantine`` times in a row on one
/// action asks the dispatcher to quarantine it before each replay request that would bring it again, until its version is past it.
package final class StoreInterpreter {
    package let core: StoreCore
    unowned let io: any StoreIO
    let logger: Logger
    /// The store's name and app, for the quarantine request and the snapshot.
    let name: String
    let app: String
    /// The nodes' effect token: the dispatcher takes a quarantine request from a store only.
    let effectToken: UInt64
    /// The action this store died on twice in a row, asked to be quarantined with each replay request
    /// until the store's version is past it.
    package private(set) var quarantineAsked: (seq: UInt64, reason: String)?

    package init(
        core: StoreCore, io: any StoreIO, logger: Logger, name: String, app: String, effectToken: UInt64,
        quarantineAsked: (seq: UInt64, reason: String)? = nil
    ) {
        self.core = core
        self.io = io
        self.logger = logger
        self.name = name
        self.app = app
        self.effectToken = effectToken
        self.quarantineAsked = quarantineAsked
    }

    /// The action a store asks the dispatcher to quarantine as it starts, given the seq its last runs
    /// died applying and how many times in a row (nil: none): after ``Defaults/crashesBeforeQuarantine``
    /// deaths on one seq, with `reason` (said the times) in the request. The real store and the
    /// simulator both decide by it.
    package static func quarantineToAsk(diedAt seq: UInt64, times: UInt64, reason: (UInt64) -> String) -> (seq: UInt64, reason: String)? {
        precondition(seq > 0 || times == 0, "a store dies applying an action, which has a seq")
        guard times >= UInt64(Defaults.crashesBeforeQuarantine) else { return nil }
        return (seq, reason(times))
    }

    /// Carries out what the core has decided so far.
    package func carryOut() throws {
        for command in core.takeCommands() {
            switch command {
            case .requestReplay(let message):
                if let asked = quarantineAsked {
                    if core.version >= asked.seq {
                        quarantineAsked = nil
                    } else {
                        // Before the replay that would reach it: the dispatcher keeps the quarantine first,
                        // and the replay carries the action as a tombstone.
                        logger.warning(
                            "asking the dispatcher to quarantine the action this store keeps dying on",
                            metadata: ["store": "\(name)", "seq": "\(asked.seq)"])
                        io.requestReplay(
                            Message(
                                topic: app, header: Header(kind: .quarantineRequest, seq: asked.seq, ref: effectToken),
                                payload: Array(asked.reason.utf8)))
                    }
                }
                io.requestReplay(message)
            // A whole state over 4 MiB goes out in parts: the receivers' limit is 16 MiB a frame.
            case .publish(let message):
                for part in MessageParts.split(message) { io.publish(part) }
            case .reply(let peer, let message): io.reply(to: peer, message)
            case .replyStatus(let peer): io.replyStatus(to: peer)
            case .dispatch(let message): io.dispatch(message)
            case .runEffects(let pending): io.runEffects(pending)
            case .cancelEffects: io.cancelEffects()
            case .reconnect: try io.reconnect()
            case .writeSnapshot(let version, let history, let snapshot):
                io.writeSnapshot(StoreSnapshot(version: version, history: history, app: app, state: snapshot))
            }
        }
    }
}
