import Foundation
import Spawn
import Synchronization
import Testing

/// The one way zflux starts and stops a child: its exit status, its output where it was sent, a stop
/// that a child ignoring SIGTERM cannot outlast, and no helper left behind in its process group.
@Suite("ChildProcess: start, output, exit status, stop")
struct ChildProcessTests {
    @Test("a child's exit status, and the signal that ended one, are what it reports; onExit hears the same")
    func exitStatus() throws {
        let heard = Heard()
        let exited = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "exit 3"]) { heard.set($0) }
        #expect(exited.waitUntilExit() == .exited(3))
        #expect(!exited.isRunning)
        #expect(exited.waitForExit(timeout: .zero), "an ended child has ended for every waiter")
        #expect(heard.wait() == .exited(3))

        let killed = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "kill -KILL $$"])
        #expect(killed.waitUntilExit() == .signalled(SIGKILL))
    }

    @Test("stdout and stderr go to a pipe, a file (appended to) or /dev/null, and the environment is the one given")
    func output() throws {
        let piped = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "echo out $GREETING; echo err >&2"], environment: ["GREETING": "hello"],
            output: .piped, errors: .piped)
        let out = try #require(piped.standardOutput).readDataToEndOfFile()
        let err = try #require(piped.standardError).readDataToEndOfFile()
        #expect(piped.waitUntilExit() == .exited(0))
        #expect(String(decoding: out, as: UTF8.self) == "out hello\n")
        #expect(String(decoding: err, as: UTF8.self) == "err\n")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zflux-spawn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("child.log").path
        for word in ["one", "two"] {
            let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo \(word); echo \(word)-err >&2"], output: .appended(to: log))
            #expect(child.waitUntilExit() == .exited(0))
        }
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "one\none-err\ntwo\ntwo-err\n")

        let quiet = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo nothing"], errors: .piped)
        #expect(try #require(quiet.standardError).readDataToEndOfFile().isEmpty)
        #expect(quiet.waitUntilExit() == .exited(0))
    }

    @Test("stop: a child that exits on SIGTERM ends cleanly; one that ignores it is killed with its process group")
    func stop() throws {
        let polite = try ChildProcess(executable: "/bin/sleep", arguments: ["60"])
        #expect(polite.isRunning)
        #expect(polite.stop(grace: .seconds(30)), "sleep ends on SIGTERM")
        #expect(polite.termination == .signalled(SIGTERM))

        // The shell ignores SIGTERM and leaves a helper in its group, which reports its pid and then
        // waits on the group's pipe: it reads the end of the stream only when every member is gone.
        let stubborn = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "trap '' TERM; sleep 60 & echo $!; wait"], output: .piped)
        let stdout = try #require(stubborn.standardOutput)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.readData(ofLength: 1)
            try #require(!chunk.isEmpty, "the shell reports its helper's pid")
            line.append(chunk)
        }
        #expect(pid_t(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) != nil)
        #expect(!stubborn.stop(grace: .milliseconds(200)), "a child that ignores SIGTERM outlasts the grace period")
        #expect(stubborn.termination == .signalled(SIGKILL))
        // The helper held the pipe's writing end: the end of the stream says it went with its group
        // (a helper left alive would hold it open, and this read would not return).
        #expect(stdout.readDataToEndOfFile().isEmpty)
    }

    @Test("a program that cannot be started throws and leaves nothing running")
    func missingProgram() {
        #expect(throws: SpawnError.self) { try ChildProcess(executable: "/nonexistent/zflux-no-such-program", arguments: []) }
    }
}

/// What an `onExit` heard, for the test's thread to wait for.
final class Heard: Sendable {
    private let termination = Mutex<ChildProcess.Termination?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func set(_ value: ChildProcess.Termination) {
        termination.withLock { $0 = value }
        done.signal()
    }

    func wait() -> ChildProcess.Termination? {
        done.wait()
        return termination.withLock { $0 }
    }
}
