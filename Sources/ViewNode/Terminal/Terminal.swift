import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The terminal a full-screen view draws on: raw input, the alternate screen, the size, and restoring
/// everything on exit, on a crash signal and on Ctrl-C.
public final class Terminal: @unchecked Sendable {
    // @unchecked: used from the view's UI thread only; the saved settings are also read by the
    // restore-on-signal handler, which only reads them.
    nonisolated(unsafe) private static var saved: termios? = nil
    private var previous: [String]? = nil
    public private(set) var width = 80
    public private(set) var height = 24
    public let colour: Bool

    /// True when stdin and stdout are terminals.
    public static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    public init() {
        colour = ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true
    }

    /// Raw mode and the alternate screen; restored by `leave()`, at exit, and on fatal signals.
    public func enter() {
        var settings = termios()
        tcgetattr(STDIN_FILENO, &settings)
        Terminal.saved = settings
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        Terminal.write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
        atexit { Terminal.restore() }
        for sig in [SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE] {
            signal(sig) { sig in
                Terminal.restore()
                signal(sig, SIG_DFL)
                raise(sig)
            }
        }
        updateSize()
    }

    public func leave() { Terminal.restore() }

    /// Leaves the alternate screen and gives the terminal back as it was. Safe to call more than once.
    static func restore() {
        guard var settings = saved else { return }
        saved = nil
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
        write("\u{1B}[?25h\u{1B}[?1049l")
    }

    /// Reads the window size; returns true when it changed (then the next draw repaints everything).
    @discardableResult
    public func updateSize() -> Bool {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return false }
        let changed = Int(size.ws_col) != width || Int(size.ws_row) != height
        width = Int(size.ws_col)
        height = Int(size.ws_row)
        if changed { previous = nil; Terminal.write("\u{1B}[2J") }
        return changed
    }

    /// Draws a frame, writing only the rows that differ from what is on the screen.
    public func draw(_ frame: Frame) {
        var lines = frame.prefix(height).map { $0.rendered(width: width, colour: colour) }
        while lines.count < height { lines.append(String(repeating: " ", count: width)) }
        Terminal.write(FrameDiff.output(from: previous, to: lines))
        previous = lines
    }

    /// Waits up to `timeoutMilliseconds` for key presses.
    public func readKeys(timeoutMilliseconds: Int32) -> [Key] {
        var pfd = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, timeoutMilliseconds) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = read(STDIN_FILENO, &buffer, buffer.count)
        return n > 0 ? Key.decode(Array(buffer[0..<n])) : []
    }

    static func write(_ text: String) {
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress?.advanced(by: written), $0.count - written) }
            if n <= 0 { if errno == EINTR { continue } else { return } }
            written += n
        }
    }
}
