/// Remembers, per client, the seq given to each recent (client id, client seq), so a retried dispatch
/// is answered with its original seq instead of becoming a second action; and what it had to forget,
/// so a retry of that is answered "window passed" (``Lookup/forgotten``), never sequenced again.
///
/// Bounded:
/// - each client keeps its newest `window` entries; past that, `forgottenThrough` rises to the highest
///   client seq it let go;
/// - each owner (an authenticated key, or a connection) holds at most `perOwner` client ids; past
///   that, its own oldest are forgotten;
/// - at most `maxClients` client ids and `maxEntries` (client seq, seq) entries are held in all. Past
///   either, an eighth of it is freed from the owners that hold the most: every owner above a level is
///   brought down to it (its oldest ids go first), the highest level that frees enough, so an owner
///   holding no more than that level is not touched however much others flood. Only when the owners
///   hold one id each (a flood of connections) do the least recently seen go.
/// - a client forgotten whole leaves a tombstone (its id and highest client seq, about 64 bytes with
///   its bookkeeping) among the newest `maxTombstones`; a client forgotten before those is unknown.
///
/// The table is rebuilt at start by recording the journal's newest records in order (owner 0), and
/// it forgets the same way then.
struct DedupTable {
    /// What the table knows of a (client id, client seq).
    enum Lookup: Equatable {
        /// Sequenced as this seq.
        case sequenced(UInt64)
        /// The table let it go: it may have been sequenced (its client sequenced this client seq or a
        /// later one), and its seq is no longer known.
        case forgotten
        /// Never sequenced, as far as the table knows.
        case new
    }

    struct ClientEntries {
        var seqs: [UInt64: UInt64] = [:]
        var order: [UInt64] = []
        var start = 0
        var lastSeen: UInt64 = 0
        var owner: UInt64 = 0
        /// The highest client seq sequenced whose entry is gone (0: none).
        var forgottenThrough: UInt64 = 0
        /// The highest client seq recorded.
        var highest: UInt64 = 0
    }

    /// One owner's client ids, in the order it took them; `live` of them are still its own (an id
    /// forgotten or taken over by another owner stays in `ids` until it comes up).
    struct OwnerList {
        var ids: [UInt64] = []
        var start = 0
        var live = 0
        /// The (client seq, seq) entries its live clients hold.
        var entries = 0
    }

    let window: Int
    let maxClients: Int
    let perOwner: Int
    let maxTombstones: Int
    let maxEntries: Int
    private var totalEntries = 0
    private var clients: [UInt64: ClientEntries] = [:]
    private var owners: [UInt64: OwnerList] = [:]
    /// Clients forgotten whole: their highest client seq sequenced, and the serial of the mark in
    /// `tombstoneOrder` that made it (an id forgotten, sequenced again and forgotten again has two).
    private var tombstones: [UInt64: (through: UInt64, serial: UInt64)] = [:]
    private var tombstoneOrder: [(client: UInt64, serial: UInt64)] = []
    private var tombstoneStart = 0
    private var tombstoneSerial: UInt64 = 0
    private var tick: UInt64 = 0

    init(window: Int, maxClients: Int = 8192, perOwner: Int = 1024, maxTombstones: Int = 65_536, maxEntries: Int = 1 << 20) {
        self.window = max(window, 1)
        self.maxEntries = max(maxEntries, self.window * 2)
        self.maxClients = max(maxClients, 8)
        self.perOwner = max(perOwner, 1)
        self.maxTombstones = max(maxTombstones, 1)
    }

    func lookup(client: UInt64, clientSeq: UInt64) -> Lookup {
        if let entries = clients[client] {
            if let seq = entries.seqs[clientSeq] { return .sequenced(seq) }
            return clientSeq <= entries.forgottenThrough ? .forgotten : .new
        }
        if let tombstone = tombstones[client], clientSeq <= tombstone.through { return .forgotten }
        return .new
    }

    func seq(client: UInt64, clientSeq: UInt64) -> UInt64? {
        clients[client]?.seqs[clientSeq]
    }

    mutating func record(client: UInt64, clientSeq: UInt64, seq: UInt64, owner: UInt64 = 0) {
        tick += 1
        if let current = clients[client]?.owner {
            // A client recovered from the journal (owner 0), or one that came back on a new connection,
            // counts as the owner that sequences through it now.
            if current != owner {
                let held = clients[client]?.seqs.count ?? 0
                owners[current]?.live -= 1
                owners[current]?.entries -= held
                if owners[current]?.live == 0 { owners[current] = nil }
                clients[client]?.owner = owner
                owners[owner, default: OwnerList()].entries += held
                adopt(client, by: owner)
            }
        } else {
            if clients.count >= maxClients { makeRoom(byEntries: false) }
            var entries = ClientEntries(owner: owner)
            if let tombstone = tombstones.removeValue(forKey: client) { entries.forgottenThrough = tombstone.through }
            clients[client] = entries
            adopt(client, by: owner)
        }
        let window = window, tick = tick
        // Mutated in place through the dictionary's subscript: no copy of the client's entries. (The
        // client is its owner's newest, so `adopt` did not forget it.)
        let added = Self.update(&clients[client, default: ClientEntries()], clientSeq: clientSeq, seq: seq, tick: tick, window: window)
        if added != 0 {
            owners[owner, default: OwnerList()].entries += added
            totalEntries += added
            if totalEntries > maxEntries { makeRoom(byEntries: true) }
        }
        precondition(clients.count <= maxClients, "the dedup table holds \(clients.count) clients, more than \(maxClients)")
        precondition(totalEntries <= maxEntries, "the dedup table holds \(totalEntries) entries, more than \(maxEntries)")
    }

