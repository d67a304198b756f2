import FluxCore

/// Which STATUS requests a dispatcher answers: a few a second from each peer, a few hundred a second
/// in all, and only while what its replies may hold in libzmq stays within ``maxQueuedBytes`` (at
/// most ``maxQueuedBytesPerPeer`` a peer). The rest get no answer: a STATUS costs the node a status
/// to build and a reply that a peer which never reads leaves queued, so a flood of them neither
/// holds the intake's ACKs back nor grows the node.
///
/// `zflux status`, `top` and the supervisor ask on a connection of their own and leave once answered:
/// a peer holding replies is probed (``QueuedBytes``, with no window: the intake queues too many
/// messages a peer for a send to say anything), and its bytes go back once a probe finds it gone.
package struct StatusReplies {
    /// STATUS replies one peer is sent per second at most (as many at once).
    package static let perPeerPerSecond = 8
    /// STATUS replies all peers are sent per second at most.
    package static let perSecond = 256
    /// Bytes of STATUS replies all peers may hold in libzmq together, and one peer at most.
    package static let maxQueuedBytes = 16 << 20
    package static let maxQueuedBytesPerPeer = 1 << 20

    private var perPeer = RateLimiter(perSecond: StatusReplies.perPeerPerSecond)
    private var overall = RateLimiter(perSecond: StatusReplies.perSecond, maxClients: 1)
    /// What the replies may hold, by route and peer (a peer's routing id names it on one ROUTER only).
    package private(set) var queued = QueuedBytes(
        budget: StatusReplies.maxQueuedBytes, perPeer: StatusReplies.maxQueuedBytesPerPeer, window: nil, firstProbeMilliseconds: 50,
        maxProbeMilliseconds: 10_000, probeRoundMilliseconds: 50)
    /// Requests left unanswered, for the log.
    package private(set) var refused: UInt64 = 0

    package init() {}

    /// Whether a STATUS request from `peer` on `route` may be answered at `now` (monotonic ms): within
    /// the rates, and with room for a reply.
    package mutating func takes(_ route: DispatcherCore.Route, peer: [UInt8], now: UInt64) -> Bool {
        let key = StatusReplies.key(route, peer)
        let nanoseconds = now &* 1_000_000
        guard queued.held(by: key) < StatusReplies.maxQueuedBytesPerPeer, queued.total < StatusReplies.maxQueuedBytes,
            perPeer.allow(RateLimiter.key(key), now: nanoseconds), overall.allow(0, now: nanoseconds)
        else {
            refused += 1
            return false
        }
        return true
    }

    /// Hands `reply` to `deliver` if the budget takes it, and accounts it.
    package mutating func send(
        _ reply: Message, _ route: DispatcherCore.Route, to peer: [UInt8], now: UInt64, deliver: (Message) -> QueuedBytes.Delivery
    ) {
        let key = StatusReplies.key(route, peer)
        let bytes = reply.wireBytes
        guard queued.admits(bytes, to: key) else {
            refused += 1
            return
        }
        switch deliver(reply) {
        case .sent: queued.sent(bytes, to: key, now: now)
        case .gone: queued.gone(key)
        case .full: refused += 1
        }
    }

    /// Probes the peers holding replies that are due at `now`, with `probe`.
    package mutating func probe(now: UInt64, _ probe: (DispatcherCore.Route, [UInt8]) -> QueuedBytes.Delivery) {
        for key in queued.probesDue(now: now) {
            // Every key is one `key(_:_:)` made.
            guard let (route, peer) = StatusReplies.split(key) else { preconditionFailure("a STATUS peer's key names its route") }
            queued.probed(key, probe(route, peer), bytes: DispatcherInterpreter.probe.wireBytes, now: now)
        }
    }

    /// The bytes released since the last call.
    package mutating func takeReleased() -> Int { queued.takeReleased() }

    private static let routes: [DispatcherCore.Route] = [.intake, .replay, .replication]

    private static func key(_ route: DispatcherCore.Route, _ peer: [UInt8]) -> [UInt8] {
        [UInt8(routes.firstIndex(of: route) ?? 0)] + peer
    }

    private static func split(_ key: [UInt8]) -> (DispatcherCore.Route, [UInt8])? {
        guard let first = key.first, Int(first) < routes.count else { return nil }
        return (routes[Int(first)], Array(key.dropFirst()))
    }
}
