import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Spawn
import Testing

/// The built `zflux` binary: $ZFLUX_BIN, or next to the test bundle, or the package's debug build.
let zfluxBinary: String = {
    if let path = ProcessInfo.processInfo.environment["ZFLUX_BIN"] { return path }
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("zflux").path
    if FileManager.default.isExecutableFile(atPath: beside) { return beside }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/zflux").path
}()

struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `zflux ARGS` to completion (bounded) and captures its output.
/// `environment` adds variables for this child only (never `setenv`: tests run concurrently, and every
/// process another test spawns meanwhile would inherit it).
func zflux(_ arguments: [String], timeout: Duration = .seconds(30), environment: [String: String] = [:]) throws -> CommandResult {
    try runProgram(zfluxBinary, arguments, timeout: timeout, environment: environment)
}

/// Runs a program to completion (bounded), with `input` on its stdin, and captures its output.
func runProgram(
    _ path: String, _ arguments: [String], input: String? = nil, timeout: Duration = .seconds(30), environment: [String: String] = [:]
) throws -> CommandResult {
    let process = try ChildProcess(
        executable: path, arguments: arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
        output: .piped, errors: .piped, pipedInput: input != nil)
    if let writer = process.standardInput, let input {
        // Written on its own queue: a child that answers before reading all its input cannot block us.
        DispatchQueue.global().async {
            writer.write(Data(input.utf8))
            try? writer.close()
        }
    }
    // Drain both pipes while the child runs, so a full pipe can never block it.
    let captured = Locked<[Int: Data]>([:])
    let readers = DispatchGroup()
    for (index, pipe) in [process.standardOutput, process.standardError].enumerated() {
        guard let pipe else { continue }
        DispatchQueue.global().async(group: readers) {
            let data = pipe.readDataToEndOfFile()
            captured.withLock { $0[index] = data }
        }
    }
    if !process.waitForExit(timeout: timeout) {
        process.kill()
        Issue.record("\(URL(fileURLWithPath: path).lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
    }
    let status: Int32 =
        switch process.waitUntilExit() {
        case .exited(let status): status
        case .signalled(let signal): signal  // as Foundation's terminationStatus says it
        }
    _ = readers.wait(timeout: .now() + 10)
    let data = captured.withLock { $0 }
    return CommandResult(
        status: status, stdout: String(decoding: data[0] ?? Data(), as: UTF8.self),
        stderr: String(decoding: data[1] ?? Data(), as: UTF8.self))
}

/// A command that runs until it is stopped (`view --json`, `tail --json`), its stdout collected line
/// by line as it comes. `stop()`, or the end of its owner's scope, ends it by SIGTERM (SIGKILL after a
/// grace period) and reaps it, so that no follower outlives its test.
final class Follower {
    let process: ChildProcess
    /// What it was started with, for failure messages.
    let arguments: [String]
    private let collected = Locked<[String]>([])
    private let errors = Locked(Data())
    /// Left by each of the two pipe readers at end of file.
    private let readersDone = DispatchGroup()
    private var stopped = false

    init(_ program: String, _ arguments: [String]) throws {
        self.arguments = arguments
        process = try ChildProcess(executable: program, arguments: arguments, output: .piped, errors: .piped)
        guard let out = process.standardOutput, let err = process.standardError else {
            process.kill()
            throw NodeError("\(program) started without its pipes")
        }
        let (lines, errors, done) = (collected, errors, readersDone)
        done.enter()
        done.enter()
        Thread {
            defer { done.leave() }
            var buffer = Data()
            while true {
                let chunk = out.availableData
                if chunk.isEmpty { return }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    lines.withLock { $0.append(line) }
                }
            }
        }.start()
        Thread {
            defer { done.leave() }
            while true {
                let chunk = err.availableData
                if chunk.isEmpty { return }
                errors.withLock { $0.append(chunk) }
            }
        }.start()
    }

    /// Waits, up to `timeout`, for it to exit by itself and for both readers to reach the end of its
    /// output; true if both happened. After a true, `stderr` and `lines` hold all it printed: a
    /// process can be gone while its last lines are still in the pipe, unread.
    func exits(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        guard process.waitForExit(timeout: timeout) else { return false }
        let left = deadline - ContinuousClock.now
        let wait = max(Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18, 0) + 10
        return readersDone.wait(timeout: .now() + wait) == .success
    }

    /// Every whole line printed so far.
    var lines: [String] { collected.withLock { $0 } }
    /// What it printed on stderr so far.
    var stderr: String { String(decoding: errors.withLock { $0 }, as: UTF8.self) }

    /// Ends it (once); true if it exited by itself, with status 0, within the grace period after SIGTERM.
    @discardableResult
    func stop() -> Bool {
        guard !stopped else { return true }
        stopped = true
        return process.stop(grace: .seconds(20)) && process.termination == .exited(0)
    }

    deinit { stop() }
}
