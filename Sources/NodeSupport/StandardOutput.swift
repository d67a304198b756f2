import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes to stdout and stderr the way a Unix filter does.
///
/// zflux ignores SIGPIPE, so that a metrics probe that hangs up cannot kill a node. A command whose
/// reader goes away (`zflux journal dump | head -2`) then sees EPIPE on its next write. `FileHandle`
/// traps on that error; these functions instead end the process the way `cat` ends in the same pipe:
/// quietly, by SIGPIPE, so a shell with `pipefail` still learns that the output was cut short.
public enum StandardOutput {
    /// Writes `text` and a newline to stdout, whole.
    public static func line(_ text: String) { write(text + "\n") }

    /// Writes `text` to stdout, whole. Ends the process when stdout's reader has gone, or when stdout
    /// cannot be written (a full disk).
    public static func write(_ text: String) { write(bytes: Array(text.utf8)) }

    /// Writes raw bytes to stdout, whole; ends the process as ``write(_:)`` does.
    public static func write(bytes: [UInt8]) {
        let failure = writeAll(bytes, to: STDOUT_FILENO)
        if failure == 0 { return }
        if failure == EPIPE { readerGone() }
        // Output that was lost is an error the caller's exit status must show, as `cat > /dev/full` does.
        error("\(programName): cannot write to stdout: \(String(cString: strerror(failure)))\n")
        exit(1)
    }

    /// Writes `text` to stderr. A failing stderr is ignored: there is nowhere left to say so.
    public static func error(_ text: String) { _ = writeAll(Array(text.utf8), to: STDERR_FILENO) }

    /// For a command that may wait long between lines (`tail`, `view --json`, `journal tail --follow`):
    /// ends the process as soon as stdout's reader goes, not at the next line, as `tail -f | head -1`
    /// does. Only for a pipe or a socket: a terminal or a file has no reader to lose.
    public static func endWhenReaderGoes() {
        var info = stat()
        guard fstat(STDOUT_FILENO, &info) == 0 else { return }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFIFO || kind == S_IFSOCK else { return }
        let thread = Thread {
            while true {
                // No events asked for: poll reports only POLLERR (a pipe's reader closed) or POLLHUP.
                var watched = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
                let ready = poll(&watched, 1, -1)
                if ready > 0 && watched.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { readerGone() }
                if ready < 0 && errno != EINTR { return }
            }
        }
        thread.name = "zflux-stdout-watch"
        thread.start()
    }

    /// Ends the process as the default SIGPIPE action would have.
    public static func readerGone() -> Never {
        signal(SIGPIPE, SIG_DFL)
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        pthread_sigmask(SIG_UNBLOCK, &pipeOnly, nil)
        kill(getpid(), SIGPIPE)
        // Reached only if the signal could not be delivered: the status a shell shows for SIGPIPE.
        _exit(128 + SIGPIPE)
    }

    /// The name the process was started by (`zflux`, or a team's own `poll`), for messages and help.
    /// A test bundle running zflux's code in its own process is no command line: there it is `zflux`.
    public static var programName: String {
        guard let name = CommandLine.arguments.first.flatMap({ $0.split(separator: "/").last.map(String.init) }), !name.hasSuffix(".xctest")
        else { return "zflux" }
        return name
    }

    /// Writes every byte, retrying interrupted and partial writes. 0, or the errno the descriptor
    /// failed with (EPIPE above all).
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Int32 {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return 0 }
                #if canImport(Glibc)
                    return Glibc.write(descriptor, base + written, buffer.count - written)
                #else
                    return Darwin.write(descriptor, base + written, buffer.count - written)
                #endif
            }
            if count > 0 {
                written += count
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // A non-blocking descriptor that is full: wait until it drains.
                var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&waiting, 1, -1)
            } else {
                return count == 0 ? EIO : errno
            }
        }
        return 0
    }
}
