import FluxCore

/// Views following a part of a store's state (a ``StatePath``), by topic: the value last published
/// there and the version it changed at.
///
/// A selection is followed from the moment a view subscribes to its topic until the last one leaves
/// (the shell reads the state publisher's subscriptions), and at most `limit` are followed at once. The
/// store publishes a selection's value when it changes, and each follower hears only its own topic.
///
/// A subscription does not say which peer made it, so the cap is shared, and a peer holding `limit`
/// topics would leave a real view's selection out. A view also asks for its selection's snapshot, on
/// the snapshot socket, where every request names its peer: a topic refused at the cap is followed
/// after all when a peer asks for it, up to `claimsPerPeer` topics per peer and `hardLimit` in all.
struct Selections {
    struct Selection: Equatable {
        var path: StatePath
        /// The value last published on the selection's topic.
        var value: JSONValue
        /// The version of the state the value changed at.
        var version: UInt64
    }

    let limit: Int
    let claimsPerPeer: Int
    let hardLimit: Int
    private var byTopic: [String: Selection] = [:]
    /// Topics subscribed to but refused at the cap, that a peer may claim. Bounded: past `hardLimit * 4`
    /// one is forgotten (any one: a forgotten topic is only not claimable, and its view asks again).
    private var refusedSet: Set<String> = []
    /// The topics each peer claimed past the cap.
    private var claims: [[UInt8]: Set<String>] = [:]
    /// Topics a peer asked for before their subscription arrived (requests and subscriptions travel on
    /// two sockets), bounded like `refusedSet`: claimed for that peer if the subscription is refused.
    /// Every operation on these is a hash lookup, so a peer repeating a topic costs no scan.
    private var asked: [String: [UInt8]] = [:]

    /// The longest topic followed, in UTF-8 bytes: a path into a state is short, and a longer one is
    /// ignored before it is parsed or remembered, which bounds what the sets above can hold
    /// (`hardLimit * 4` topics of at most 1 KiB each).
    static let maxTopicBytes = 1024

    /// The state as JSON, read once per version for every selection that asks (a state is read whole
    /// to select from it, so a flood of subscriptions must not read it again each time).
    private var cachedState: (version: UInt64, history: UInt64, state: JSONValue)?
    /// Refused selections since the last warning, and when that was (ms): one line per interval.
    private var refusedSinceWarning = 0
    private var lastWarningMs: UInt64?
    /// How often the store says it refused selections past the cap.
    static let warningIntervalMs: UInt64 = 60_000

    init(limit: Int, claimsPerPeer: Int = 16, hardLimit: Int? = nil) {
        self.limit = limit
        self.claimsPerPeer = claimsPerPeer
        self.hardLimit = hardLimit ?? limit * 4
        precondition(limit > 0 && self.hardLimit >= limit, "the hard limit is past the cap")
    }

    var isEmpty: Bool { byTopic.isEmpty }
    /// How many refused and asked-for topics are remembered (bounded by `hardLimit * 4` each).
    var remembered: (refused: Int, asked: Int) { (refusedSet.count, asked.count) }
    var count: Int { byTopic.count }

    subscript(topic: String) -> Selection? { byTopic[topic] }

