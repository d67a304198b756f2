import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A child process, started with `posix_spawn` and reaped by a thread of its own (`waitpid`): the one
/// way zflux starts and stops a program, whether a node under the supervisor, a `cluster up` or a floor
/// program under the bench, or the etcd of a pair.
///
/// Foundation's `Process` learns of a child's exit when a socket the child inherited is closed. A
/// grandchild that keeps it open, such as the Swift runtime's crash reporter hanging over a crashed
/// node, then hides the exit for as long as it lives: the node stays `<defunct>`, unrestarted. Here a
/// thread per child blocks in `waitpid`, which answers the moment the child itself is gone, whatever
/// its helpers hold.
///
/// The same thread spawns the child, and lives until it is reaped. So a child started with
/// `diesWithParent` (under `setpriv --pdeathsig KILL`, whose signal the kernel ties to the thread that
/// spawned) is killed when this process dies without stopping it, and not before.
///
/// By default each child leads a process group of its own: Ctrl-C at the terminal reaches the parent
/// alone, which stops its children itself (SIGTERM, then SIGKILL after a grace period), and a SIGKILL to
/// the group takes a child's helpers with it.
///
/// Public for ``Termination`` alone, which the supervisor's public events carry; the rest is the
/// package's.
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

    /// Where one of the child's output streams goes.
    package enum Output: Sendable, Equatable {
        /// /dev/null.
        case discarded
        /// Appended to the file at this path, which is made (mode 0600) if it is missing.
        case appended(to: String)
        /// Into a pipe, whose reading end is ``standardOutput`` or ``standardError``.
        case piped
    }

    package let pid: pid_t
    /// How long a child's leftover helpers (a crash reporter) may run after the child ended.
    package static let reporterTimeLimit: Duration = .seconds(10)
    /// The writing end of the child's stdin, when it is piped (`pipedInput`); closing it ends the input.
    package let standardInput: FileHandle?
    /// The reading end of the child's stdout, when it is ``Output/piped``.
    package let standardOutput: FileHandle?
    /// The reading end of the child's stderr, when it is ``Output/piped``.
    package let standardError: FileHandle?
    private let reaper: Reaper

    /// What the reaper thread shares with its owner.
    private final class Reaper: Sendable {
        let spawned = Mutex<Result<pid_t, SpawnError>?>(nil)
        let started = DispatchSemaphore(value: 0)
        let ended = Mutex<Termination?>(nil)
        let reaped = DispatchSemaphore(value: 0)
    }

    /// Starts `executable` with `arguments` and `environment` (nil: this process's), stdin from
    /// /dev/null (or, with `pipedInput`, from ``standardInput``), stdout to `output` and stderr to `errors` (nil: wherever stdout goes, through the same
    /// open file), with every signal at its default. `ownProcessGroup`: the child leads a process group
    /// of its own (else it stays in this process's). `diesWithParent`: under `setpriv --pdeathsig KILL`,
    /// where setpriv exists. `onExit` is called once, on the child's reaper thread, when it has ended.
    package init(
        executable: String, arguments: [String], environment: [String: String]? = nil, output: Output = .discarded,
        errors: Output? = nil, pipedInput: Bool = false, ownProcessGroup: Bool = true, diesWithParent: Bool = false,
        onExit: @escaping @Sendable (Termination) -> Void = { _ in }
    ) throws(SpawnError) {
        let setpriv = "/usr/bin/setpriv"
        let command =
            diesWithParent && access(setpriv, X_OK) == 0
            ? [setpriv, "--pdeathsig", "KILL", "--", executable] + arguments : [executable] + arguments
        let environment = environment ?? ProcessInfo.processInfo.environment
        let inputPipe = try pipedInput ? Self.makePipe() : nil
        let outputPipe = try output == .piped ? Self.makePipe() : nil
        let errorPipe = try errors == .piped ? Self.makePipe() : nil
        standardInput = inputPipe.map { FileHandle(fileDescriptor: $0.write, closeOnDealloc: true) }
        standardOutput = outputPipe.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
        standardError = errorPipe.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
        let streams = [(Int32(1), output, outputPipe?.write), (Int32(2), errors ?? output, errorPipe?.write)]
        let input = inputPipe?.read
        let shareOutput = errors == nil

        let reaper = Reaper()
        self.reaper = reaper
        let thread = Thread {
            var child: pid_t = 0
            let result = Self.spawn(
                command, environment: environment, input: input, streams: streams, shareOutput: shareOutput, ownProcessGroup: ownProcessGroup,
                pid: &child)
            reaper.spawned.withLock { $0 = result == 0 ? .success(child) : .failure(SpawnError("cannot start \(executable)", result)) }
            reaper.started.signal()
            guard result == 0 else { return }
            Thread.current.name = "zflux-reaper-\(child)"
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            // WIFEXITED / WTERMSIG by hand: the C macros do not come through to Swift.
            let signal = status & 0x7f
            let termination: Termination = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
            reaper.ended.withLock { $0 = termination }
            reaper.reaped.signal()
            onExit(termination)
            // What the child left in its process group (the runtime's crash reporter, writing a crashed
            // node's backtrace to its log) gets a time limit, then goes. The group's id cannot be
            // reused while a member lives, so this reaches no one else.
            guard ownProcessGroup else { return }
            var waited = Duration.zero
            while Glibc.kill(-child, 0) == 0 && waited < ChildProcess.reporterTimeLimit {
                usleep(100_000)
                waited += .milliseconds(100)
            }
            if waited >= ChildProcess.reporterTimeLimit { Glibc.kill(-child, SIGKILL) }
        }
        thread.start()
        reaper.started.wait()
        // The child has its copies of the pipes' writing ends: this process keeps none, so that a reader
        // sees the end of the stream when the child (and whatever it passed them to) has closed them.
        for pipe in [outputPipe, errorPipe] { if let pipe { close(pipe.write) } }
        if let inputPipe { close(inputPipe.read) }
        switch reaper.spawned.withLock({ $0 }) {
        case .success(let child):
            pid = child
        case .failure(let error):
            throw error
        case nil:
            preconditionFailure("the reaper thread signalled before it spawned")
        }
    }

    /// How the child ended; nil while it runs.
    package var termination: Termination? { reaper.ended.withLock { $0 } }

    package var isRunning: Bool { termination == nil }

    /// Waits up to `timeout` for the child to end; true if it has.
    @discardableResult
    package func waitForExit(timeout: Duration) -> Bool {
        if !isRunning { return true }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        guard reaper.reaped.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return false }
        reaper.reaped.signal()  // for any other waiter
        return true
    }

    /// Waits, as long as it takes, for the child to end, and says how it did.
    @discardableResult
    package func waitUntilExit() -> Termination {
        while true {
            if let termination { return termination }
            reaper.reaped.wait()
            reaper.reaped.signal()  // for any other waiter
        }
    }

    /// SIGTERM, without waiting: a child asked to shut down cleanly.
    package func terminate() {
        if isRunning { Glibc.kill(pid, SIGTERM) }
    }

    /// SIGTERM, up to `grace` for the child to shut down cleanly, then SIGKILL to it and its process
    /// group (a crash reporter it left behind included). Returns once the child is reaped; true if it
    /// ended within the grace period.
    @discardableResult
    package func stop(grace: Duration) -> Bool {
        terminate()
        return killUnlessEnded(within: grace)
    }

    /// Up to `grace` for a child already asked to stop (``terminate()``) to end, then SIGKILL to it
    /// and its process group. Returns once the child is reaped; true if it ended within `grace`.
    @discardableResult
    package func killUnlessEnded(within grace: Duration) -> Bool {
        let clean = waitForExit(timeout: grace)
        if !clean { kill() }
        return clean
    }

    /// SIGKILL to the child and its process group, as a crash would end it; returns once it is reaped.
    package func kill() {
        if isRunning {
            Glibc.kill(-pid, SIGKILL)
            Glibc.kill(pid, SIGKILL)
        }
        waitUntilExit()
    }

    /// A pipe whose ends are closed on exec, so that another child inherits neither. (Glibc's module
    /// leaves out pipe2, which would set that at once: a child another thread spawns in between the
    /// two calls may inherit them, as from Foundation's `Pipe`.)
    private static func makePipe() throws(SpawnError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SpawnError("cannot make a pipe", errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// posix_spawn of `command` (its program first). Returns posix_spawn's result.
    private static func spawn(
        _ command: [String], environment: [String: String], input: Int32?, streams: [(Int32, Output, Int32?)], shareOutput: Bool,
        ownProcessGroup: Bool, pid: inout pid_t
    ) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        for (fd, output, pipe) in streams {
            if fd == 2 && shareOutput {
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
                continue
            }
            switch output {
            case .discarded: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            case .appended(let path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_APPEND | O_CREAT, 0o600)
            case .piped: posix_spawn_file_actions_adddup2(&actions, pipe ?? -1, fd)
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        // A parent may ignore SIGPIPE or handle SIGINT, SIGTERM and SIGHUP itself, and an ignored signal
        // stays ignored across exec: a child starts from every default and sets its own.
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        return posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
    }
}

/// A child that could not be started, and why.
package struct SpawnError: Error, CustomStringConvertible, Sendable {
    package let message: String

    package init(_ what: String, _ error: Int32) {
        message = "\(what): \(String(cString: strerror(error)))"
    }

    package var description: String { message }
}
