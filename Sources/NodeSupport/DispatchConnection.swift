import FluxCore
import Foundation
import ZeroMQ

/// The outcome of one dispatch.
public enum DispatchOutcome: Equatable, Sendable {
    /// Sequenced as `seq`.
    case acknowledged(seq: UInt64)
    /// Refused; nothing was sequenced.
    case rejected(reason: String)
    /// No answer within the timeout, after every retry.
    case timedOut
}

/// A blocking client of the dispatcher's intake, for the CLI and for tests.
///
/// It owns a DEALER socket, so it belongs to the thread that created it. A dispatch that is not
/// answered within `retryInterval` is sent again with the same (client id, client seq); the dispatcher
/// deduplicates, so a retry never becomes a second action.
public final class DispatchConnection {
    public let clientID: UInt64
    private var nextClientSeq: UInt64 = 1
    private let socket: Socket
    public var retryInterval: Duration = .milliseconds(1000)
    public var timeout: Duration = .seconds(5)
    /// The history (epoch) of the dispatcher that sent the last ACK: which leader of a pair answered.
    package private(set) var lastAcknowledgedHistory: UInt64?

    public init(
        context: Context = .shared, intake endpoint: String, security: Security.Settings? = nil,
        clientID: UInt64 = UInt64.random(in: 1...UInt64.max)
    ) throws {
        self.clientID = clientID
        socket = try SocketDefaults.dealer(context)
        try socket.connectSecurely(endpoint, security)
    }

    /// Dispatches one action (already in wire form) and waits for its answer.
    public func dispatch(app: String, actionType: String, payload: [UInt8]) throws -> DispatchOutcome {
        let clientSeq = nextClientSeq
        nextClientSeq += 1
        return try send(
            Message(
                topic: app,
                header: Header(
                    kind: .dispatch, clientID: clientID, clientSeq: clientSeq, timestamp: WallClock.nowNanoseconds(),
                    actionType: actionType), payload: payload))
    }

    /// Asks the dispatcher to sequence the quarantined action at `seq` again, as a new action (`zflux
    /// quarantine release`): acknowledged with its new seq, or rejected with the reason. `token` is the
    /// nodes' credential (the cluster's effect token), without which the dispatcher refuses it.
    public func release(quarantined seq: UInt64, token: UInt64) throws -> DispatchOutcome {
        let clientSeq = nextClientSeq
        nextClientSeq += 1
        // Refused "retry later" while a pair's standby does not hold the quarantine list yet: sent again.
        return try send(
            Message(header: Header(kind: .quarantineRelease, seq: seq, ref: token, clientID: clientID, clientSeq: clientSeq)), retryingLater: true)
    }

    /// Sends `message` (again every `retryInterval`: the dispatcher deduplicates by client id and seq)
    /// until its ACK or NACK comes or `timeout` passes.
    /// With `retryingLater`, a NACK that says "retry later" is sent again too, until the timeout, which
    /// then answers with its reason.
    private func send(_ message: Message, retryingLater: Bool = false) throws -> DispatchOutcome {
        var laterReason: String?
        let clientSeq = message.header.clientSeq
        let frames = message.frames
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            // Over a list of dispatchers a message goes only on a connection that is up: the first one
            // may take a moment to come up, and a failover a little longer.
            let resend = min(ContinuousClock.now + retryInterval, deadline)
            let interval = retryInterval.components
            let waitMs = UInt64(max(1, interval.seconds * 1000 + interval.attoseconds / 1_000_000_000_000_000))
            _ = try socket.sendWhenConnected(frames, untilMilliseconds: MonotonicClock.nowMilliseconds() + waitMs)
            while ContinuousClock.now < resend {
                var poller = Poller()
                poller.add(.socket(socket))
                let remaining = ContinuousClock.now.duration(to: resend)
                let ms = max(1, Int(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
                guard try poller.poll(timeoutMilliseconds: ms) > 0 else { continue }
                while let reply = try socket.receive(dontWait: true) {
                    guard let answer = try? Message(frames: reply),
                        answer.header.clientID == clientID, answer.header.clientSeq == clientSeq
                    else { continue }
                    switch answer.kind {
                    case .ack:
                        lastAcknowledgedHistory = answer.header.history
                        return .acknowledged(seq: answer.header.seq)
                    // A dispatcher that no longer leads: the leader will have it at the next resend.
                    case .nack where answer.header.flags.contains(.notLeader): continue
                    case .nack where retryingLater && answer.header.flags.contains(.retryLater):
                        laterReason = String(decoding: answer.payload, as: UTF8.self)
                    case .nack: return .rejected(reason: String(decoding: answer.payload, as: UTF8.self))
                    default: continue
                    }
                }
            }
        }
        return laterReason.map { .rejected(reason: $0) } ?? .timedOut
    }

    public func close() { socket.close() }
}