    /// Records `clientSeq`'s seq in `entries`, letting its oldest go past `window`; returns how many
    /// entries it holds more (0 or 1).
    private static func update(_ entries: inout ClientEntries, clientSeq: UInt64, seq: UInt64, tick: UInt64, window: Int) -> Int {
        entries.lastSeen = tick
        let before = entries.seqs.count
        entries.seqs[clientSeq] = seq
        entries.highest = max(entries.highest, clientSeq)
        entries.order.append(clientSeq)
        if entries.order.count - entries.start > window {
            let oldest = entries.order[entries.start]
            entries.seqs[oldest] = nil
            entries.forgottenThrough = max(entries.forgottenThrough, oldest)
            entries.start += 1
            if entries.start > window {
                entries.order.removeFirst(entries.start)
                entries.start = 0
            }
        }
        return entries.seqs.count - before
    }

    /// Counts `client` as one of `owner`'s, forgetting that owner's oldest past its share.
    private mutating func adopt(_ client: UInt64, by owner: UInt64) {
        owners[owner, default: OwnerList()].ids.append(client)
        owners[owner, default: OwnerList()].live += 1
        // Owner 0 is the journal's, when the table is rebuilt at start: every client of the cluster, so
        // only the table's own bound applies to it (the share of one owner would forget all but the
        // newest 1,024 clients at each restart).
        let perOwner = owner == 0 ? maxClients : perOwner
        forgetOldest(of: owner) { $0.live > perOwner }
    }

    /// Forgets `owner`'s client ids, the first it took first, while `over` says it holds too much.
    private mutating func forgetOldest(of owner: UInt64, while over: (OwnerList) -> Bool) {
        while let list = owners[owner], over(list), list.start < list.ids.count {
            let id = list.ids[list.start]
            owners[owner]?.start += 1
            if clients[id]?.owner == owner { forget(id) }
        }
        if let list = owners[owner], list.start > list.ids.count / 2 {
            owners[owner]?.ids.removeFirst(list.start)
            owners[owner]?.start = 0
        }
    }

    /// Forgets a whole client, keeping its tombstone (and only the newest `maxTombstones` of those).
    private mutating func forget(_ client: UInt64) {
        guard let entries = clients.removeValue(forKey: client) else { return }
        let held = entries.seqs.count
        totalEntries -= held
        owners[entries.owner]?.live -= 1
        owners[entries.owner]?.entries -= held
        if owners[entries.owner]?.live == 0 { owners[entries.owner] = nil }
        tombstoneSerial += 1
        tombstones[client] = (max(entries.highest, entries.forgottenThrough), tombstoneSerial)
        tombstoneOrder.append((client, tombstoneSerial))
        while tombstones.count > maxTombstones, tombstoneStart < tombstoneOrder.count {
            let oldest = tombstoneOrder[tombstoneStart]
            tombstoneStart += 1
            if tombstones[oldest.client]?.serial == oldest.serial { tombstones[oldest.client] = nil }
        }
        // Marks of ids sequenced again (or tombstoned again) are stale: dropped once they are as many
        // as the live ones.
        if tombstoneOrder.count - tombstoneStart > 2 * max(tombstones.count, 1024) || tombstoneStart > maxTombstones {
            tombstoneOrder = tombstoneOrder[tombstoneStart...].filter { tombstones[$0.client]?.serial == $0.serial }
            tombstoneStart = 0
        }
        precondition(tombstones.count <= maxTombstones, "\(tombstones.count) tombstones, more than \(maxTombstones)")
    }

    var clientCount: Int { clients.count }
    var entryCount: Int { totalEntries }
    var tombstoneCount: Int { tombstones.count }

    /// Frees an eighth of the table (of its client ids, or of its entries) from the owners that hold
    /// the most (the type's comment).
    private mutating func makeRoom(byEntries: Bool) {
        let capacity = byEntries ? maxEntries : maxClients
        let need = capacity / 8
        func weight(_ list: OwnerList) -> Int { byEntries ? list.entries : list.live }
        let weights = owners.values.map(weight)
        func freed(atLevel level: Int) -> Int { weights.reduce(0) { $0 + max(0, $1 - level) } }
        // The highest level whose excess frees `need`: freed(0) is the whole table, at least `need`.
        var low = 0, high = weights.max() ?? 0
        while low < high {
            let middle = (low + high + 1) / 2
            if freed(atLevel: middle) >= need { low = middle } else { high = middle - 1 }
        }
        let level = max(low, 1)
        for owner in Array(owners.keys) { forgetOldest(of: owner) { weight($0) > level } }
        func used() -> Int { byEntries ? totalEntries : clients.count }
        guard used() > capacity - need else { return }
        // Every owner holds one id: the least recently seen clients go.
        for (client, _) in clients.sorted(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            guard used() > capacity - need else { break }
            forget(client)
        }
    }
}
