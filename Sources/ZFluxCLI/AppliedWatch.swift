import FluxCore
import NodeSupport
import ZeroMQ

/// Learns from an app's stores, over their state PUBs, when they have applied a seq or refused it:
/// what `zflux dispatch --wait` reports.
///
/// A store publishes a REJECTED message when its reducer refuses an action, a STATE when the action
/// changed its state and a HEARTBEAT (current through `ref`) when it did not. A subscription misses
/// what was published before it took effect, so ``waitUntilHeard(deadline:)`` waits for each store's
/// first message (its heartbeat comes within one interval) before the action is dispatched.
final class AppliedWatch {
    enum Outcome: Equatable {
        /// Every store has applied the seq.
        case applied
        /// A store refused it: its reducer (the app's `reject`), or, `quarantined`, it skipped the action
        /// because it crashed a store's reducer.
        case refused(store: String, reason: String, quarantined: Bool)
        /// These stores said nothing about the seq before the deadline.
        case timedOut(waitingFor: [String])
    }

    private struct Follower {
        let store: String
        let socket: Socket
        var heard = false
        var through: UInt64 = 0
    }

    private var followers: [Follower]
    /// Refusals seen so far, by seq.
    private var refusals: [UInt64: (store: String, reason: String, quarantined: Bool)] = [:]

    init(stores: [Topology.StoreEndpoints], security: Security.Settings?, context: Context = .shared) throws {
        followers = try stores.map { store in
            let socket = try SocketDefaults.subscriber(context)
            try socket.subscribe(Array(store.name.utf8))
            try socket.connectSecurely(store.state, security)
            return Follower(store: store.name, socket: socket)
        }
    }

    deinit { followers.forEach { $0.socket.close() } }

    /// Waits until every store has published something (false at the deadline). From then on,
    /// nothing they publish is missed.
    func waitUntilHeard(deadline: UInt64) throws -> Bool {
        try receive(until: deadline) { followers in followers.allSatisfy(\.heard) }
    }

    /// Stores that have not been heard from yet.
    var silent: [String] { followers.filter { !$0.heard }.map(\.store) }

    /// Waits until every store has applied `seq` or one refused it.
    func wait(for seq: UInt64, deadline: UInt64) throws -> Outcome {
        var refusal: (store: String, reason: String, quarantined: Bool)?
        let done = try receive(until: deadline) { [self] followers in
            refusal = refusals[seq]
            return refusal != nil || followers.allSatisfy { $0.through >= seq }
        }
        if let refusal { return .refused(store: refusal.store, reason: refusal.reason, quarantined: refusal.quarantined) }
        guard done else { return .timedOut(waitingFor: followers.filter { $0.through < seq }.map(\.store)) }
        return .applied
    }

    /// Reads what arrives until `satisfied` holds or the deadline passes.
    private func receive(until deadline: UInt64, _ satisfied: ([Follower]) -> Bool) throws -> Bool {
        while !satisfied(followers) {
            let now = MonotonicClock.nowMilliseconds()
            guard now < deadline else { return false }
            var poller = Poller()
            for follower in followers { poller.add(.socket(follower.socket)) }
            guard try poller.poll(timeoutMilliseconds: Int(deadline - now)) > 0 else { continue }
            for index in followers.indices {
                while let frames = try followers[index].socket.receive(dontWait: true) {
                    guard let message = try? Message(frames: frames), message.topicString == followers[index].store else { continue }
                    note(message, at: index)
                }
            }
        }
        return true
    }

    private func note(_ message: Message, at index: Int) {
        followers[index].heard = true
        let header = message.header
        switch message.kind {
        case .state:
            // The first part of a state in parts says its version as well as a whole one does.
            followers[index].through = max(followers[index].through, header.seq)
        case .heartbeat:
            // Unchanged since `seq`, current through `ref`.
            followers[index].through = max(followers[index].through, header.ref)
        case .rejected:
            refusals[header.seq] = (
                followers[index].store, String(decoding: message.payload, as: UTF8.self), header.flags.contains(.quarantined)
            )
            followers[index].through = max(followers[index].through, header.seq)
        default:
            break
        }
    }
}
