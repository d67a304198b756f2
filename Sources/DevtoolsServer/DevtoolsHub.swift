import CLinux
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

/// One open page: its connection and the bytes written to it that have not gone out to its socket
/// yet, which ``DevtoolsHub/send(_:to:)`` bounds.
final class Page: Sendable {
    let channel: any Channel
    let queued = Atomic<Int>(0)

    init(channel: any Channel) { self.channel = channel }
}

/// What every open page shares: the newest state of each store, the newest node table, the recent
/// actions, and the pages to send them to. The cluster's threads hand their news in (``updateState``,
/// ``action(_:)``, ``nodes(_:)``); a timer sends what is new to every page ten times a second, so a
/// store applying thousands of actions a second costs the page ten state messages a second, each the
/// newest state.
///
/// Memory is bounded in bytes whatever the pages do (docs/GUARANTEES.md, "Devtools"): the recent
/// actions by ``recentBytes``, an action's line by ``actionBytes``, what one page has queued by
/// ``pageBytes`` and all pages together by ``pagesBytes``. A message is encoded once and its bytes
/// are shared by every page it goes to.
package final class DevtoolsHub: Sendable {
    struct Pending {
        var version: UInt64
        var connection: String
        var render: @Sendable () -> String
    }

    struct Shared {
        /// The newest `{"kind":"state",…}` sent per store, which a page that joins gets first.
        var states: [String: ByteBuffer] = [:]
        /// States that changed since the last flush, rendered to JSON only at the flush.
        var pending: [String: Pending] = [:]
        var nodes: String?
        var nodesChanged = false
        /// The newest actions (as JSON objects), oldest first, at most ``recentActions`` and
        /// ``recentBytes``; `recentSize` is their bytes.
        var recent = CircularBuffer<String>()
        var recentSize = 0
        /// Actions not sent yet (at most ``batchCap`` and ``batchBytes``; `freshSize` their bytes), and
        /// how many were dropped beyond that since the last flush.
        var fresh = CircularBuffer<String>()
        var freshSize = 0
        var dropped = 0
        var pages: [ObjectIdentifier: Page] = [:]
        /// The current bench run's live feed lines (``bench(_:newRun:)``), which a page that joins gets;
        /// the lines not sent yet, and whether they start a new run.
        var benchLines: [String] = []
        var freshBench: [String] = []
        var benchReset = false
    }

    static let recentActions = 500
    /// The most bytes of recent actions kept for pages that join (their JSON).
    static let recentBytes = 1 << 20
    /// The longest line of the action stream: a longer one is dropped, counted as dropped. `zflux
    /// devtools` leaves the payload out of a line that would be longer (``actionBytes``).
    package static let actionBytes = 16 << 10
    /// The most bench lines of a run kept: an hour's seconds, its trials and its report. Past it, the
    /// oldest seconds go; the run's first line (its `start`) stays.
    static let benchLinesKept = 4_000
    static let batchCap = 500
    static let batchBytes = 1 << 20
    /// A joining page gets the recent actions in messages of at most this many bytes.
    static let welcomePartBytes = 256 << 10
    /// What one page may have queued (written, not yet taken by its socket): past it, the page is
    /// closed. A page with nothing queued is sent any one message, so a state larger than this still
    /// reaches a page that reads.
    static let pageBytes = 32 << 20
    /// What all pages together may have queued (counted per page, though pages share the bytes of
    /// one message): a page that would take the sum past it is closed, if it has anything queued.
    static let pagesBytes = 64 << 20

    private let shared = Mutex(Shared())
    /// The bytes queued over every page.
    let queued = Atomic<Int>(0)
    private let timer: FlushTimer
    private let trim = MemoryTrim()

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

    /// One action of the stream (or a store's refusal), as a JSON object of at most ``actionBytes``.
    package func action(_ json: String) {
        let size = json.utf8.count
        shared.withLock { shared in
            guard size <= DevtoolsHub.actionBytes else {
                shared.dropped += 1
                return
            }
            DevtoolsHub.keep(
                json, size: size, in: &shared.recent, bytes: &shared.recentSize, count: DevtoolsHub.recentActions, maxBytes: DevtoolsHub.recentBytes)
            shared.dropped += DevtoolsHub.keep(
                json, size: size, in: &shared.fresh, bytes: &shared.freshSize, count: DevtoolsHub.batchCap, maxBytes: DevtoolsHub.batchBytes)
            precondition(
                shared.recentSize <= DevtoolsHub.recentBytes && shared.freshSize <= DevtoolsHub.batchBytes, "the actions kept stay in their budgets")
        }
    }

    /// Appends `line` to `lines`, then drops the oldest past `count` lines or `maxBytes`; returns how many went.
    @discardableResult
    static func keep(_ line: String, size: Int, in lines: inout CircularBuffer<String>, bytes: inout Int, count: Int, maxBytes: Int) -> Int {
        lines.append(line)
        bytes += size
        var dropped = 0
        while lines.count > count || bytes > maxBytes, let oldest = lines.popFirst() {
            bytes -= oldest.utf8.count
            dropped += 1
        }
        return dropped
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

    /// The recent actions as `{"kind":"actions",…}` messages of at most about ``welcomePartBytes`` each.
    static func actionMessages(_ actions: some Collection<String>, dropped: Int) -> [String] {
        var messages: [String] = []
        var part: [String] = []
        var size = 0
        func close() {
            messages.append("{\"kind\":\"actions\",\"dropped\":\(messages.isEmpty ? dropped : 0),\"actions\":[\(part.joined(separator: ","))]}")
            (part, size) = ([], 0)
        }
        for action in actions {
            if !part.isEmpty && size + action.utf8.count > welcomePartBytes { close() }
            part.append(action)
            size += action.utf8.count + 1
        }
        if !part.isEmpty || dropped > 0 { close() }
        return messages
    }

    /// Sends what changed since the last flush to every page.
    func flush() {
        let (pending, fresh, dropped, nodes, pages, bench) = shared.withLock { shared in
            defer {
                shared.pending = [:]
                shared.fresh = CircularBuffer()
                shared.freshSize = 0
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
        var messages: [ByteBuffer] = []
        var rendered: [String: ByteBuffer] = [:]
        for (store, update) in pending.sorted(by: { $0.key < $1.key }) {
            let message = DevtoolsHub.buffer(
                "{\"kind\":\"state\",\"store\":\(jsonString(store)),\"version\":\(update.version),\"connection\":\(jsonString(update.connection)),\"state\":\(update.render())}"
            )
            rendered[store] = message
            messages.append(message)
        }
        if !rendered.isEmpty { shared.withLock { $0.states.merge(rendered) { _, new in new } } }
        if let nodes { messages.append(DevtoolsHub.buffer(nodes)) }
        if !fresh.isEmpty || dropped > 0 { messages += DevtoolsHub.actionMessages(fresh, dropped: dropped).map(DevtoolsHub.buffer) }
        if let bench { messages.append(DevtoolsHub.buffer(bench)) }
        for message in messages {
            for page in pages { send(message, to: page) }
        }
    }

    /// A page joined: it gets the newest of everything, then what comes. The recent actions come in
    /// parts, each bounded, so the welcome is never one message the size of everything kept.
    func join(_ channel: any Channel, hello: String) -> Page {
        let page = Page(channel: channel)
        let (states, nodes, recent, bench) = shared.withLock { shared in
            shared.pages[ObjectIdentifier(channel)] = page
            return (
                shared.states.keys.sorted().compactMap { shared.states[$0] }, shared.nodes, shared.recent,
                shared.benchLines.isEmpty ? nil : DevtoolsHub.benchMessage(shared.benchLines, reset: true)
            )
        }
        send(DevtoolsHub.buffer(hello), to: page)
        for state in states { send(state, to: page) }
        if let nodes { send(DevtoolsHub.buffer(nodes), to: page) }
        for part in DevtoolsHub.actionMessages(recent, dropped: 0) { send(DevtoolsHub.buffer(part), to: page) }
        if let bench { send(DevtoolsHub.buffer(bench), to: page) }
        // The end of the welcome: the page marks itself ready once it has drawn all of it.
        send(DevtoolsHub.buffer(#"{"kind":"welcomed"}"#), to: page)
        return page
    }

    func leave(_ channel: any Channel) {
        _ = shared.withLock { $0.pages.removeValue(forKey: ObjectIdentifier(channel)) }
        // What it had queued was let go with its connection; give it back to the system (glibc keeps
        // freed memory in its arenas otherwise).
        trim.soon()
    }

    var pageCount: Int { shared.withLock { $0.pages.count } }

    /// The bench feed lines a page that joins now would get.
    var benchLines: [String] { shared.withLock { $0.benchLines } }

    /// A message's bytes, made once and shared by every page it goes to.
    static func buffer(_ text: String) -> ByteBuffer { ByteBufferAllocator().buffer(string: text) }

    /// One text frame to one page. A page that does not read is closed rather than let the server's
    /// memory grow for it: when what it has queued, with this message, would pass ``pageBytes``, or
    /// what all pages have queued would pass ``pagesBytes``. Closed, not skipped: a page that silently
    /// missed updates would show stale states as if live, while a closed one says it is disconnected,
    /// and on reconnecting gets the newest of everything (``join``). A page with nothing queued is
    /// sent any one message. DevtoolsLimitsTests' stalled pages prove the bounds.
    func send(_ message: ByteBuffer, to page: Page) {
        let channel = page.channel
        guard channel.isActive else { return }
        let size = message.readableBytes
        let mine = page.queued.load(ordering: .relaxed)
        if mine > 0 && (mine + size > DevtoolsHub.pageBytes || queued.load(ordering: .relaxed) + size > DevtoolsHub.pagesBytes) {
            channel.close(promise: nil)
            return
        }
        page.queued.wrappingAdd(size, ordering: .relaxed)
        queued.wrappingAdd(size, ordering: .relaxed)
        let promise = channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenComplete { [self] _ in
            // Written to the socket, or failed with the connection: either way no longer held for it.
            page.queued.wrappingSubtract(size, ordering: .relaxed)
            queued.wrappingSubtract(size, ordering: .relaxed)
        }
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: message), promise: promise)
    }

    func send(_ text: String, to page: Page) { send(DevtoolsHub.buffer(text), to: page) }
}

/// Gives freed memory back to the system a moment after pages leave, at most once a second.
final class MemoryTrim: Sendable {
    private let pending = Atomic<Bool>(false)

    func soon() {
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(1)) { [self] in
            pending.store(false, ordering: .releasing)
            _ = CLinux_trim_heap()
        }
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
