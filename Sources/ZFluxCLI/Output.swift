import NodeSupport

// What a command prints: results on stdout, errors as `NAME: message` on stderr.

/// A failure the user can act on; printed as `zflux: message` with exit status 1.
struct CLIError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Writes `line` and a newline to stdout, whole and unbuffered, so piped output arrives line by
/// line; ends the process quietly when stdout's reader has gone (``StandardOutput``).
func emitLine(_ line: String) {
    StandardOutput.line(line)
}

func printError(_ line: String) {
    StandardOutput.error(RootCommand.binaryName + ": " + line + "\n")
}
