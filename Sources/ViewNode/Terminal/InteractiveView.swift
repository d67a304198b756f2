import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import Synchronization
import ZeroMQ

/// `zflux view` on a terminal: the stores' screens full-screen, keys dispatching actions, a status line
/// with each dispatch's outcome, and a status bar with the store, version, time since the last update,
/// the end-to-end latency of this viewer's own dispatches and the connection state.
public final class InteractiveView: @unchecked Sendable {
    // @unchecked: everything mutable is touched only by the UI thread (`run`); other threads reach it
    // through `inbox` (locked) and the eventfd.
    public struct Store {
        public var name: String
        public var app: String
        public var configuration: ViewNode.Configuration
        public var screen: any StoreScreen
        /// Opens the history browser of this store (time travel); nil: not available.
        public var history: (() throws -> any ScreenMode)?
        public init(
            name: String, app: String, configuration: ViewNode.Configuration, screen: any StoreScreen,
            history: (() throws -> any ScreenMode)? = nil
        ) {
            self.name = name
            self.app = app
            self.configuration = configuration
            self.screen = screen
            self.history = history
        }
    }

    enum Event: Sendable {
        case update(ViewUpdate)
        case outcome(app: String, type: String, sentAt: UInt64, Result<DispatchOutcome, Error>)
    }

    /// What a store's screen shows: the newest update, and the state before it (as bytes for a screen
    /// that reads JSON, typed for a typed screen).
    struct Shown {
        var update: ViewUpdate?
        var previous: [UInt8]?
        var previousTyped: TypedState?
        var updatedAtMs: UInt64 = 0
        /// The screen was told the state shown (``TypedScreen/settled(state:)``) since it last changed
        /// or this view last dispatched.
        var settled = false

        /// Takes the store's newest update: true when the state shown changed (the screen renders it),
        /// false when only the status bar's figures did (how far it is current, the connection).
        mutating func take(_ update: ViewUpdate) -> Bool {
            precondition(update.rejection == nil, "a rejection leaves the state shown as it was")
            guard let old = self.update else {
                self.update = update
                return true
            }
            let typedChanged = old.typedState != update.typedState
            let changed = typedChanged || old.version != update.version || old.history != update.history || old.state != update.state
            if old.state != update.state { previous = old.state }
            if typedChanged { previousTyped = old.typedState }
            if changed { settled = false }
            self.update = update
            return changed
        }
    }

    private var stores: [Store]
    private var shown: [Shown]
    private var current = 0
    private let client: DispatchClient
    private let inbox = Mutex<[Event]>([])
    private let wake: EventFD
    private let stopFlag = Atomic<Bool>(false)
    private var statusLine = StyledLine("")
    /// Sent dispatches waiting to be seen in a view: seq → when they were sent.
    private var awaitingView: [UInt64: UInt64] = [:]
    private var lastLatencyMicroseconds: UInt64? = nil
    /// The body of the last frame, drawn again as it was on a tick with nothing new.
    private var body = KeptBody()
    /// This view's dispatches not yet in their store, by app: unanswered, and acknowledged as seqs its
    /// stores have not shown yet. A screen's text fields follow the store only when there are none.
    private var unanswered: [String: Int] = [:]
    private var unseen: [String: Set<UInt64>] = [:]
    private let logger: Logger
    /// The history browser, while it has the screen.
    private var mode: (any ScreenMode)?
    private var showingHelp = false
    private let startInHistory: Bool
    /// Keys every screen has, for the help overlay.
    static let globalKeys = ["Ctrl-N next store", "Ctrl-T history (time travel)", "F1/? this help", "Ctrl-C quit"]

    public init(stores: [Store], intake: String, security: Security.Settings? = nil, startInHistory: Bool = false, logger: Logger) throws {
        precondition(!stores.isEmpty)
        self.stores = stores
        self.startInHistory = startInHistory
        self.shown = Array(repeating: Shown(), count: stores.count)
        self.client = try DispatchClient(intake: intake, security: security, timeout: .seconds(3))
        self.wake = try EventFD()
        self.logger = logger
    }

    public func stop() {
        stopFlag.store(true, ordering: .releasing)
        wake.signal()
    }

