import FluxCore

extension Session {
    /// The most actions a session may hold: far beyond any recording a person replays, and small enough
    /// that no count or seq derived from it can overflow.
    public static let maxActions = 10_000_000

    /// Checks a session file before anything is written from it, with the rules the cluster itself
    /// applies: store names as `cluster check` takes them (the name becomes a file name and a line of
    /// `cluster.toml`), each action as the dispatcher's intake admits it (a valid type name, a payload
    /// within `maxPayloadBytes`, accepted by its app's decoder when `apps` holds the app), and every
    /// number within range. The error names the field.
    public func validate(apps: [any AnyApp], maxPayloadBytes: Int = Defaults.maxPayloadBytes) throws(RewindError) {
        guard from >= 1, from <= to, to < UInt64(Int64.max) else {
            throw RewindError("session: from \(from) and to \(to) must satisfy 1 ≤ from ≤ to < 2^63")
        }
        guard actions.count <= Session.maxActions else {
            throw RewindError("session: \(actions.count) actions, more than the \(Session.maxActions) a session may hold")
        }
        guard to - from + 1 == UInt64(actions.count) else {
            throw RewindError("session: seqs \(from)…\(to) need \(to - from + 1) actions, the file has \(actions.count)")
        }
        guard !stores.isEmpty else { throw RewindError("session: no stores") }
        var names: Set<String> = []
        for (index, store) in stores.enumerated() {
            guard NodeName.isValid(store.name) else {
                throw RewindError("session: stores[\(index)].name \(quoted(store.name)) must be \(NodeName.rule)")
            }
            guard NodeName.isValid(store.app) else {
                throw RewindError("session: stores[\(index)].app \(quoted(store.app)) must be \(NodeName.rule)")
            }
            guard names.insert(store.name).inserted else { throw RewindError("session: store '\(store.name)' appears twice") }
            guard store.version < from else {
                throw RewindError("session: stores[\(index)].version \(store.version) is not before the session's first seq \(from)")
            }
        }
        let byName = Dictionary(apps.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let recorded = Set(stores.map(\.app))
        if let anchor {
            guard anchor.seq == from - 1 else { throw RewindError("session: anchor.seq \(anchor.seq) must be \(from - 1), the seq before from") }
            try check(anchor, field: "anchor", apps: byName, maxPayloadBytes: maxPayloadBytes)
        }
        for (index, action) in actions.enumerated() {
            let expected = from + UInt64(index)
            guard action.seq == expected else { throw RewindError("session: actions[\(index)].seq \(action.seq) must be \(expected)") }
            if action.app == Schedules.topic {
                // A schedule request: not an app's action, but one the dispatcher reads when it opens the journal.
                let valid =
                    switch action.type {
                    case Schedules.scheduleType: (try? WireCodec().decode(ScheduleRequest.self, from: [UInt8](action.wire))) != nil
                    case Schedules.cancelType: (try? WireCodec().decode(ScheduleCancel.self, from: [UInt8](action.wire))) != nil
                    default: false
                    }
                guard valid else { throw RewindError("session: actions[\(index)] is not a schedule request the dispatcher reads") }
                continue
            }
            guard recorded.contains(action.app) || byName[action.app] != nil else {
                throw RewindError("session: actions[\(index)].app \(quoted(action.app)) is not an app of the session's stores")
            }
            try check(action, field: "actions[\(index)]", apps: byName, maxPayloadBytes: maxPayloadBytes)
        }
    }

    /// What the intake checks of one action.
    private func check(_ action: Action, field: String, apps: [String: any AnyApp], maxPayloadBytes: Int) throws(RewindError) {
        guard action.type.utf8.count <= Header.maxActionTypeLength, Header.isValidActionType(Array(action.type.utf8)) else {
            throw RewindError("session: \(field).type \(quoted(action.type)) is not an action type (letters, digits and '_', at most 255 bytes)")
        }
        guard NodeName.isValid(action.app) else { throw RewindError("session: \(field).app \(quoted(action.app)) is not an app name") }
        guard action.wire.count <= maxPayloadBytes else {
            throw RewindError("session: \(field) has a payload of \(action.wire.count) bytes, over the intake's limit of \(maxPayloadBytes)")
        }
        if let app = apps[action.app] {
            do {
                try app.check(actionType: action.type, payload: [UInt8](action.wire))
            } catch {
                throw RewindError("session: \(field) (\(action.app).\(action.type)) is refused by its app: \(error.reason)")
            }
        }
    }

    private func quoted(_ text: String) -> String {
        "'"
            + String(
                text.unicodeScalars.prefix(80).map { $0.isASCII && $0.value >= 0x20 ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined())
            + "'"
    }
}
