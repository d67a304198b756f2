import Foundation
import NIOCore
import NIOWebSocket
import Synchronization

/// What the page asks of the cluster, answered off the event loop on the server's own worker thread
/// (each answer may block: a journal read, a dispatch waiting for its ACK). `zflux devtools` implements
/// it with the same clients the other commands use.
package protocol DevtoolsBackend: Sendable {
    /// `{"kind":"hello",…}`: the stores, the apps' catalog and the journal's range, sent first to every page.
    func hello() -> String
    /// Every store's state as of `seq` and as of the seq before it, and the action at `seq`
    /// (`{"kind":"at",…}`), or an error to show.
    func states(at seq: UInt64) -> String
    /// The journal's first seq and head (`{"kind":"range",…}`), for the slider.
    func range() -> String
    /// Dispatches one action (`arguments` is the JSON object the form holds) and answers with its ACK,
    /// NACK or silence (`{"kind":"dispatched",…}`).
    func dispatch(app: String, type: String, arguments: String) -> String
    /// The session file of seqs `from…to`, as `journal export` writes it, inside
    /// `{"kind":"exported","from":…,"to":…,"session":"…"}` (the file's text, as a string), or
    /// `{"kind":"exported","error":…}`: the error when that answer would pass `maxBytes`, which the
    /// export stops at, never holding more.
    func export(from: UInt64, to: UInt64, maxBytes: Int) -> String
}

/// One request of the page, a JSON text frame.
struct PageRequest: Decodable {
    var op: String
    var id: Int?
    var seq: UInt64?
    var app: String?
    var type: String?
    var arguments: String?
    var token: String?
    var from: UInt64?
    var to: UInt64?
}

