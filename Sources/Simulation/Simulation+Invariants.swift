import FluxCore
import NodeCores

/// The invariants of the rules (docs/ARCHITECTURE.md, The rules), checked all along: one history (a seq never names two actions),
/// ACK means durable, dedup, every store's state the reduction of the journal, views never go back
/// and show that reduction, effects at most once; and, once the faults heal, that everything
/// converges.
extension Simulation {
    /// An action left the dispatcher: a seq, once given, always names the same action.
    func witness(_ action: Message) {
        let seq = action.header.seq
        guard seq >= 1 else { return }
        result.invariantChecks += 1
        guard let known = history[seq] else {
            history[seq] = action
            if seq == scheduleModel.through + 1 { followSchedules() }
            return
        }
        if known.payload != action.payload || known.topic != action.topic || known.header.clientID != action.header.clientID
            || known.header.clientSeq != action.header.clientSeq
        {
            fail("one history", "seq \(seq) was sent as two different actions: stores that applied the first now hold another history")
        }
    }

    /// The state `app` has after the first `version` actions of the history.
    func referenceState(_ app: String, _ version: UInt64) -> [UInt8]? {
        guard var entry = reference[app] else { return nil }
        if entry.states.isEmpty, let initial = try? entry.runtime.encodedState() { entry.states.append(initial) }
        while entry.states.count <= Int(version) {
            guard let action = history[UInt64(entry.states.count)] else {
                reference[app] = entry
                return nil
            }
            // A poison action is quarantined in the end: every replica skips it.
            if options.poison && Simulation.isPoison(app: action.topicString, actionType: action.header.actionType, payload: action.payload) {
                entry.states.append(entry.states[entry.states.count - 1])
                continue
            }
            _ = try? entry.runtime.apply(
                app: action.topicString, actionType: action.header.actionType, payload: action.payload,
                stamp: Stamp(action.header), runEffects: false)
            entry.states.append((try? entry.runtime.encodedState()) ?? [])
        }
        reference[app] = entry
        return entry.states[Int(version)]
    }

    /// A store's state is the pure reduction of the history up to its version: checked on every whole
    /// state it publishes (once per burst that changed its version), and at the end.
    func checkStore(_ index: Int, version: UInt64? = nil, state: [UInt8]? = nil) {
        let store = stores[index]
        guard let core = store.core else { return }
        let version = version ?? core.version
        // Still on a history from before a restore (it has not heard the new epoch yet): not checked
        // against the new one. Once it follows the new epoch, every state it shows is.
        if let epoch = core.history?.epoch, staleEpochs.contains(epoch), version > staleAbove { return }
        result.invariantChecks += 1
        guard let expected = referenceState(store.spec.app, version) else {
            fail(
                "one history",
                "\(store.spec.name) is at version \(version) (history \(core.history.map { "\($0)" } ?? "none")), but the dispatcher "
                    + "(history \(leaderProcess?.core.map { "\($0.history)" } ?? "down")) never sent some action up to it")
            return
        }
        let actual = state ?? (try? core.encodedState()) ?? []
        if actual != expected {
            fail(
                "state = reduction of the journal",
                "\(store.spec.name) at version \(version) holds \(readable(store.spec.app, actual)); the journal's prefix reduces to \(readable(store.spec.app, expected))"
            )
        }
    }

    func readable(_ app: String, _ state: [UInt8]) -> String {
        let json = (try? apps[app]?.stateJSON(fromWire: state)) ?? state
        return String(decoding: json.prefix(300), as: UTF8.self)
    }

    /// A view never goes back, and shows the store's state at the version it claims.
    func checkView(_ index: Int, _ update: ViewUpdate) {
        let view = views[index]
        result.invariantChecks += 1
        // Within one history a view never goes back; an operator's restore of an older journal copy
        // rewinds the history, and then the view follows the store back.
        let rewound = discardedVersions != nil && HistoryID(rawValue: update.history).epoch > HistoryID(rawValue: view.shownHistory).epoch
        // How far a view says it is current never goes back. (The version of the last change may: a store
        // that rebuilt in a newer history can have its last change lower in it, current through as far.)
        if update.currentThrough < view.shown && !rewound {
            fail("views never go back", "view of \(update.store) was current through \(view.shown), then through \(update.currentThrough)")
            return
        }
        view.shown = update.currentThrough
        view.shownHistory = update.history
        let app = stores[view.store].spec.app
        if let discarded = discardedVersions, discarded.contains(update.version) { return }
        if let expected = referenceState(app, update.version), expected != update.state {
            fail("views show the reduction", "view of \(update.store) shows at version \(update.version) a state the journal does not reduce to")
            return
        }
        // A store publishes only changes; its heartbeats say its state is still current through a later
        // version. That claim must hold too: the journal reduces to the same state there.
        if update.currentThrough > update.version, discardedVersions.map({ !$0.contains(update.currentThrough) }) ?? true,
            let expected = referenceState(app, update.currentThrough), expected != update.state
        {
            fail(
                "views show the reduction",
                "view of \(update.store) shows version \(update.version) as current through \(update.currentThrough), but the state changed in between"
            )
        }
    }

