import FluxCore

/// The simulated network: every message between nodes is an event, with latency; in a chaos window
/// some are dropped, duplicated or reordered, and nothing crosses a partitioned link. Peers of a
/// ROUTER are known by an id that names the node and its incarnation, so an answer to a process that
/// has since restarted is lost, as it is on a real socket.
extension Simulation {
    /// What travels, by the socket it arrives on.
    enum Delivery {
        case intake(peer: [UInt8], Message)
        case intakeReply(Message)
        case action(Message)
        case replayRequest(peer: [UInt8], Message)
        case replayReply(Message)
        case stateUpdate(Message)
        case snapshotRequest(peer: [UInt8], Message)
        case snapshotReply(Message)
        /// HA: a standby's message to the leader's replication ROUTER, and the leader's answers on
        /// the standby's connection.
        case replication(peer: [UInt8], Message)
        case replicationReply(connection: UInt64, Message)
        case leaseRequest(from: Int, incarnation: UInt64, LeaseRequest)
        case leaseAnswer(LeaseAnswer)
    }

    /// A link between two nodes, as partitions name it (either way round).
    static func link(_ a: Node, _ b: Node) -> [UInt64] { [min(a.code, b.code), max(a.code, b.code)] }

    /// The ROUTER peer id of a node's incarnation.
    static func peerID(_ node: Node, _ incarnation: UInt64) -> [UInt8] {
        var peer: [UInt8] = []
        peer.appendLittleEndian(node.code << 32 | incarnation)
        return peer
    }

    static func node(fromPeer peer: [UInt8]) -> (code: UInt64, incarnation: UInt64)? {
        guard peer.count == 8 else { return nil }
        let value = peer.readLittleEndian(UInt64.self, at: 0)
        return (value >> 32, value & 0xFFFF_FFFF)
    }

    func node(code: UInt64) -> Node? {
        switch code {
        case 1, 2: .dispatcher(Int(code - 1))
        case 9: .leaseService
        case 100..<200: .store(Int(code - 100))
        case 200..<300: .view(Int(code - 200))
        case 300..<400: .client(Int(code - 300))
        default: nil
        }
    }

    /// The connection a delivery travels on: a store's subscription and a view's snapshot socket are
    /// replaced on reconnect, and what was in flight on the old one is gone.
    func generation(of node: Node, _ delivery: Delivery) -> UInt64 {
        switch (node, delivery) {
        case (.store(let i), .action): stores[i].generation
        case (.view(let i), .snapshotReply): views[i].generation
        default: 0
        }
    }

    /// Sends `delivery` from one node to another: latency, and in a chaos window drops, duplicates
    /// and reordering; nothing crosses a link that is down.
    func send(_ delivery: Delivery, from: Node, to: Node, incarnation: UInt64? = nil) {
        guard !downLinks.contains(Simulation.link(from, to)) else { return }
        if chaos && rng.chance(0.05) { return }
        let target = incarnation ?? self.incarnation(of: to)
        let generation = generation(of: to, delivery)
        var latency = rng.micros(50...600)
        if chaos { latency += rng.micros(0...5_000) }
        queue.schedule(.deliver(to: to, incarnation: target, generation: generation, delivery), at: now + latency)
        if chaos && rng.chance(0.03) {
            queue.schedule(.deliver(to: to, incarnation: target, generation: generation, delivery), at: now + latency + rng.micros(0...3_000))
        }
    }

    /// A delivery arrives: a frozen process finds it in its socket when it runs again; otherwise the
    /// node's shell takes it, if it is still the incarnation it was sent to.
    func deliver(_ delivery: Delivery, to node: Node, incarnation: UInt64, generation: UInt64) {
        let frozen = frozenUntil(node)
        if frozen > now {
            // Queued in the socket until the process runs again.
            queue.schedule(.deliver(to: node, incarnation: incarnation, generation: generation, delivery), at: frozen)
            return
        }
        switch node {
        case .dispatcher(let index): dispatcherReceives(delivery, dispatcher: index, incarnation: incarnation)
        case .leaseService:
            guard incarnation == leaseService.incarnation else { return }
            leaseServiceReceives(delivery)
        case .store(let index): storeReceives(delivery, store: index, incarnation: incarnation, generation: generation)
        case .view(let index): viewReceives(delivery, view: index, incarnation: incarnation, generation: generation)
        case .client(let index): clientReceives(delivery, client: index)
        }
    }
}
