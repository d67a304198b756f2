import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import ZeroMQ

/// The view's shell: owns its two sockets on the node thread, turns what arrives into ``ViewCore``
/// events and carries out the core's commands. It decides nothing itself.
final class ViewLoop: NodeLoop {
    let configuration: ViewNode.Configuration
    let logger: Logger
    let control: NodeControl<Never>
    let onUpdate: @Sendable (ViewUpdate) -> Void
    let context: Context
    let core: ViewCore
    let subscriber: Socket
    /// Replaced when a snapshot request goes unanswered.
    var snapshots: Socket
    /// Whole states over 4 MiB arrive in parts, on either socket.
    var updateParts = MessageAssembler()
    var snapshotParts = MessageAssembler()
    /// Carries out the core's commands against this loop's socket and screen (the simulator runs the
    /// same interpreter against its own network).
    private(set) lazy var interpreter = ViewInterpreter(core: core, io: self)

    init(
        configuration: ViewNode.Configuration, context: Context, logger: Logger, control: NodeControl<Never>,
        onUpdate: @escaping @Sendable (ViewUpdate) -> Void
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        self.onUpdate = onUpdate
        self.context = context
        self.core = ViewCore(rules: configuration.rules, now: .now(), logger: logger)
        subscriber = try SocketDefaults.subscriber(context)
        try subscriber.subscribe(Array(configuration.topic.utf8))
        try subscriber.connectSecurely(configuration.state, configuration.security)
        snapshots = try SocketDefaults.dealer(context)
        try snapshots.connectSecurely(configuration.snapshot, configuration.security)
    }

    deinit {
        subscriber.close()
        snapshots.close()
    }

    func run() throws {
        core.start(now: .now())
        interpreter.carryOut()
        while !control.stopRequested {
            // Poll the current snapshot socket: it is replaced when a request goes unanswered.
            var poller = Poller()
            let subIndex = poller.add(.socket(subscriber))
            let snapIndex = poller.add(.socket(snapshots))
            let wakeIndex = poller.add(.fileDescriptor(control.wake.descriptor))
            _ = try poller.poll(timeoutMilliseconds: configuration.heartbeatMilliseconds)
            if poller.isReadable(wakeIndex) { _ = control.takeAll() }
            if poller.isReadable(snapIndex) {
                while let frames = try snapshots.receive(dontWait: true) {
                    guard let part = try? Message(frames: frames) else { continue }
                    // A snapshot in parts comes a few at a time: ask for the next ones.
                    if part.header.flags.contains(.part) { core.receivedSnapshotPart(now: .now()) }
                    if let more = MessageParts.continuation(after: part) { _ = try? snapshots.send(more.frames, dontWait: true) }
                    if let reply = snapshotParts.accept(part) { core.receivedSnapshot(reply, now: .now()) }
                }
            }
            if poller.isReadable(subIndex) {
                for _ in 0..<10_000 {
                    guard let frames = try subscriber.receive(dontWait: true) else { break }
                    if let part = try? Message(frames: frames), let message = updateParts.accept(part) {
                        core.receivedUpdate(message, now: .now())
                    }
                }
                core.endOfBurst()
            }
            core.tick(now: .now())
            interpreter.carryOut()
        }
    }
}

/// The loop's DEALER and screen, as the interpreter reaches them.
extension ViewLoop: ViewIO {
    func requestSnapshot(_ request: Message) {
        do {
            try snapshots.send(request.frames, dontWait: true)
        } catch {
            logger.debug("snapshot request not sent", metadata: ["error": "\(error)"])
        }
    }

    func replaceSnapshotSocket() {
        snapshots.close()
        snapshotParts = MessageAssembler()
        if let fresh = try? SocketDefaults.dealer(context) {
            try? fresh.connectSecurely(configuration.snapshot, configuration.security)
            snapshots = fresh
        }
    }

    func show(_ update: ViewUpdate) { onUpdate(update) }
}
