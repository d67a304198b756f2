import Dispatch
import Foundation
import Synchronization

/// Turns SIGINT/SIGTERM/SIGHUP into a callback: a hang-up (the terminal or ssh session went away)
/// stops a command the way Ctrl-C does, its nodes stopped and its terminal restored, instead of
/// killing it on the spot.
///
/// The handler is installed with `signal()` before `init` returns, so no signal sent after that is
/// lost. (Dispatch signal sources, used before, arm themselves later, on libdispatch's own thread,
/// while the signal is already ignored: a SIGTERM sent right after a command said it was up was
/// dropped, and the command went on until it was killed. `DevtoolsLimitsTests` "stopped the moment
/// it prints its address…" caught it.) The handler only writes the signal's number to a pipe; a
/// thread of its own reads it and calls every live instance's callback.
final class TerminationSignals: Sendable {
    private static let callbacks = Mutex<[ObjectIdentifier: @Sendable (Int32) -> Void]>([:])

    /// Made once: the pipe, the thread that reads it, then the handlers.
    private static let installed: Void = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        // A handler must never block: with the pipe full (thousands of signals unread), one is dropped.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        terminationPipeWriteEnd = ends[1]
        let readEnd = ends[0]
        let reader = Thread {
            var number: UInt8 = 0
            while true {
                let count = read(readEnd, &number, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return }
                let signal = Int32(number)
                for callback in TerminationSignals.callbacks.withLock({ Array($0.values) }) { callback(signal) }
            }
        }
        reader.name = "zflux-signals"
        reader.start()
        for sig in [SIGINT, SIGTERM, SIGHUP] { signal(sig, forwardTerminationSignal) }
    }()

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        // Registered before the handlers exist, so the first signal finds it.
        TerminationSignals.callbacks.withLock { $0[ObjectIdentifier(self)] = handler }
        TerminationSignals.installed
    }

    deinit { _ = TerminationSignals.callbacks.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) } }
}

/// The pipe's write end: set once, before any handler that reads it is installed.
nonisolated(unsafe) private var terminationPipeWriteEnd: Int32 = -1

/// The signal handler: async-signal-safe, it writes the signal's number to the pipe and nothing else.
private func forwardTerminationSignal(_ signal: Int32) {
    let saved = errno
    var number = UInt8(truncatingIfNeeded: signal)
    _ = write(terminationPipeWriteEnd, &number, 1)
    errno = saved
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
