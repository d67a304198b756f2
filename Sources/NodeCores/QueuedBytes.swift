import FluxCore

/// The bytes a node has handed to libzmq for the peers of one ROUTER and cannot yet know have left
/// it, against a budget across all peers and a share per peer.
///
/// libzmq counts a peer's queue in messages (SNDHWM) and does not say how many bytes it holds, nor
/// when a peer has read them. What the node can know: a send to a peer that succeeds finds fewer than
/// `highWaterMark` messages unread in the peer's pipe, and libzmq's engine holds at most one message
/// besides (the one being written to the kernel), so of the messages handed to that peer only the
/// newest `highWaterMark + 1` can still be in libzmq (the `window`). A send that fails because the
/// peer has gone (EHOSTUNREACH) means libzmq has dropped its pipe, and what was in it. Nothing else
/// releases a charge: a peer that never reads holds its share until it leaves.
///
/// A peer holding bytes and not being served is probed now and then (the shell sends it a message
/// that every reader ignores): each probe that goes through moves the window on, and one that finds
/// the peer gone releases all it held. A socket whose high-water mark is too large for the window to
/// help (the intake's) has no window: its charges go only when a probe finds the peer gone.
public struct QueuedBytes: Sendable {
    /// What became of a message handed to libzmq for one peer.
    public enum Delivery: Sendable, Equatable {
        /// Queued for the peer.
        case sent
        /// The peer's queue is full: it does not read (or not yet).
        case full
        /// The peer has gone: libzmq holds nothing more for it.
        case gone
    }

    /// The most bytes all peers may hold together. A message larger than the budget is handed only
    /// when no peer holds anything.
    public let budget: Int
    /// The most bytes one peer may hold. A larger message goes to a peer that holds nothing.
    public let perPeer: Int
    /// How many of a peer's newest messages libzmq may still hold after a send to it succeeded
    /// (its high-water mark plus one); nil: a peer's bytes go only when it leaves.
    public let window: Int?
    /// The first probe of a peer comes this long after the last message handed to it; each probe
    /// that goes through doubles the wait, up to `maxProbeMilliseconds`.
    public let firstProbeMilliseconds: UInt64
    public let maxProbeMilliseconds: UInt64
    /// Probes are due on multiples of this (ms), so that many peers' probes go in a few rounds.
    public let probeRoundMilliseconds: UInt64

    private struct Peer: Sendable {
        /// The sizes of the messages that may still be in libzmq, oldest first; probes count as 0.
        var sizes: [Int] = []
        var bytes = 0
        var nextProbeMs: UInt64
        var probeGapMs: UInt64
    }
    private var peers: [[UInt8]: Peer] = [:]
    /// No probe is due before this (it may be earlier than the first one due: then a round finds none).
    private var earliestProbeMs: UInt64?
    /// The bytes all peers hold.
    public private(set) var total = 0
    /// Bytes released since ``takeReleased()``: what the shell may give back to the system.
    private var released = 0

    public init(
        budget: Int, perPeer: Int, window: Int?, firstProbeMilliseconds: UInt64, maxProbeMilliseconds: UInt64, probeRoundMilliseconds: UInt64 = 1
    ) {
        precondition(budget > 0 && perPeer > 0 && perPeer <= budget, "a per-peer share within the budget")
        precondition(window.map { $0 > 0 } ?? true, "a window of at least one message")
        (self.budget, self.perPeer, self.window) = (budget, perPeer, window)
        (self.firstProbeMilliseconds, self.maxProbeMilliseconds) = (firstProbeMilliseconds, max(maxProbeMilliseconds, firstProbeMilliseconds))
        self.probeRoundMilliseconds = max(probeRoundMilliseconds, 1)
    }

    /// `peer`'s next probe, `gap` ms from `now`, on a round.
    private mutating func scheduleProbe(_ entry: inout Peer, now: UInt64, gap: UInt64) {
        let at = (now + gap + probeRoundMilliseconds - 1) / probeRoundMilliseconds * probeRoundMilliseconds
        entry.nextProbeMs = at
        earliestProbeMs = min(earliestProbeMs ?? at, at)
    }

    /// The bytes `peer` holds.
    public func held(by peer: [UInt8]) -> Int { peers[peer]?.bytes ?? 0 }

    /// Peers holding bytes.
    public var peerCount: Int { peers.count }

    /// Whether a message of `bytes` may be handed to `peer` now: within its share and the budget.
    public func admits(_ bytes: Int, to peer: [UInt8]) -> Bool {
        let held = held(by: peer)
        if held > 0 && held + bytes > perPeer { return false }
        if total > 0 && total + bytes > budget { return false }
        return true
    }

