import ArgumentParser
import FluxCore
import Foundation
import NodeSupport
import Synchronization
import ViewNode
import ZeroMQ

struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print the ordered action stream as it happens: seq, time, app.type, payload.",
        discussion: """
            Live actions only (the journal's history is `zflux journal dump`). On a terminal it runs \
            full-screen, newest at the bottom: / filters the lines, ? lists the keys, q or Ctrl-C quits. \
            Piped, with --json or with --stream, it prints one line per action until Ctrl-C.
            """)

    @Option(help: "Only this app's actions.") var app: String?
    @Option(help: "Only actions of this type (case name).") var type: String?
    @Flag(help: "One JSON object per line, as `zflux journal dump` prints.") var json = false
    @Flag(help: "Print lines even on a terminal, instead of the full-screen list.") var stream = false
    @OptionGroup var runDir: RunDirOptions

    func run() async throws {
        let (topology, security) = try runDir.cluster()
        let stop = Atomic<Bool>(false)
        let signals = TerminationSignals { _ in stop.store(true, ordering: .releasing) }
        let (app, type, json) = (app, type, json)
        let host = ZFluxCLI.Host.current
        let interactive = !json && !stream && Terminal.isInteractive
        let screen = SharedTailScreen()
        let output: @Sendable (String) -> Void
        if interactive {
            output = { line in screen.withLock { $0.append(line) } }
        } else {
            output = { emitLine($0) }
            StandardOutput.endWhenReaderGoes()
        }
        if interactive {
            let title = screen.withLock { $0.title(app: app, type: type) }
            Thread {
                let terminal = Terminal()
                terminal.enter()
                defer { terminal.leave() }
                var shown = -1
                var dirty = true
                loop: while !stop.load(ordering: .acquiring) {
                    let count = screen.withLock { $0.lines.count }
                    if terminal.updateSize() || count != shown { dirty = true }
                    if dirty {
                        shown = count
                        terminal.draw(screen.withLock { $0.frame(title: title, width: terminal.width, height: terminal.height) })
                        dirty = false
                    }
                    for key in terminal.readKeys(timeoutMilliseconds: 100) {
                        dirty = true
                        if key == .control("c") { break loop }
                        if screen.withLock({ $0.keys.handle(key) }) { break loop }
                    }
                }
                stop.store(true, ordering: .releasing)
            }.start()
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            Thread {
                continuation.resume(
                    with: Result {
                        try followActionStream(
                            topology: topology, security: security, app: app, type: type,
                            stopped: { stop.load(ordering: .acquiring) },
                            onAction: { output(json ? jsonLine($0, host) : TailCommand.plainLine($0, host)) },
                            onRejected: { message in
                                let reason = String(decoding: message.payload, as: UTF8.self)
                                output(
                                    json
                                        ? TailCommand.rejectedJSONLine(message)
                                        : "\(message.header.seq)  rejected by \(message.topicString): \(message.header.actionType): \(reason)")
                            })
                    })
            }.start()
        }
        withExtendedLifetime(signals) {}
    }

    /// A store's refusal as `tail --json` prints it.
    static func rejectedJSONLine(_ message: Message) -> String {
        let reason = String(decoding: message.payload, as: UTF8.self)
        return
            "{\"seq\":\(message.header.seq),\"rejected_by\":\(quotedJSON(message.topicString)),\"type\":\(quotedJSON(message.header.actionType)),\"client\":\(message.header.clientID),\"reason\":\(quotedJSON(reason))\(message.header.flags.contains(.quarantined) ? ",\"quarantined\":true" : "")}"
    }

    static func plainLine(_ message: Message, _ host: ZFluxCLI.Host) -> String {
        let time = ISO8601DateFormatter.withFractionalSeconds.string(from: Date(timeIntervalSince1970: Double(message.header.timestamp) / 1e9))
        return
            "\(message.header.seq)  \(time)  \(message.topicString).\(message.header.actionType)  \(String(decoding: readablePayload(message, host), as: UTF8.self))"
    }
}

