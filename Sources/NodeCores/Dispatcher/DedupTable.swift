/// Remembers, per client, the seq given to each recent (client id, client seq), so a retried dispatch
/// is answered with its original seq instead of becoming a second action.
///
/// Bounded: each client keeps its newest `window` entries; each owner (an authenticated key, or a
/// connection) keeps its `perOwner` newest client ids, so one peer flooding new ids forgets only its
/// own; and at most `maxClients` clients are kept in all (the least recently seen are forgotten first).
struct DedupTable {
    struct ClientEntries {
        var seqs: [UInt64: UInt64] = [:]
        var order: [UInt64] = []
        var start = 0
        var lastSeen: UInt64 = 0
        var owner: UInt64 = 0
    }

    let window: Int
    let maxClients: Int
    let perOwner: Int
    private var clients: [UInt64: ClientEntries] = [:]
    /// Each owner's client ids in the order they first appeared (0: recovered from the journal, no owner).
    private var owned: [UInt64: (ids: [UInt64], start: Int)] = [:]
    private var tick: UInt64 = 0

    init(window: Int, maxClients: Int = 8192, perOwner: Int = 1024) {
        self.window = max(window, 1)
        self.maxClients = max(maxClients, 2)
        self.perOwner = max(perOwner, 1)
    }

    func seq(client: UInt64, clientSeq: UInt64) -> UInt64? {
        clients[client]?.seqs[clientSeq]
    }

    mutating func record(client: UInt64, clientSeq: UInt64, seq: UInt64, owner: UInt64 = 0) {
        tick += 1
        if clients[client] == nil {
            if clients.count >= maxClients { forgetOldestClients() }
            if owner != 0 { adopt(client, by: owner) }
            clients[client] = ClientEntries(owner: owner)
        }
        let window = window, tick = tick
        // Mutated in place through the dictionary's subscript: no copy of the client's entries.
        Self.update(&clients[client, default: ClientEntries()], clientSeq: clientSeq, seq: seq, tick: tick, window: window)
    }

    private static func update(_ entries: inout ClientEntries, clientSeq: UInt64, seq: UInt64, tick: UInt64, window: Int) {
        entries.lastSeen = tick
        entries.seqs[clientSeq] = seq
        entries.order.append(clientSeq)
        if entries.order.count - entries.start > window {
            entries.seqs[entries.order[entries.start]] = nil
            entries.start += 1
            if entries.start > window {
                entries.order.removeFirst(entries.start)
                entries.start = 0
            }
        }
    }

    /// Counts `client` as one of `owner`'s, forgetting that owner's oldest client past its share.
    private mutating func adopt(_ client: UInt64, by owner: UInt64) {
        var list = owned[owner] ?? ([], 0)
        list.ids.append(client)
        while list.ids.count - list.start > perOwner {
            let oldest = list.ids[list.start]
            list.start += 1
            if clients[oldest]?.owner == owner { clients[oldest] = nil }
        }
        if list.start > perOwner {
            list.ids.removeFirst(list.start)
            list.start = 0
        }
        owned[owner] = list
    }

    var clientCount: Int { clients.count }

    private mutating func forgetOldestClients() {
        let sorted = clients.sorted { $0.value.lastSeen < $1.value.lastSeen }
        for (client, _) in sorted.prefix(maxClients / 2) { clients[client] = nil }
        // Owners' lists may name forgotten clients; those are skipped when they come up.
        owned = owned.filter { _, list in list.ids[list.start...].contains { clients[$0] != nil } }
    }
}
