import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A node process the supervisor started, whose exit it learns from the kernel (`waitpid`).
///
/// Foundation's `Process` learns of a child's exit when a socket the child inherited is closed. A
/// grandchild that keeps it open, such as the Swift runtime's crash reporter hanging over a crashed
/// node, then hides the exit for as long as it lives: the node stays `<defunct>`, unrestarted. Here a
/// thread per child blocks in `waitpid`, which answers the moment the child itself is gone, whatever
/// its helpers hold.
///
/// Each child leads a process group of its own: Ctrl-C at the terminal reaches the supervisor alone,
/// which stops the nodes (SIGTERM to all, then SIGKILL after one shared grace period), and a SIGKILL to the group takes a node's helpers with it.
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): "status \(status)"
            case .signalled(let signal): "signal \(signal)\(signal == SIGKILL ? " (SIGKILL)" : signal == SIGABRT ? " (SIGABRT)" : "")"
            }
        }
    }

    public let pid: pid_t
    /// How long a node's leftover helpers (a crash reporter) may run after the node ended.
    public static let reporterTimeLimit: Duration = .seconds(10)
    private let ended = Mutex<Termination?>(nil)
    private let reaped = DispatchSemaphore(value: 0)

    /// Starts `executable` with `arguments`, stdin from /dev/null and stdout and stderr appended to
    /// `log`. `onExit` is called once, on the child's reaper thread, when the child has ended.
    public init(
        executable: String, arguments: [String], environment: [String: String], log: String,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        // The supervisor ignores SIGPIPE and handles SIGINT, SIGTERM and SIGHUP itself, and an ignored
        // signal stays ignored across exec: a node starts from every default and sets its own.
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw ClusterError("cannot start \(executable): \(String(cString: strerror(result)))") }
        pid = child

        let thread = Thread { [self, child] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            // WIFEXITED / WTERMSIG by hand: the C macros do not come through to Swift.
            let signal = status & 0x7f
            let termination: Termination = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
            self.ended.withLock { $0 = termination }
            self.reaped.signal()
            onExit(termination)
            // What the node left in its process group (the runtime's crash reporter, writing a crashed
            // node's backtrace to its log) gets a time limit, then goes. The group's id cannot be
            // reused while a member lives, so this reaches no one else.
            var waited = Duration.zero
            while kill(-child, 0) == 0 && waited < ChildProcess.reporterTimeLimit {
                usleep(100_000)
                waited += .milliseconds(100)
            }
            if waited >= ChildProcess.reporterTimeLimit { kill(-child, SIGKILL) }
        }
        thread.name = "zflux-reaper-\(child)"
        thread.start()
    }

    /// How the child ended; nil while it runs.
    public var termination: Termination? { ended.withLock { $0 } }

    public var isRunning: Bool { termination == nil }

    /// Waits up to `timeout` for the child to end; true if it has.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Bool {
        if !isRunning { return true }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        guard reaped.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return false }
        reaped.signal()  // for any other waiter
        return true
    }

    /// SIGTERM, without waiting: a node asked to shut down cleanly.
    public func terminate() {
        if isRunning { kill(pid, SIGTERM) }
    }

    /// SIGTERM, up to `grace` for the node to shut down cleanly, then SIGKILL to its whole process
    /// group (a crash reporter it left behind included). Returns once the child is reaped; true if it
    /// ended within the grace period.
    @discardableResult
    public func stop(grace: Duration) -> Bool {
        terminate()
        return killUnlessEnded(within: grace)
    }

    /// Up to `grace` for a child already asked to stop (``terminate()``) to end, then SIGKILL to its
    /// whole process group. Returns once the child is reaped; true if it ended within `grace`.
    @discardableResult
    public func killUnlessEnded(within grace: Duration) -> Bool {
        let clean = waitForExit(timeout: grace)
        if !clean {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            waitForExit(timeout: .seconds(60))
        }
        return clean
    }
}
