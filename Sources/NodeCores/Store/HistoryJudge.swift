import FluxCore

/// Which dispatcher history a store's state follows, and what a history stamp it hears means for it.
///
/// A dispatcher stamps what it sends with its ``HistoryID``: the journal's cluster and the epoch of
/// this opening of the journal. The store follows the first history it hears (or the one its snapshot
/// names), follows a dispatcher's restart into a newer epoch once that epoch's heartbeat says where it
/// starts, drops late messages of older epochs, and refuses another cluster's journal for good.
///
/// Where a newer epoch may have cut the journal below the store (an epoch it did not hear, a snapshot
/// it resumed from), the journal's action at the store's version must be the one the store applied
/// (log matching): the judge keeps that check (``verifying``) until the replay settles it.
struct HistoryJudge {
    /// What a message stamped with a history means for the store.
    enum Ruling: Equatable {
        /// Apply it: the history followed, the first one heard, or a dispatcher that stamps none.
        case follow
        /// Hold it back: a newer epoch whose heartbeat has not said yet where it starts.
        case wait
        /// Drop it: a late message from before the dispatcher restarted.
        case ignore
        /// Another cluster's journal: nothing of it is applied, now or later; `reason` says what to do.
        case refuse(reason: String)
        /// A newer epoch that starts at or below the store's version: the journal lost actions the store
        /// applied, so the state must be rebuilt from it. `head` is the epoch's newest seq.
        case rebuild(head: UInt64, reason: String)
        /// A newer epoch that starts past the store's version, followed from now on; `head` is its newest
        /// seq. With `verify`, the journal's action at the store's version is checked first.
        case newEpoch(head: UInt64, verify: Bool)
    }

    /// The history the state comes from (nil until the store has heard one, or read it from its snapshot).
    private(set) var history: HistoryID?
    /// The dispatcher serves another cluster's journal: nothing of it is applied.
    private(set) var refusedForeign = false
    /// The state came from a snapshot that names no history (written before histories existed): only
    /// the dispatcher's head can tell whether it belongs to the journal.
    private(set) var restoredWithoutHistory = false
    /// The history the action at the store's version was sequenced in (its ACTION stamp): what the
    /// snapshot keeps, and what the journal's action at that seq must carry for the state to be part of
    /// the journal.
    private(set) var lastAppliedHistory: UInt64 = 0
    /// The journal's action at `seq` must carry `history` (log matching); nil once checked.
    private(set) var verifying: (seq: UInt64, history: UInt64)?

    /// The state was restored from a snapshot at `version`, built from history `raw` (0: not known).
    mutating func restored(version: UInt64, history raw: UInt64) {
        precondition(history == nil && lastAppliedHistory == 0, "a state is restored once, before anything is heard or applied")
        if raw != 0 {
            history = HistoryID(rawValue: raw)
            lastAppliedHistory = raw
            if version > 0 { verifying = (version, raw) }
        } else {
            restoredWithoutHistory = version > 0
        }
    }

    /// The state was dropped for an empty one: nothing applied is left to check. The history followed stays.
    mutating func reset() {
        restoredWithoutHistory = false
        verifying = nil
        lastAppliedHistory = 0
    }

    /// An action stamped with history `raw` was applied.
    mutating func applied(history raw: UInt64) { lastAppliedHistory = raw }

    /// The first seq to ask the replay for: while the state is being checked, its own version (the
    /// journal's action there comes first), else the one after it.
    func replayStart(version: UInt64) -> UInt64 { verifying?.seq ?? version + 1 }

    /// Judges a message stamped with history `raw` (0: unstamped) while the store is at `version`. A
    /// heartbeat also says where its epoch starts (`since`) and how far it is (`head`); other messages
    /// pass nil for both.
    mutating func judge(_ raw: UInt64, since: UInt64?, head: UInt64?, version: UInt64) -> Ruling {
        guard raw != 0 else { return .follow }  // a dispatcher that does not stamp histories
        let offered = HistoryID(rawValue: raw)
        guard let current = history else {
            // Nothing applied from any history yet (or a snapshot from before histories): follow this one.
            history = offered
            return .follow
        }
        if offered == current { return .follow }
        guard offered.cluster == current.cluster else {
            refusedForeign = true
            return .refuse(
                reason: "the dispatcher serves another journal (history \(offered)) than this store's state comes from (\(current)): "
                    + "point the store at its own cluster, or delete its snapshot and restart it to rebuild from this journal "
                    + "(docs/OPERATIONS.md, \"Restoring a journal from a copy, and a journal from another history\")")
        }
        if offered.epoch < current.epoch { return .ignore }  // a late message from before the dispatcher restarted
        guard let since, let head else { return .wait }
        history = offered
        if version >= since {
            // The journal's new epoch starts at or below this store's version: actions this store applied
            // are not in the journal any more (restored from an older copy, or its tail lost under fsync
            // none). Keeping them would mix two histories; the journal is the truth, so rebuild from it.
            return .rebuild(
                head: head,
                reason: "the dispatcher's journal lost actions this store applied: its epoch \(offered) starts at seq \(since), "
                    + "at or below this store's version \(version)")
        }
        // An epoch this store did not hear may have cut the journal too: before going on, the journal's
        // action at this store's version must be the one it applied (log matching).
        // Of this cluster, not the one followed, not older: a newer epoch, which starts past this store.
        assert(offered.epoch > current.epoch && since > version, "a new epoch is newer, and starts past the version")
        guard version > 0 && lastAppliedHistory != 0 else { return .newEpoch(head: head, verify: false) }
        verifying = (version, lastAppliedHistory)
        return .newEpoch(head: head, verify: true)
    }

    /// Settles the check of the journal's action at the store's version, if `batch` holds it: the reason
    /// to rebuild when it is not the action the store applied, else nil.
    mutating func check(_ batch: some Sequence<Header>) -> String? {
        guard let expected = verifying, let found = batch.first(where: { $0.seq == expected.seq }) else { return nil }
        precondition(expected.seq > 0, "the action checked is an applied one")
        verifying = nil
        guard found.history != 0 && expected.history != 0 && found.history != expected.history else { return nil }
        return "the journal's action at seq \(expected.seq) is not the one this store applied (history "
            + "\(HistoryID(rawValue: found.history)), not \(HistoryID(rawValue: expected.history)))"
    }

    /// The reason to rebuild when the whole journal ends at `head`, before the action being checked.
    func checkEnd(head: UInt64) -> String? {
        guard let expected = verifying, head < expected.seq else { return nil }
        return "the dispatcher's journal ends at seq \(head), before this store's version \(expected.seq)"
    }

    /// Whether a journal that ends at `head` (stamped with `raw`) shows the state at `version` to come from
    /// another history. Where both carry a history, the epochs decide instead (``judge(_:since:head:version:)``):
    /// within one epoch a lower head is only a late answer.
    func journal(endingAt head: UInt64, stamped raw: UInt64, isBehind version: UInt64) -> Bool {
        head < version && (restoredWithoutHistory || raw == 0)
    }
}