    /// Every acknowledged action is in the journal as it is now (after a crash or power cut), each
    /// dispatch in it once.
    func checkJournal(_ records: [Message], when: String, below: UInt64 = .max, excusing: Set<UInt64> = []) {
        result.invariantChecks += 1
        var bySeq: [UInt64: Message] = [:]
        var seen = Set<[UInt64]>()
        for record in records {
            bySeq[record.header.seq] = record
            if record.header.clientID != 0 && !seen.insert([record.header.clientID, record.header.clientSeq]).inserted {
                fail("dedup", "\(sender(of: record)) dispatch \(record.header.clientSeq) is in the journal twice (\(when))")
                return
            }
        }
        let promised = options.ha ? acksSent : acknowledged
        for (seq, dispatch) in promised.sorted(by: { $0.key < $1.key }) where seq < below && !excusing.contains(seq) {
            guard let record = bySeq[seq], record.header.clientID == dispatch.client, record.header.clientSeq == dispatch.clientSeq else {
                fail(
                    "ACK means durable",
                    "seq \(seq) was acknowledged to client \(dispatch.client) but is not in the journal (\(when), fsync \(fsync.rawValue))")
                return
            }
        }
    }

    /// Once faults heal: every client answered, every store at the head, every view at its store's version.
    func converged() -> Bool {
        guard let leader = leaderProcess, let core = leader.core, leader.frozenUntil <= now else { return false }
        if options.ha {
            // The standby follows, holding all the leader does; the lease service names the leader.
            guard leaseService.key?.owner == leader.index else { return false }
            for process in dispatchers where process !== leader {
                guard let standby = process.standby, standby.phase == .following, standby.durableSeq == core.head, process.frozenUntil <= now else {
                    return false
                }
            }
        }
        guard clients.allSatisfy({ $0.outstanding.isEmpty }), core.head == core.durableHead else { return false }
        for (index, store) in stores.enumerated() {
            guard let storeCore = store.core, store.frozenUntil <= now, storeCore.version == core.durableHead, storeCore.caughtUp,
                !storeCore.hasUnpublishedChanges,
                storeCore.status(now: time(.store(index)), subscribers: 0, pid: 0).effectsUnanswered == 0
            else { return false }
        }
        for view in views {
            guard let viewCore = view.core, viewCore.connection == .live, let storeCore = stores[view.store].core,
                viewCore.currentThrough == storeCore.version
            else { return false }
        }
        // Every schedule whose time has come by the leader's clock has fired, and stores applied it.
        guard let unfired = schedulesDueUnfired(), unfired.isEmpty else { return false }
        return true
    }

    func convergenceReport() -> String {
        var parts = dispatchers.map { process in
            let role =
                process.core.map {
                    "leads at \($0.durableHead) (head \($0.head), \($0.history))\($0.steppedDown.map { ", stepped down: \($0)" } ?? "")"
                }
                ?? process.standby.map {
                    "stands by at \($0.durableSeq) (\($0.phase.rawValue), following \(name(of: .dispatcher(process.following))))"
                }
                ?? "down"
            return "\(name(of: .dispatcher(process.index))) \(role)"
        }
        parts += stores.map {
            "\($0.spec.name) \($0.core.map { "\($0.version) (published \($0.lastPublishedVersion))\($0.caughtUp ? "" : " catching up")" } ?? "down")"
        }
        parts += views.map {
            "view \(stores[$0.store].spec.name) \($0.core.map { "\($0.version) (current through \($0.currentThrough)) \($0.connection) \(HistoryID(rawValue: $0.history))" } ?? "down")"
        }
        parts += clients.map { "client \($0.outstanding.count) unanswered" }
        if let unfired = schedulesDueUnfired(), !unfired.isEmpty {
            parts.append("schedules due and not fired: " + unfired.map { "\($0.key) (made at seq \($0.requestSeq))" }.joined(separator: ", "))
        }
        return parts.joined(separator: ", ")
    }

    func finalChecks() {
        for process in dispatchers {
            checkJournal(process.disk.records(in: Simulation.journalDirectory), when: "at the end, \(name(of: .dispatcher(process.index)))")
        }
        for index in stores.indices { checkStore(index) }
        checkSchedulesAgree()
    }
}
