import Dispatch
import Foundation

/// Keeps signal sources alive and turns SIGINT/SIGTERM/SIGHUP into a callback: a hang-up (the terminal
/// or ssh session went away) stops a command the way Ctrl-C does, its nodes stopped and its terminal
/// restored, instead of killing it on the spot.
// @unchecked: dispatch sources are thread safe and never mutated after init.
final class TerminationSignals: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { handler(sig) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    deinit { sources.forEach { $0.cancel() } }
}

/// A node started by a supervisor stops when the supervisor is gone, even after `kill -9`, so no node
/// is ever orphaned. (PR_SET_PDEATHSIG fires when the spawning *thread* exits, which Foundation's
/// Process does not pin down, so the parent is watched instead.)
// @unchecked: the timer source is thread safe and never mutated after init.
final class ParentWatch: @unchecked Sendable {
    private let timer: any DispatchSourceTimer

    init?(supervisorPid: Int32?, onGone: @escaping @Sendable () -> Void) {
        guard let supervisorPid else { return nil }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now(), repeating: .milliseconds(200))
        timer.setEventHandler {
            if getppid() != supervisorPid { onGone() }
        }
        timer.resume()
        self.timer = timer
    }

    deinit { timer.cancel() }
}