struct TopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract:
            "A live dashboard of the cluster: every node, its role, pid, uptime, version, rate, lag, subscribers, journal size and sync p99, restarts.",
        discussion:
            "Refreshes every second on a terminal: / filters the nodes, ? lists the keys, q or Ctrl-C quits. Not on a terminal, or with --once, prints the table once."
    )

    @Flag(help: "Print the table once and exit.") var once = false
    @Option(
        help: ArgumentHelp(
            "Watch the node whose status endpoint this is (its intake or snapshot endpoint); repeat for more. Default: every node of the cluster.",
            valueName: "endpoint"))
    var endpoint: [String] = []
    @OptionGroup var runDir: RunDirOptions

    func run() async throws {
        let nodes = try statusTargets(endpoints: endpoint, runDir: runDir)
        let table = TopTable(nodes: nodes, runDirectory: runDir.path)
        guard !once && Terminal.isInteractive else {
            table.sample()
            for line in table.printedLines() { emitLine(line.plainText) }
            return
        }
        let stop = Atomic<Bool>(false)
        let signals = TerminationSignals { _ in stop.store(true, ordering: .releasing) }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            Thread {
                let terminal = Terminal()
                terminal.enter()
                defer { terminal.leave() }
                var nextSample: UInt64 = 0
                var keys = ListKeys()
                var dirty = true
                loop: while !stop.load(ordering: .acquiring) {
                    let now = MonotonicClock.nowMilliseconds()
                    if now >= nextSample {
                        table.sample()
                        nextSample = now + 1000
                        dirty = true
                    }
                    if terminal.updateSize() { dirty = true }
                    if dirty {
                        terminal.draw(keys.frame(title: table.title) { table.lines(filter: keys.prompt) })
                        dirty = false
                    }
                    for key in terminal.readKeys(timeoutMilliseconds: 100) {
                        dirty = true
                        if key == .control("c") || keys.handle(key) { break loop }
                    }
                }
                continuation.resume()
            }.start()
        }
        withExtendedLifetime(signals) {}
    }
}

/// Follows the dispatcher's ordered action stream and the stores' REJECTED notices (what a store
/// refused in its state) on the calling thread, which owns the two sockets, until `stopped` says so:
/// `tail` prints them, `devtools` sends them to its page. `app` and `type` keep only those.
func followActionStream(
    topology: Topology, security: Security.Settings?, app: String?, type: String?, stopped: () -> Bool,
    onAction: (Message) -> Void, onRejected: (Message) -> Void
) throws {
    let socket = try SocketDefaults.subscriber(.shared)
    defer { socket.close() }
    try socket.subscribe(Array((app ?? "").utf8))
    try socket.connectSecurely(topology.dispatcher.actions, security)
    let stores = try SocketDefaults.subscriber(.shared)
    defer { stores.close() }
    for store in topology.stores where app == nil || store.app == app {
        try stores.subscribe(Array(store.name.utf8))
        try stores.connectSecurely(store.state, security)
    }
    while !stopped() {
        var poller = Poller()
        poller.add(.socket(socket))
        poller.add(.socket(stores))
        guard try poller.poll(timeoutMilliseconds: 200) > 0 else { continue }
        while let frames = try socket.receive(dontWait: true) {
            // A burst's actions of one app may come as one ACTION-BATCH.
            guard let received = try? Message(frames: frames), let actions = try? ActionBatch.unpack(received) else { continue }
            for message in actions
            where message.kind == .action && (app == nil || message.topicString == app) && (type == nil || message.header.actionType == type) {
                onAction(message)
            }
        }
        while let frames = try stores.receive(dontWait: true) {
            guard let message = try? Message(frames: frames), message.kind == .rejected, type == nil || message.header.actionType == type
            else { continue }
            onRejected(message)
        }
    }
}

/// The full-screen tail's lines, filled by the receiving thread and drawn by the UI thread.
final class SharedTailScreen: Sendable {
    private let screen = Mutex(TailScreen())
    func withLock<T>(_ body: (inout TailScreen) -> T) -> T { screen.withLock { body(&$0) } }
}

/// The nodes `status` and `top` ask: the given endpoints, or every node of the cluster.
func statusTargets(endpoints: [String], runDir: RunDirOptions) throws -> [StatusTarget] {
    if !endpoints.isEmpty {
        // CURVE settings still come from the cluster, when one is described here.
        var security: Security.Settings? = nil
        if runDir.configPath != nil || FileManager.default.fileExists(atPath: runDir.path + "/" + Topology.fileName) {
            security = (try? runDir.cluster())?.security
        }
        return endpoints.map { StatusTarget(key: $0, name: $0, endpoint: $0, security: security) }
    }
    let (topology, security) = try runDir.cluster()
    return [StatusTarget(key: "dispatcher", name: "dispatcher", endpoint: topology.dispatcher.intake, security: security)]
        + topology.stores.map { StatusTarget(key: "store-\($0.name)", name: $0.name, endpoint: $0.snapshot, security: security) }
}