    /// Every selection, in topic order.
    var sorted: [(topic: String, selection: Selection)] {
        byTopic.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Whether `topic` may be followed: it is already, or there is room for one more.
    func canFollow(_ topic: String) -> Bool { byTopic[topic] != nil || byTopic.count < limit }

    /// Follows `topic` with its `value` now, and returns the version to publish it at: the one it last
    /// changed at when it is followed already, else `published` (the version last published whole).
    mutating func follow(_ topic: String, path: StatePath, value: JSONValue, published: UInt64) -> UInt64 {
        let version = byTopic[topic]?.version ?? published
        byTopic[topic] = Selection(path: path, value: value, version: version)
        // Followed within the cap (``canFollow(_:)``), or claimed within the hard limit (``canClaim(_:by:)``).
        assert(byTopic.count <= hardLimit, "the selections followed stay within the hard limit")
        return version
    }

    /// The last follower of `topic` left. The state read for selections goes with the last follower.
    mutating func unfollow(_ topic: String) {
        byTopic[topic] = nil
        if byTopic.isEmpty { cachedState = nil }
        refusedSet.remove(topic)
        asked[topic] = nil
        for (peer, topics) in claims where topics.contains(topic) {
            claims[peer]?.remove(topic)
            if claims[peer]?.isEmpty == true { claims[peer] = nil }
        }
    }

    /// A peer asked for `topic` while it was neither followed nor refused: its subscription may come next.
    mutating func asked(_ topic: String, by peer: [UInt8]) {
        if asked[topic] == nil, asked.count >= hardLimit * 4 { asked.remove(at: asked.startIndex) }
        asked[topic] = peer
        assert(asked.count <= hardLimit * 4, "the topics asked for are bounded")
    }

    /// The peer that asked for `topic` before its subscription, if any (and forgets it).
    mutating func takeAsker(of topic: String) -> [UInt8]? {
        asked.removeValue(forKey: topic)
    }

    /// The state read for selections at `version` of `history`, if it was read already.
    func state(version: UInt64, history: UInt64) -> JSONValue? {
        guard let cached = cachedState, cached.version == version, cached.history == history else { return nil }
        return cached.state
    }

    /// Keeps `state`, read at `version` of `history`, for the selections that ask next.
    mutating func keep(_ state: JSONValue, version: UInt64, history: UInt64) { cachedState = (version, history, state) }

    /// Forgets the state read for selections (the store starts over).
    mutating func forgetState() { cachedState = nil }

    /// Counts a subscription refused at the cap. Returns how many were refused since the last warning
    /// when another is due (one per `warningIntervalMs`), and counts from 0 again; nil otherwise.
    mutating func countRefusal(now: NodeTime) -> Int? {
        refusedSinceWarning += 1
        if let last = lastWarningMs, now.elapsed(since: last) < Selections.warningIntervalMs { return nil }
        defer { (lastWarningMs, refusedSinceWarning) = (now.milliseconds, 0) }
        return refusedSinceWarning
    }

    /// `topic` was subscribed to while the cap was full: remembered (bounded) for a peer to claim.
    mutating func refuse(_ topic: String) {
        guard !refusedSet.contains(topic) else { return }
        if refusedSet.count >= hardLimit * 4 { refusedSet.remove(at: refusedSet.startIndex) }
        refusedSet.insert(topic)
        assert(refusedSet.count <= hardLimit * 4, "the refused topics are bounded")
    }

    /// Whether `peer`, asking for `topic`'s snapshot, may have it followed past the cap.
    func canClaim(_ topic: String, by peer: [UInt8]) -> Bool {
        refusedSet.contains(topic) && (claims[peer]?.count ?? 0) < claimsPerPeer && byTopic.count < hardLimit
    }

    /// Follows a refused `topic` for `peer`, past the cap.
    mutating func claim(_ topic: String, by peer: [UInt8], path: StatePath, value: JSONValue, published: UInt64) -> UInt64 {
        claims[peer, default: []].insert(topic)
        refusedSet.remove(topic)
        return follow(topic, path: path, value: value, published: published)
    }

    /// The selections whose value in `state` differs from the one last published, in topic order, each
    /// with its new value, which counts as changed at `version`.
    mutating func changes(in state: JSONValue, at version: UInt64) -> [(topic: String, value: JSONValue)] {
        var changed: [(topic: String, value: JSONValue)] = []
        for (topic, selection) in sorted {
            let value = selection.path.select(in: state)
            guard value != selection.value else { continue }
            byTopic[topic]?.value = value
            byTopic[topic]?.version = version
            changed.append((topic, value))
        }
        return changed
    }
}
