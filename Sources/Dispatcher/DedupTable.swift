/// Remembers, per client, the seq given to each recent (client id, client seq), so a retried dispatch
/// is answered with its original seq instead of becoming a second action.
///
/// Bounded: each client keeps its newest `window` entries, and at most `maxClients` clients are kept
/// (the least recently seen are forgotten first).
struct DedupTable {
    struct ClientEntries {
        var seqs: [UInt64: UInt64] = [:]
        var order: [UInt64] = []
        var start = 0
        var lastSeen: UInt64 = 0
    }

    let window: Int
    let maxClients: Int
    private var clients: [UInt64: ClientEntries] = [:]
    private var tick: UInt64 = 0

    init(window: Int, maxClients: Int = 8192) {
        self.window = max(window, 1)
        self.maxClients = max(maxClients, 2)
    }

    func seq(client: UInt64, clientSeq: UInt64) -> UInt64? {
        clients[client]?.seqs[clientSeq]
    }

    mutating func record(client: UInt64, clientSeq: UInt64, seq: UInt64) {
        tick += 1
        if clients[client] == nil && clients.count >= maxClients { forgetOldestClients() }
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

    var clientCount: Int { clients.count }

    private mutating func forgetOldestClients() {
        let sorted = clients.sorted { $0.value.lastSeen < $1.value.lastSeen }
        for (client, _) in sorted.prefix(maxClients / 2) { clients[client] = nil }
    }
}