    /// A message of `bytes` was handed to `peer` (a send that succeeded) at `now` (monotonic ms).
    public mutating func sent(_ bytes: Int, to peer: [UInt8], now: UInt64) {
        precondition(bytes >= 0, "a message has no negative size")
        var entry = peers[peer] ?? Peer(nextProbeMs: 0, probeGapMs: firstProbeMilliseconds)
        entry.sizes.append(bytes)
        entry.bytes += bytes
        total += bytes
        entry.probeGapMs = firstProbeMilliseconds
        scheduleProbe(&entry, now: now, gap: firstProbeMilliseconds)
        peers[peer] = trimmed(entry, peer: peer)
        precondition(total >= 0 && held(by: peer) >= 0, "held bytes are never negative")
    }

    /// `peer` has gone: libzmq holds nothing more for it.
    public mutating func gone(_ peer: [UInt8]) {
        guard let entry = peers.removeValue(forKey: peer) else { return }
        total -= entry.bytes
        released += entry.bytes
        assert(total >= 0, "the bytes held in all are those of the peers that hold them")
    }

    /// Peers due a probe at `now`, in a stable order: a walk of the peers, only when one may be due.
    public mutating func probesDue(now: UInt64) -> [[UInt8]] {
        guard let earliest = earliestProbeMs, earliest <= now else { return [] }
        var due: [[UInt8]] = []
        var next: UInt64?
        for (peer, entry) in peers {
            if entry.nextProbeMs <= now { due.append(peer) } else { next = min(next ?? entry.nextProbeMs, entry.nextProbeMs) }
        }
        // The due ones are rescheduled by what their probes find.
        earliestProbeMs = next
        return due.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// No probe is due before this, if any peer holds bytes (read every loop turn: no walk).
    public var nextProbeMs: UInt64? { peers.isEmpty ? nil : earliestProbeMs }

    /// What a probe of `bytes` to `peer` found at `now`. One that went through counts as a message
    /// (it moves the window on); a full queue waits the longest gap; a peer gone releases its bytes.
    public mutating func probed(_ peer: [UInt8], _ delivery: Delivery, bytes: Int, now: UInt64) {
        guard var entry = peers[peer] else { return }
        switch delivery {
        case .gone:
            gone(peer)
            return
        case .full:
            entry.probeGapMs = maxProbeMilliseconds
        case .sent:
            entry.sizes.append(window == nil ? bytes : 0)
            entry.bytes += window == nil ? bytes : 0
            total += window == nil ? bytes : 0
            // With a window, each probe that goes through moves it on by one: the next follows at once.
            // Without one, it only says the peer is there: the next waits twice as long.
            entry.probeGapMs = window == nil ? min(entry.probeGapMs * 2, maxProbeMilliseconds) : 1
        }
        scheduleProbe(&entry, now: now, gap: entry.probeGapMs)
        guard let kept = trimmed(entry, peer: peer) else { return }
        peers[peer] = kept
        assert(total >= 0 && kept.bytes >= 0, "held bytes are never negative")
    }

    /// Probes `peer` from the next turn on: a message for it waits for room in its share or the budget,
    /// and each probe that goes through makes some.
    public mutating func probeSoon(_ peer: [UInt8], now: UInt64) {
        guard var entry = peers[peer], entry.nextProbeMs > now else { return }
        entry.nextProbeMs = now
        earliestProbeMs = min(earliestProbeMs ?? now, now)
        peers[peer] = entry
    }

    /// The bytes released since the last call.
    public mutating func takeReleased() -> Int {
        defer { released = 0 }
        return released
    }

    /// `entry` with the messages that have left libzmq (older than the window) released; nil once
    /// only probes remain, which leaves the peer forgotten (what its probes hold is a few bytes).
    private mutating func trimmed(_ entry: Peer, peer: [UInt8]) -> Peer? {
        var entry = entry
        if let window, entry.sizes.count > window {
            let gone = entry.sizes.count - window
            let bytes = entry.sizes.prefix(gone).reduce(0, +)
            entry.sizes.removeFirst(gone)
            entry.bytes -= bytes
            total -= bytes
            released += bytes
            assert(entry.bytes >= 0 && entry.sizes.count == window, "a peer holds what its window of messages holds")
        }
        guard window == nil || entry.bytes > 0 else {
            peers[peer] = nil
            return nil
        }
        return entry
    }
}

extension Message {
    /// The bytes of its frames as libzmq holds them (topic, header, payload).
    public var wireBytes: Int { topic.count + Header.fixedSize + header.actionType.utf8.count + payload.count }
}
