import FluxCore

/// Views following a part of a store's state (a ``StatePath``), by topic: the value last published
/// there and the version it changed at.
///
/// A selection is followed from the moment a view subscribes to its topic until the last one leaves
/// (the shell reads the state publisher's subscriptions), and at most `limit` are followed at once. The
/// store publishes a selection's value when it changes, and each follower hears only its own topic.
struct Selections {
    struct Selection: Equatable {
        var path: StatePath
        /// The value last published on the selection's topic.
        var value: JSONValue
        /// The version of the state the value changed at.
        var version: UInt64
    }

    let limit: Int
    private var byTopic: [String: Selection] = [:]

    init(limit: Int) { self.limit = limit }

    var isEmpty: Bool { byTopic.isEmpty }
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
        return version
    }

    /// The last follower of `topic` left.
    mutating func unfollow(_ topic: String) { byTopic[topic] = nil }

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
