import FluxCore

/// A workload made concrete for one run: wire payloads generated ahead of time (so the sending loop
/// does no JSON work) and the order of the mix, both drawn from a seed.
public struct LoadMix: Sendable {
    /// Per entry: its app's topic, its action type and its payloads.
    public struct Kind: Sendable {
        public var app: String
        public var type: String
        /// A pool used in turn (action `i` sends `payloads[i % count]`), or, when ``perAction``, the
        /// payload of each action of the run by its index (empty at the indices of other kinds).
        public var payloads: [[UInt8]]
        /// The template numbers actions (`${seq}`): each action has its own payload.
        public var perAction = false

        public init(app: String, type: String, payloads: [[UInt8]], perAction: Bool = false) {
            self.app = app
            self.type = type
            self.payloads = payloads
            self.perAction = perAction
        }
    }

    public var kinds: [Kind]
    /// Which kind action `i` is: `kinds[picks[i % picks.count]]`, drawn by weight.
    public var picks: [UInt16]

    /// Payloads generated per entry whose template does not number its actions.
    public static let poolSize = 4096
    /// At most this many actions of a run get their own `${seq}` payload (rounded up to whole turns of
    /// the mix); later ones reuse them in turn, so `${seq}` counts up to about a million, then repeats.
    public static let perActionLimit = 1 << 20

    public init(kinds: [Kind], picks: [UInt16]) {
        self.kinds = kinds
        self.picks = picks.isEmpty ? [0] : picks
    }

    /// One kind, every action (what `LoadClient` sent before mixes).
    public init(app: String, type: String, payloads: [[UInt8]]) {
        self.init(kinds: [Kind(app: app, type: type, payloads: payloads)], picks: [0])
    }

    /// Draws the order of the mix by weight and makes every entry's payloads with `encode` (app, type,
    /// arguments JSON → wire payload). With `actions` (how many the run sends), an entry whose template
    /// has `${seq}` gets one payload per action of the run, numbered by the action's index; without it,
    /// or for other entries, a pool of ``poolSize`` where `${seq}` numbers the payload in the pool.
    public init(
        _ workload: Workload, seed: UInt64 = 1, actions: Int? = nil, encode: (String, String, [UInt8]) throws -> [UInt8]
    ) throws {
        var rng = SplitMix64(seed: seed)
        // Smooth weighted order: each entry appears in proportion to its weight, shuffled by the seed.
        let total = workload.mix.reduce(0) { $0 + $1.weight }
        let length = max(LoadMix.poolSize, total)
        var picks: [UInt16] = []
        picks.reserveCapacity(length)
        for (index, entry) in workload.mix.enumerated() {
            let share = Int((Double(entry.weight) / Double(total) * Double(length)).rounded())
            picks.append(contentsOf: repeatElement(UInt16(index), count: max(1, share)))
        }
        picks.shuffle(using: &rng)
        self.init(kinds: [], picks: picks)
        // Per-action payloads cover whole turns of `picks`, so index `i % covered` is of `i`'s kind.
        let turns = actions.map { (min($0, LoadMix.perActionLimit) + self.picks.count - 1) / self.picks.count } ?? 0
        let covered = max(1, turns) * self.picks.count
        for (number, entry) in workload.mix.enumerated() {
            func make(_ seq: Int, _ rng: inout SplitMix64) throws -> [UInt8] {
                let arguments = entry.payload.render(seq: seq, using: &rng)
                do {
                    return try encode(entry.app, entry.type, Array(arguments.utf8))
                } catch {
                    // Every payload is checked before the run; say which entry made a bad one.
                    throw BenchError("\(entry.location ?? workload.name): \(error)")
                }
            }
            if actions != nil && entry.payload.numbersActions {
                var payloads = [[UInt8]](repeating: [], count: covered)
                for index in 0..<covered where kind(of: index) == number { payloads[index] = try make(index, &rng) }
                kinds.append(Kind(app: entry.app, type: entry.type, payloads: payloads, perAction: true))
            } else {
                var payloads: [[UInt8]] = []
                payloads.reserveCapacity(LoadMix.poolSize)
                for seq in 0..<LoadMix.poolSize { payloads.append(try make(seq, &rng)) }
                kinds.append(Kind(app: entry.app, type: entry.type, payloads: payloads))
            }
        }
    }

    /// The kind of action `index`.
    public func kind(of index: Int) -> Int { Int(picks[index % picks.count]) }

    /// The payload of action `index`.
    public func payload(of index: Int) -> [UInt8] {
        let kind = kinds[kind(of: index)]
        return kind.payloads[index % kind.payloads.count]
    }
}
