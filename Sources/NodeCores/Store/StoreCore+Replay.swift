import FluxCore
import Logging

/// Catching up: replay requests and what the replay service answers, and the history the store follows
/// (`HistoryJudge`): a newer epoch is followed, another cluster's journal refused, and a state that
/// is not part of the journal rebuilt from it.
extension StoreCore {
    func requestReplay(now: NodeTime) {
        replayRequestedAtMs = now.milliseconds
        // While the snapshot is being checked, from its own version: the journal's action there comes first.
        commands.append(.requestReplay(Message(header: Header(kind: .replayRequest, seq: histories.replayStart(version: version)))))
    }

    /// A message from the replay service (REPLAY-BATCH or REPLAY-END).
    public func receivedReplay(_ message: Message, now: NodeTime) {
        guard !refusedForeignHistory else { return }
        // Served from an epoch not settled yet (or a retired one): not used; asked again once settled.
        guard judge(message.header.history, since: nil, head: nil, now: now) == .follow else { return }
        switch message.kind {
        case .replayBatch:
            // Applied from the batch's bytes: each entry's header is read in place, and only its payload
            // is copied out for the reducer (no message per action).
            let bytes = message.payload
            guard let entries = try? ReplayBatch.entries(bytes, holding: .action) else {
                logger.warning("dropped a malformed replay batch", metadata: ["store": "\(rules.name)"])
                return
            }
            if let reason = histories.check(entries.lazy.map(\.header)) {
                rebuild(because: reason, now: now)
                return
            }
            // A batch's entries are mostly of one app: its name is made once per run of them.
            var topic: (range: Range<Int>, name: String)? = nil
            for entry in entries where entry.header.seq == version + 1 {
                if topic.map({ !bytes.equal($0.range, entry.topic) }) ?? true {
                    topic = (entry.topic, String(decoding: bytes[entry.topic], as: UTF8.self))
                }
                apply(entry.header, app: topic?.name ?? "", payload: Array(bytes[entry.payload]), now: now)
                replayed += 1
            }
            replayRequestedAtMs = now.milliseconds
        case .replayEnd where message.header.flags.contains(.historyTruncated):
            // The journal starts after this store's version: the actions between are gone. Nothing can be
            // applied past the hole; ask again after the replay timeout in case the journal is restored.
            let reason =
                "the dispatcher's journal starts at seq \(message.header.ref), but this store is at version \(version): "
                + "restore the journal's older segments, or start this store from a snapshot at version \(max(message.header.ref, 1) - 1) or later "
                + "(docs/OPERATIONS.md, \"A journal that starts above 1\")"
            if problem != reason {
                logger.error("cannot catch up", metadata: ["store": "\(rules.name)", "reason": "\(reason)"])
            }
            problem = reason
            dispatcherHead = max(dispatcherHead, message.header.seq)
            replayRequestedAtMs = now.milliseconds
        case .replayEnd:
            problem = nil
            if let reason = histories.checkEnd(head: message.header.seq) {
                // The whole journal ends before the action checked: the state is of a history gone.
                rebuild(because: reason, now: now)
                return
            }
            if !caughtUp && histories.journal(endingAt: message.header.seq, stamped: message.header.history, isBehind: version) {
                // This store's snapshot is ahead of the dispatcher's whole history: it belongs to another
                // history (a journal wiped or replaced). Trusting it would skip real actions.
                logger.error(
                    "snapshot is ahead of the dispatcher; discarding it and replaying",
                    metadata: [
                        "store": "\(rules.name)", "snapshot": "\(version)", "dispatcher": "\(message.header.seq)",
                    ])
                resetToEmpty()
                dispatcherHead = message.header.seq
                requestReplay(now: now)
                return
            }
            dispatcherHead = max(dispatcherHead, message.header.seq)
            replayRequestedAtMs = nil
            applyPending(now: now)
            if version < dispatcherHead {
                requestReplay(now: now)
            } else if !caughtUp {
                caughtUp = true
                publishStateIfChanged(now: now)
                for peer in snapshots.takeWaiting() { answerSnapshot(peer, now: now) }
            }
        default:
            return
        }
    }

    enum Verdict { case follow, wait, ignore }

    /// What a dispatcher's history stamp means here (``HistoryJudge``), and what the store does about
    /// it. A heartbeat also says where its epoch starts (`since`) and how far it is (`head`).
    func judge(_ raw: UInt64, since: UInt64?, head: UInt64?, now: NodeTime) -> Verdict {
        switch histories.judge(raw, since: since, head: head, version: version) {
        case .follow:
            return .follow
        case .ignore:
            return .ignore
        case .wait:
            logger.debug(
                "held back until the epoch is placed",
                metadata: ["store": "\(rules.name)", "history": "\(HistoryID(rawValue: raw))", "following": "\(history.map { "\($0)" } ?? "none")"])
            return .wait
        case .refuse(let reason):
            problem = reason
            logger.error("refusing a foreign history", metadata: ["store": "\(rules.name)", "reason": "\(reason)"])
            replayRequestedAtMs = nil
            return .ignore
        case .rebuild(let head, let reason):
            // The new epoch's head replaces the old one's, which may be past anything the journal now holds.
            dispatcherHead = head
            rebuild(because: reason, now: now)
            return .ignore
        case .newEpoch(let head, let verify):
            dispatcherHead = head
            // A new epoch that starts past this store. What was held back from other epochs is dropped: an
            // epoch this store did not hear may have cut the journal below it, so those seqs may now name
            // other actions. The replay brings them again, from the journal as it is.
            pending.retain { $0.header.history == raw }
            if verify {
                // Checked first: the replay starts at this store's version.
                requestReplay(now: now)
                return .follow
            }
            applyPending(now: now)
            if replayRequestedAtMs != nil || version < dispatcherHead { requestReplay(now: now) }
            return .follow
        }
    }

    /// Drops the state for one rebuilt from the journal, with the reason in the log.
    private func rebuild(because reason: String, now: NodeTime) {
        logger.error(
            "the state is not part of the dispatcher's journal; rebuilding it from the journal",
            metadata: [
                "store": "\(rules.name)", "reason": "\(reason)",
            ])
        resetToEmpty()
        liveAfter = max(liveAfter ?? 0, dispatcherHead)
        requestReplay(now: now)
    }
}
