import FluxTesting
import Foundation
import NodeSupport
import Testing

/// A child that has exited counts as ended even before anything reaps it: a deadline waiting on a
/// child bounds the child, not how late the waiting process's own bookkeeping runs.
@Suite("A child's end, read from /proc")
struct ProcessEndTests {
    /// Spawns `program` with `arguments`, reaped by no one until the caller does.
    func spawn(_ program: String, _ arguments: [String]) throws -> pid_t {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let rc = posix_spawn(&pid, program, nil, nil, argv, environ)
        try #require(rc == 0, "posix_spawn \(program): \(rc)")
        return pid
    }

    @Test("an exited child not yet reaped has ended; a running one has not; a pid that is gone has not")
    func zombieHasEnded() async throws {
        let running = try spawn("/bin/sleep", ["30"])
        defer {
            kill(running, SIGKILL)
            var status: Int32 = 0
            waitpid(running, &status, 0)
        }
        #expect(!Process.hasEnded(running))
        let exited = try spawn("/bin/true", [])
        try await eventually("/bin/true has exited", timeout: .seconds(30)) { Process.hasEnded(exited) }
        var status: Int32 = 0
        #expect(waitpid(exited, &status, 0) == exited)
        #expect(!Process.hasEnded(exited), "reaped: no such process any more")
        #expect(!Process.hasEnded(0) && !Process.hasEnded(-1))
    }
}
