import FluxCore

/// The actions every store skips because they crashed a reducer, and what a dispatcher answers a
/// store that asks to add one or an operator who asks to release one: one of the ``DispatcherCore``'s
/// machines. It decides; the core carries out (the journal's read and the list kept durable are the
/// shell's).
struct QuarantineBook {
    /// The entries by seq: replays carry each as a tombstone (``Header/Flags/quarantined``).
    private(set) var entries: [UInt64: Quarantine] = [:] {
        didSet {
            bytes = QuarantineList.encode(Array(entries.values))
            digest = QuarantineList.digest(bytes)
        }
    }
    /// The list as a standby is sent it, and its digest: a pair's standby keeps the same list, so a
    /// new leader skips (and can release) what the old one quarantined.
    private(set) var bytes = QuarantineList.encode([])
    private(set) var digest = QuarantineList.digest(QuarantineList.encode([]))

    /// At most this many: a store asks only after crashing twice on one seq, so more means the app is broken.
    static let maxEntries = 1024

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    subscript(seq: UInt64) -> Quarantine? { entries[seq] }

    /// Adds `new` (the list the journal kept, at start, or one entry the shell has just made durable),
    /// set once so the list a standby is sent is encoded once; returns those it did not hold.
    mutating func record(_ new: [Quarantine]) -> [Quarantine] {
        var list = entries, added: [Quarantine] = []
        for entry in new {
            precondition(entry.seq >= 1, "a quarantined action has a seq")
            if list[entry.seq] == nil { added.append(entry) }
            list[entry.seq] = entry
        }
        entries = list
        return added
    }

    /// The entry at `seq` was sequenced again as `releasedAs`.
    mutating func released(_ seq: UInt64, as releasedAs: UInt64) {
        precondition(entries[seq] != nil, "only a quarantined action is released")
        precondition(releasedAs > seq, "a released action is sequenced again, after itself")
        entries[seq]?.releasedAs = releasedAs
    }

    /// What a store's QUARANTINE-REQUEST is answered with.
    enum RequestVerdict: Equatable {
        /// The shell reads the action at `seq` and quarantines it if it is of one of `apps`.
        case check(seq: UInt64, asker: String, apps: Set<String>, reason: String)
        /// Ignored: it cannot be taken now (not leading, not committed, held already, the list full).
        case ignore
        /// Ignored: it lacks the nodes' token.
        case withoutToken
        /// Ignored: from a store of an app this dispatcher does not host.
        case unknownApp(String)
    }

    /// A store of app `request.topic` asks to quarantine the action at `request.header.seq`. `reads`
    /// names the apps an app reads (nil: not an app this dispatcher hosts).
    func request(
        _ request: Message, effectToken: UInt64?, leading: Bool, firstSeq: UInt64, committed: UInt64, reads: (String) -> [String]?
    ) -> RequestVerdict {
        let seq = request.header.seq
        // From a store only: it carries the effect token, which nodes have and clients do not.
        guard effectToken == nil || request.header.ref == effectToken else { return .withoutToken }
        guard leading, seq >= firstSeq, seq >= 1, seq <= committed, entries[seq] == nil, entries.count < QuarantineBook.maxEntries else {
            return .ignore
        }
        // Printed by `zflux quarantine list`: no control characters.
        let reason = String(
            String(decoding: request.payload.prefix(512), as: UTF8.self).unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
        // The apps whose actions can crash a store of the asker's app: its own and those it reads, as
        // this dispatcher's catalog says (the request names only the asker's app).
        let asker = request.topicString
        guard let read = reads(asker) else { return .unknownApp(asker) }
        return .check(seq: seq, asker: asker, apps: Set([asker] + read), reason: reason)
    }

    /// What a QUARANTINE-RELEASE is answered with.
    enum ReleaseVerdict: Equatable {
        /// NACKed with `reason`; `refused` counts it as a refused request.
        case nack(String, flags: Header.Flags, refused: Bool)
        /// The same release sent again: answered as a retried dispatch is.
        case retry
        /// The shell reads the action at `seq` and offers it again (``DispatcherCore/releaseQuarantined(_:dispatch:from:now:)``).
        case read(seq: UInt64)
    }

    /// An operator asks to release the action at `header.seq`. `standbyLacksList`: under `sync`, the
    /// standby does not hold this list yet. `sameRelease(seq)`: the release's (client id, client seq)
    /// was sequenced as `seq`.
    func release(
        _ header: Header, leading: Bool, effectToken: UInt64?, standbyLacksList: Bool, sameRelease: (UInt64) -> Bool
    ) -> ReleaseVerdict {
        guard leading else { return .nack("this dispatcher no longer leads: send to the leader", flags: [.retryLater, .notLeader], refused: false) }
        // The nodes' credential, as an effect-only action needs: a client's release would hand the poison
        // back to every store.
        guard effectToken == nil || header.ref == effectToken else {
            return .nack(QuarantineBook.releaseNeedsCredential, flags: [], refused: true)
        }
        guard let entry = entries[header.seq] else {
            return .nack("no action is quarantined at seq \(header.seq) (zflux quarantine list shows them)", flags: [], refused: false)
        }
        if let again = entry.releasedAs {
            return sameRelease(again) ? .retry : .nack("seq \(header.seq) was released already, as seq \(again)", flags: [], refused: false)
        }
        if standbyLacksList {
            // Released before the standby holds the quarantine, the action would be served in full by a
            // new leader beside its released copy.
            return .nack("the standby does not hold the quarantine list yet: try again in a moment", flags: .retryLater, refused: false)
        }
        return .read(seq: header.seq)
    }

    /// The NACK for a QUARANTINE-RELEASE without the nodes' credential.
    static let releaseNeedsCredential =
        "releasing a quarantined action takes the nodes' credential (the effect token: the run directory's effect-token file, or the server key under CURVE), which this client lacks: run zflux quarantine release on a node's host"

    /// What a release's client id is scoped by (``ClientScope``), whatever key sent it.
    static let releasePrincipal = Array("zflux quarantine release".utf8)
}
