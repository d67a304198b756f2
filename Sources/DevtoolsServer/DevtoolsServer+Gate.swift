import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// The tokens a page's dispatch, time travel or export may carry. Without either, anyone who reaches
/// the page does all three (in-process tests only: `zflux devtools` always has a token).
package struct DispatchAccess: Sendable {
    /// A token and whose it is, for the log ("key …", "the devtools' token").
    package struct Holder: Sendable {
        package var token: String
        package var name: String
        package init(token: String, name: String) {
            self.token = token
            self.name = name
        }
    }

    /// A fixed token: `--token-file`, `$ZFLUX_DEVTOOLS_TOKEN`, the config's, or one made at start.
    package var token: String?
    /// Tokens that follow something that changes (the authorized CURVE keys): asked for at each
    /// dispatch, on the server's worker thread, so they may read a file.
    package var derivedTokens: (@Sendable () -> [Holder])?
    /// Where a refused page's user finds a token, ending the refusal's reason.
    package var hint: String

    package init(
        token: String? = nil, derivedTokens: (@Sendable () -> [Holder])? = nil, hint: String = "open the address it printed, with its #token=…"
    ) {
        self.token = token
        self.derivedTokens = derivedTokens
        self.hint = hint
    }

    /// Whether a dispatch, time travel or export must carry a token.
    package var required: Bool { token != nil || derivedTokens != nil }

    /// Whose token `given` is ("anyone" when none is required), or nil when it is none of them. Every
    /// token is compared, each in time that does not depend on where it differs from `given`.
    package func holder(of given: String?) -> String? {
        guard required else { return "anyone" }
        let bytes = Array((given ?? "").utf8)
        var matched: String? = nil
        for holder in (token.map { [Holder(token: $0, name: "the devtools' token")] } ?? []) + (derivedTokens?() ?? []) {
            if DispatchAccess.same(bytes, Array(holder.token.utf8)) { matched = holder.name }
        }
        return matched
    }

    static func same(_ given: [UInt8], _ token: [UInt8]) -> Bool {
        var difference = UInt8(given.count == token.count ? 0 : 1)
        for index in token.indices { difference |= token[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0 && !token.isEmpty
    }
}

/// Refused requests, logged at most once every ten seconds with how many there were since (those
/// without a token and those with a wrong one), so a page guessing tokens leaves a trace without
/// filling the log. A refusal held back is logged when its ten seconds are up, whether or not another
/// comes.
final class RefusalLog: Sendable {
    private struct Counts {
        var lastMs: UInt64 = 0
        var missing = 0
        var wrong = 0
        var flushPending = false
    }
    private let state = Mutex(Counts())
    static let intervalMs: UInt64 = 10_000

    /// `what`: the request refused last ("counter.incrementTapped", "export 1…20").
    func refused(_ what: String, tokenGiven: Bool, logger: Logger) {
        let now = RefusalLog.nowMs()
        let (due, wait) = state.withLock { state -> (Counts?, UInt64?) in
            if tokenGiven { state.wrong += 1 } else { state.missing += 1 }
            if state.lastMs == 0 || now >= state.lastMs + RefusalLog.intervalMs { return (take(&state, now), nil) }
            guard !state.flushPending else { return (nil, nil) }
            state.flushPending = true
            return (nil, state.lastMs + RefusalLog.intervalMs - now)
        }
        if let due { RefusalLog.log(due, what, logger: logger) }
        if let wait {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(wait))) { [self] in
                let held = state.withLock { state -> Counts? in
                    state.flushPending = false
                    return state.missing + state.wrong > 0 ? take(&state, RefusalLog.nowMs()) : nil
                }
                if let held { RefusalLog.log(held, what, logger: logger) }
            }
        }
    }

    private func take(_ state: inout Counts, _ now: UInt64) -> Counts {
        defer { (state.lastMs, state.missing, state.wrong) = (now, 0, 0) }
        return state
    }

    private static func nowMs() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    private static func log(_ counts: Counts, _ what: String, logger: Logger) {
        logger.notice(
            "refused requests from a page: no valid token",
            metadata: ["missing": "\(counts.missing)", "wrong": "\(counts.wrong)", "last": "\(what)"])
    }
}

/// Who may open the WebSocket and who may dispatch.
struct Gate: Sendable {
    /// The server listens on a loopback address: only loopback names may be asked for.
    let loopback: Bool
    let access: DispatchAccess
    /// Which names are this machine's loopback: the cluster side's one rule, handed in.
    let isLoopback: @Sendable (String) -> Bool

    init(listenHost: String, access: DispatchAccess, isLoopback: @escaping @Sendable (String) -> Bool) {
        self.isLoopback = isLoopback
        loopback = isLoopback(listenHost)
        self.access = access
    }

    /// The host name of a `Host` header (`name`, `name:port`, `[v6]:port`).
    static func hostName(_ header: String) -> String {
        if header.hasPrefix("["), let end = header.firstIndex(of: "]") { return String(header[...end]) }
        return String(header.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// Why a request may not open the WebSocket (nil: it may).
    func refusal(_ head: HTTPRequestHead) -> String? {
        guard let host = head.headers.first(name: "Host"), !host.isEmpty else { return "a request without Host" }
        if loopback && !isLoopback(Gate.hostName(host)) {
            return "Host \(host) is not a loopback name (this devtools listens on loopback only)"
        }
        // Browsers always send Origin on a WebSocket; a client without one is no browser page.
        if let origin = head.headers.first(name: "Origin"), origin.lowercased() != "http://" + host.lowercased() {
            return "Origin \(origin) is not this page's (http://\(host))"
        }
        return nil
    }
}
