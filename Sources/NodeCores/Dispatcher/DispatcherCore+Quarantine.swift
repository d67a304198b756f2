@_spi(Simulation) import FluxCore
import Logging

/// The quarantine, in the order of the dispatcher's machines: the ``QuarantineBook``'s verdict on a
/// release, carried out through admission and the commit pipeline as a dispatch of the action again.
extension DispatcherCore {
    /// The quarantine the journal kept (at start), or one entry the shell has just made durable.
    public func quarantined(_ entries: [Quarantine]) {
        for entry in quarantineBook.record(entries) {
            logger.warning(
                "action quarantined: every store skips it",
                metadata: ["seq": "\(entry.seq)", "app": "\(entry.app)", "action": "\(entry.actionType)", "reason": "\(entry.reason)"])
        }
    }

    func receivedRelease(_ header: Header, from peer: [UInt8], now: NodeTime) {
        let verdict = quarantineBook.release(
            header, leading: steppedDown == nil, effectToken: rules.effectToken,
            standbyLacksList: rules.replication == .sync && standby?.quarantineHeld != quarantineBook.digest,
            sameRelease: { self.admission.releaseSeq(header) == $0 })
        switch verdict {
        case .nack(let reason, let flags, let refused):
            if refused { counters.refused() }
            nack(peer, header, reason, flags: flags)
        case .retry:
            // The same release sent again: answered as a retried dispatch is, once its action is durable.
            var retry = header
            retry.kind = .dispatch
            receivedDispatch(Dispatch(Message(header: retry)), from: peer, principal: QuarantineBook.releasePrincipal, now: now)
        case .read(let seq):
            commands.append(.releaseQuarantined(seq: seq, peer: peer, header: header))
        }
    }

    /// Offers the quarantined action `dispatch` (read from the journal at `seq`) as a new one, answered
    /// to `peer` as its dispatch would be; on admission the entry records its new seq.
    public func releaseQuarantined(_ seq: UInt64, dispatch: Message, from peer: [UInt8], now: NodeTime) -> UInt64? {
        // Two releases drained in one burst: the second finds the first's.
        if let again = quarantineBook[seq]?.releasedAs {
            nack(peer, dispatch.header, "seq \(seq) was released already, as seq \(again)")
            return nil
        }
        let before = head
        // A release retried after a failover, which the old leader sequenced but whose mark did not
        // reach this one's list: the dedup table (rebuilt from the journal) knows its seq.
        if let earlier = admission.releaseSeq(dispatch.header) { quarantineBook.released(seq, as: earlier) }
        // The dispatcher's own action again: one only effects send is taken too (the effect token).
        var dispatch = dispatch
        dispatch.header.ref = rules.effectToken ?? 0
        // Its client id is scoped, as an authenticated client's is: a release cannot pose as another
        // client's dispatch (and be deduplicated against it).
        receivedDispatch(Dispatch(dispatch), from: peer, principal: DispatcherCore.releasePrincipal, now: now)
        endOfBurst()
        assert(head <= before + 1, "a release sequences one action at most")
        guard head > before else { return quarantineBook[seq]?.releasedAs }
        quarantineBook.released(seq, as: head)
        if rules.replication == .sync { _ = pipeline.holdLastReply(to: peer, digest: quarantineBook.digest) }
        logger.notice("quarantined action released", metadata: ["seq": "\(seq)", "as": "\(head)"])
        return head
    }
}