/// What every open page shares: the newest state of each store, the newest node table, the recent
/// actions, and the pages to send them to. The cluster's threads hand their news in (``updateState``,
/// ``action(_:)``, ``nodes(_:)``); a timer sends what is new to every page ten times a second, so a
/// store applying thousands of actions a second costs the page ten state messages a second, each the
/// newest state.
package final class DevtoolsHub: Sendable {
    struct Pending {
        var version: UInt64
        var connection: String
        var render: @Sendable () -> String
    }

    struct Shared {
        /// The newest `{"kind":"state",…}` sent per store, which a page that joins gets first.
        var states: [String: String] = [:]
        /// States that changed since the last flush, rendered to JSON only at the flush.
        var pending: [String: Pending] = [:]
        var nodes: String?
        var nodesChanged = false
        /// The newest actions (as JSON objects), oldest first, at most ``recentActions``.
        var recent: [String] = []
        /// Actions not sent yet, and how many were dropped beyond the batch cap since the last flush.
        var fresh: [String] = []
        var dropped = 0
        var pages: [ObjectIdentifier: any Channel] = [:]
        /// The current bench run's live feed lines (``bench(_:newRun:)``), which a page that joins gets;
        /// the lines not sent yet, and whether they start a new run.
        var benchLines: [String] = []
        var freshBench: [String] = []
        var benchReset = false
    }

    static let recentActions = 500
    /// The most lines of a bench run kept: an hour's seconds, its trials and its report. Past it, the
    /// oldest seconds go; the run's first line (its `start`) stays.
    static let benchLinesKept = 4_000
    static let batchCap = 500
    private let shared = Mutex(Shared())
    private let timer: FlushTimer

    package init(flushMilliseconds: Int = 100) {
        let flush = FlushTarget()
        timer = FlushTimer(milliseconds: flushMilliseconds) { flush.hub?.flush() }
        flush.hub = self
        timer.source.resume()
    }

    deinit { timer.source.cancel() }

    /// A store's state changed (or its connection did); `render` makes its JSON at the next flush.
    package func updateState(store: String, version: UInt64, connection: String, render: @escaping @Sendable () -> String) {
        shared.withLock { $0.pending[store] = Pending(version: version, connection: connection, render: render) }
    }

    /// One action of the stream (or a store's refusal), as a JSON object.
    package func action(_ json: String) {
        shared.withLock { shared in
            shared.recent.append(json)
            if shared.recent.count > DevtoolsHub.recentActions { shared.recent.removeFirst(shared.recent.count - DevtoolsHub.recentActions) }
            shared.fresh.append(json)
            if shared.fresh.count > DevtoolsHub.batchCap {
                shared.dropped += shared.fresh.count - DevtoolsHub.batchCap
                shared.fresh.removeFirst(shared.fresh.count - DevtoolsHub.batchCap)
            }
        }
    }

    /// The node table, a `{"kind":"nodes",…}` message.
    package func nodes(_ json: String) {
        shared.withLock {
            $0.nodes = json
            $0.nodesChanged = true
        }
    }

    /// Lines of `zflux bench --attach`'s live feed, each a JSON object; `newRun`: they begin a new run,
    /// so what was kept of the one before goes (and the pages start over).
    package func bench(_ lines: [String], newRun: Bool) {
        shared.withLock { shared in
            if newRun {
                shared.benchLines = []
                shared.freshBench = []
                shared.benchReset = true
            }
            DevtoolsHub.keep(&shared.benchLines, adding: lines)
            DevtoolsHub.keep(&shared.freshBench, adding: lines)
        }
    }

    /// Appends `lines`, then drops the oldest but the first beyond ``benchLinesKept``.
    static func keep(_ kept: inout [String], adding lines: [String]) {
        kept.append(contentsOf: lines)
        let over = kept.count - benchLinesKept
        if over > 0 { kept.removeSubrange(1...over) }
    }

    /// The message of bench feed lines: `reset` tells the page to drop what it drew of a run before.
    static func benchMessage(_ lines: [String], reset: Bool) -> String {
        "{\"kind\":\"bench\",\"reset\":\(reset),\"lines\":[\(lines.joined(separator: ","))]}"
    }

    /// Sends what changed since the last flush to every page.
    func flush() {
        let (pending, fresh, dropped, nodes, pages, bench) = shared.withLock { shared in
            defer {
                shared.pending = [:]
                shared.fresh = []
                shared.dropped = 0
                shared.nodesChanged = false
                shared.freshBench = []
                shared.benchReset = false
            }
            let bench =
                shared.freshBench.isEmpty && !shared.benchReset ? nil : DevtoolsHub.benchMessage(shared.freshBench, reset: shared.benchReset)
            return (
                shared.pending, shared.fresh, shared.dropped, shared.nodesChanged ? shared.nodes : nil, Array(shared.pages.values), bench
            )
        }
        var messages: [String] = []
        var rendered: [String: String] = [:]
        for (store, update) in pending.sorted(by: { $0.key < $1.key }) {
            let message =
                "{\"kind\":\"state\",\"store\":\(jsonString(store)),\"version\":\(update.version),\"connection\":\(jsonString(update.connection)),\"state\":\(update.render())}"
            rendered[store] = message
            messages.append(message)
        }
        if !rendered.isEmpty { shared.withLock { $0.states.merge(rendered) { _, new in new } } }
        if let nodes { messages.append(nodes) }
        if !fresh.isEmpty { messages.append("{\"kind\":\"actions\",\"dropped\":\(dropped),\"actions\":[\(fresh.joined(separator: ","))]}") }
        if let bench { messages.append(bench) }
        for message in messages {
            for page in pages { DevtoolsHub.send(message, to: page) }
        }
    }

    /// A page joined: it gets the newest of everything, then what comes.
    func join(_ channel: any Channel, hello: String) {
        let welcome = shared.withLock { shared -> [String] in
            shared.pages[ObjectIdentifier(channel)] = channel
            var welcome = [hello] + shared.states.keys.sorted().compactMap { shared.states[$0] }
            if let nodes = shared.nodes { welcome.append(nodes) }
            if !shared.recent.isEmpty { welcome.append("{\"kind\":\"actions\",\"dropped\":0,\"actions\":[\(shared.recent.joined(separator: ","))]}") }
            if !shared.benchLines.isEmpty { welcome.append(DevtoolsHub.benchMessage(shared.benchLines, reset: true)) }
            return welcome
        }
        for message in welcome { DevtoolsHub.send(message, to: channel) }
    }

    func leave(_ channel: any Channel) {
        _ = shared.withLock { $0.pages.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    var pageCount: Int { shared.withLock { $0.pages.count } }

    /// The bench feed lines a page that joins now would get.
    var benchLines: [String] { shared.withLock { $0.benchLines } }

    /// One text frame to one page. A page that does not read (its connection's buffer past the high
    /// water mark) is closed rather than let the server's memory grow for it. Closed, not skipped:
    /// a page that silently missed updates would show stale states as if live, while a closed one
    /// says it is disconnected, and on reconnecting gets the newest of everything (``join``).
    /// DevtoolsLimitsTests' stalled page proves the bound.
    static func send(_ text: String, to channel: any Channel) {
        guard channel.isActive else { return }
        guard channel.isWritable else {
            channel.close(promise: nil)
            return
        }
        let buffer = channel.allocator.buffer(string: text)
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer), promise: nil)
    }
}

/// The flush's timer, on a serial queue of its own.
// @unchecked: a dispatch source is thread safe, and this one is never replaced.
private final class FlushTimer: @unchecked Sendable {
    let source: any DispatchSourceTimer

    init(milliseconds: Int, _ handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "zflux-devtools-flush"))
        source.schedule(deadline: .now(), repeating: .milliseconds(milliseconds))
        source.setEventHandler(handler: handler)
    }
}

/// Lets the timer reach the hub without keeping it alive.
private final class FlushTarget: @unchecked Sendable {
    // @unchecked: set once, before the timer starts and so before any event reads it.
    weak var hub: DevtoolsHub?
}

/// Appends `bytes` (UTF-8) to `out` as the inside of a JSON string literal: quotes, backslashes and
/// control characters escaped, the rest as it is. Parts of one text may be appended one after another.
package func appendJSONStringContent(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    for byte in bytes {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            out.append(UInt8(ascii: "\\"))
            out.append(byte)
        case UInt8(ascii: "\n"): out += Array(#"\n"#.utf8)
        case ..<0x20: out += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xf)]]
        default: out.append(byte)
        }
    }
}

/// A string as a JSON string literal.
package func jsonString(_ text: String) -> String {
    String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
}