    private func post(_ event: Event) {
        inbox.withLock { $0.append(event) }
        wake.signal()
    }

    /// Runs the view nodes and the UI until Ctrl-C or `stop()`. Blocks the calling thread (not the pool).
    public func run() throws {
        let nodes = try stores.map { store in
            var configuration = store.configuration
            // A typed screen renders the replica's typed state: the view need not encode it after each
            // change for this process to decode it again.
            if store.screen is any TypedScreen && configuration.app != nil && configuration.select == nil {
                configuration.materializesState = false
            }
            return try ViewNode(configuration: configuration, logger: logger) { [weak self] update in self?.post(.update(update)) }
        }
        let tasks = nodes.map { node in Task { try await node.run() } }
        defer {
            nodes.forEach { $0.stop() }
            tasks.forEach { $0.cancel() }
        }
        let terminal = Terminal()
        terminal.enter()
        defer { terminal.leave() }
        // A resize wakes the loop at once: the next frame is drawn for the new size.
        signal(SIGWINCH, SIG_IGN)
        let resized = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
        resized.setEventHandler { [wake] in wake.signal() }
        resized.resume()
        defer { resized.cancel() }
        if startInHistory { openHistory() }
        // `dirty`: the body is rendered again; `statusDirty`: only the lines below it changed.
        var dirty = true
        var statusDirty = false
        var lastDraw: UInt64 = 0
        while !stopFlag.load(ordering: .acquiring) {
            var fds = [
                pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            _ = poll(&fds, 2, 250)
            if fds[1].revents != 0 { wake.drain() }
            if terminal.updateSize() { dirty = true }
            for event in inbox.withLock({ events in
                defer { events.removeAll() }; return events
            }) {
                if handle(event) { dirty = true } else { statusDirty = true }
            }
            if fds[0].revents != 0 {
                for key in terminal.readKeys(timeoutMilliseconds: 0) {
                    if key == .control("c") || key == .control("q") { return }
                    if key == .control("n") {
                        current = (current + 1) % stores.count
                        mode = nil
                        showingHelp = false
                        dirty = true
                        continue
                    }
                    if showingHelp {
                        if key == .escape || key == .character("?") || key == .f1 || key == .character("q") { showingHelp = false }
                        dirty = true
                        continue
                    }
                    if key == .f1 || (key == .character("?") && !(mode?.takesText ?? stores[current].screen.takesText)) {
                        showingHelp = true
                        dirty = true
                        continue
                    }
                    if let mode {
                        switch mode.handle(key) {
                        case .ignored: break
                        case .redraw: dirty = true
                        case .leave:
                            self.mode = nil
                            statusLine = StyledLine("back to live", .dim)
                            dirty = true
                        }
                        continue
                    }
                    if key == .control("t") {
                        openHistory()
                        dirty = true
                        continue
                    }
                    if press(key) { dirty = true }
                }
            }
            // The status bar's "updated N s ago" ticks even when nothing else changes.
            let now = MonotonicClock.nowMilliseconds()
            if dirty || statusDirty || MonotonicClock.elapsed(since: lastDraw, now: now) >= 1000 {
                // Nothing new to show: only the status lines moved, so the body drawn then is drawn
                // again as it was, without asking the screen to render it.
                terminal.draw(frame(width: terminal.width, height: terminal.height, changed: dirty))
                dirty = false
                statusDirty = false
                lastDraw = now
            }
        }
    }

    /// Takes an event in; returns whether the current screen's body is to be rendered again (else only
    /// the status lines changed).
    private func handle(_ event: Event) -> Bool {
        switch event {
        case .update(let update):
            guard let index = stores.firstIndex(where: { $0.name == update.store }) else { return false }
            if let rejection = update.rejection {
                statusLine = StyledLine("✗ \(rejection.actionType) (seq \(rejection.seq)) rejected by \(update.store): \(rejection.reason)", .bad)
                awaitingView[rejection.seq] = nil
                return false
            }
            let appeared = shown[index].update == nil
            var changed = shown[index].take(update)
            if appeared { _ = perform(self.appeared(index, update)) }
            if changed { shown[index].updatedAtMs = MonotonicClock.nowMilliseconds() }
            if let seqs = unseen[stores[index].app] { unseen[stores[index].app] = seqs.filter { $0 > update.currentThrough } }
            if settleIfQuiet(stores[index].app) { changed = true }
            let now = MonotonicClock.nowNanoseconds() / 1000
            for (seq, sentAt) in awaitingView where seq <= update.currentThrough {
                lastLatencyMicroseconds = MonotonicClock.elapsed(since: sentAt, now: now)
                awaitingView[seq] = nil
            }
            return changed && index == current
        case .outcome(let app, let type, let sentAt, let result):
            unanswered[app, default: 1] -= 1
            switch result {
            case .success(.acknowledged(let seq)):
                statusLine = StyledLine("✓ \(type) sequenced as \(seq)", .good)
                let behind = stores.indices.contains { stores[$0].app == app && (shown[$0].update?.currentThrough ?? 0) < seq }
                if behind { unseen[app, default: []].insert(seq) }
                if let version = shown[current].update?.currentThrough, version >= seq {
                    lastLatencyMicroseconds = MonotonicClock.elapsed(since: sentAt, now: MonotonicClock.nowNanoseconds() / 1000)
                } else {
                    awaitingView[seq] = sentAt
                }
            case .success(.rejected(let reason)):
                statusLine = StyledLine("✗ \(type) rejected: \(reason)", .bad)
            case .success(.timedOut):
                statusLine = StyledLine("… \(type): no answer from the dispatcher", .bad)
            case .failure(let error):
                statusLine = StyledLine("✗ \(type): \(error)", .bad)
            }
            // The screen may follow its store again once this answer settles it.
            return settleIfQuiet(app)
        }
    }

    /// Hands the screen to the current store's history browser.
    private func openHistory() {
        guard let make = stores[current].history else {
            statusLine = StyledLine("no history for \(stores[current].name): time travel reads the cluster's journal on this host", .bad)
            return
        }
        do {
            mode = try make()
            statusLine = StyledLine("history of \(stores[current].name): L back to live", .dim)
        } catch {
            statusLine = StyledLine("✗ history: \(error)", .bad)
        }
    }

    /// Once nothing this view dispatched to `app` is still on its way, the screens of its stores follow
    /// their states again: each is told its state once (again after a change or a dispatch). Returns
    /// whether the current screen was told.
    private func settleIfQuiet(_ app: String) -> Bool {
        guard unanswered[app, default: 0] <= 0, unseen[app]?.isEmpty ?? true else { return false }
        var told = false
        for index in stores.indices where stores[index].app == app && !shown[index].settled {
            guard let update = shown[index].update else { continue }
            settled(index, update)
            shown[index].settled = true
            if index == current { told = true }
        }
        return told
    }

    /// Lets the current screen react to a key; returns whether anything is to be redrawn.
    private func press(_ key: Key) -> Bool {
        if var typed = stores[current].screen as? any TypedScreen {
            defer { stores[current].screen = typed }
            return perform(typed.handle(key, shown: shown[current].update))
        }
        return perform(stores[current].screen.handle(key, state: readable(shown[current].update?.state ?? [], stores[current])))
    }

    /// The store's state first shown to its screen: a typed screen takes the typed state.
    private func appeared(_ index: Int, _ update: ViewUpdate) -> KeyOutcome {
        if var typed = stores[index].screen as? any TypedScreen {
            defer { stores[index].screen = typed }
            return typed.appeared(shown: update)
        }
        return stores[index].screen.appeared(state: readable(update.state, stores[index]))
    }

    /// Nothing of this view is in flight to the store's app: its screen follows the store again.
    private func settled(_ index: Int, _ update: ViewUpdate) {
        if var typed = stores[index].screen as? any TypedScreen {
            typed.settled(shown: update)
            stores[index].screen = typed
        } else {
            stores[index].screen.settled(state: readable(update.state, stores[index]))
        }
    }

    /// Carries out what a screen asked for; returns whether anything is to be redrawn.
    private func perform(_ outcome: KeyOutcome) -> Bool {
        switch outcome {
        case .ignored:
            return false
        case .redraw:
            return true
        case .dispatch(let app, let type, let arguments):
            do {
                // Only the form is checked here: whether the action is acceptable is the dispatcher's
                // call, and its answer is what the status line shows.
                send(app: app, type: type, payload: try ActionCoding.json(type: type, arguments: Array(arguments.utf8)))
            } catch {
                statusLine = StyledLine("✗ \(type): \(error.reason)", .bad)
            }
            return true
        case .send(let app, let type, let payload):
            send(app: app, type: type, payload: payload)
            return true
        case .failed(let reason):
            statusLine = StyledLine("✗ \(reason)", .bad)
            return true
        }
    }

    /// Sends an encoded action; its answer comes back as an ``Event/outcome``.
    private func send(app: String, type: String, payload: [UInt8]) {
        let sentAt = MonotonicClock.nowNanoseconds() / 1000
        statusLine = StyledLine("→ \(type)…", .dim)
        unanswered[app, default: 0] += 1
        for index in stores.indices where stores[index].app == app { shown[index].settled = false }
        client.dispatch(app: app, type: type, payload: payload) { [weak self] result in
            self?.post(.outcome(app: app, type: type, sentAt: sentAt, result))
        }
    }

    /// Screens read JSON; the wire may carry the binary codec.
    private func readable(_ wire: [UInt8], _ store: Store) -> Data {
        guard WireCodec.isBinary(wire) else { return Data(wire) }
        // An app this binary does not host is read from the self-describing binary codec.
        guard let app = store.configuration.app else { return Data((try? GenericJSON.json(fromWire: wire)) ?? []) }
        return Data((try? app.stateJSON(fromWire: wire)) ?? [])
    }

    func frame(width: Int, height: Int, changed: Bool = true) -> Frame {
        let store = stores[current]
        let info = shown[current]
        let help = mode?.help ?? store.screen.help
        let footer: Frame = [statusLine, StyledLine(help, .dim), statusBar(store, info)]
        let room = max(0, height - footer.count)
        return body.frame(width: width, room: room, changed: changed) { body(width: width, room: room) } + footer
    }

    /// The part of the frame above the status lines: the title and the screen, the help or the history.
    private func body(width: Int, room: Int) -> Frame {
        let store = stores[current]
        let info = shown[current]
        var frame: Frame = [
            StyledLine(" \(StandardOutput.programName) view · \(store.name)", .bold)
                + StyledLine(stores.count > 1 ? "   (Ctrl-N: next of \(stores.map(\.name).joined(separator: ", ")))" : "", .dim), "",
        ]
        let help = mode?.help ?? store.screen.help
        if showingHelp {
            frame += HelpOverlay.frame(title: "Keys of \(store.name)\(mode == nil ? "" : " (history)")", help: help, global: Self.globalKeys)
        } else if let mode {
            frame += mode.render(width: width, height: max(0, room - frame.count))
        } else if let typed = store.screen as? any TypedScreen, let body = typed.render(shown: info, width: width) {
            frame += body
        } else if let update = info.update {
            frame += store.screen.render(
                state: readable(update.state, store), previous: info.previous.map { readable($0, store) }, width: width)
        } else {
            frame.append(StyledLine("waiting for \(store.name)…", .dim))
        }
        frame = Array(frame.prefix(room))
        while frame.count < room { frame.append("") }
        return frame
    }

    func statusBar(_ store: Store, _ info: Shown) -> StyledLine {
        var parts = [store.name]
        if let update = info.update {
            parts.append(mode == nil ? "version \(update.currentThrough)" : "live at version \(update.currentThrough)")
            let age = Double(MonotonicClock.elapsed(since: info.updatedAtMs, now: MonotonicClock.nowMilliseconds())) / 1000
            parts.append(String(format: "updated %.0f s ago", age))
        }
        if let latency = lastLatencyMicroseconds {
            parts.append(latency < 1000 ? "e2e \(latency) µs" : String(format: "e2e %.1f ms", Double(latency) / 1000))
        }
        let connection = info.update?.connection.description ?? "connecting"
        let style: StyledLine.Style = if case .live = info.update?.connection { .inverse } else { .bad }
        return StyledLine(" " + parts.joined(separator: " · ") + " · ", .inverse) + StyledLine(connection + " ", style)
    }
}
