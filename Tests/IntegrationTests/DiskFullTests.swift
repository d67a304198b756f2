import Examples
import FluxTesting
import Foundation
import Testing

/// A journal on a disk that fills up (issue 35): a tmpfs of its own, mounted for the test.
@Suite("A full journal disk (real processes, a small tmpfs)", .serialized, .timeLimit(.minutes(5)))
struct DiskFullTests {
    /// Mounts a tmpfs of `megabytes` at `path` (root only: the test machines run as root).
    static func mountTmpfs(_ path: String, megabytes: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounted = try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", path])
        try #require(mounted.status == 0, "mounting a tmpfs needs root: \(mounted.stderr)")
    }

    /// Fills the file system of `path` with `file` until a write fails for lack of room.
    static func fill(_ file: String) {
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x5A, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    @Test(
        "a full journal disk is a refusal, not a crash: dispatches get a NACK that names the cause, the dispatcher keeps serving status and the store its state, and once space is freed dispatches are acknowledged again by the same process, with a journal that verifies"
    )
    func fullDiskRefusesAndRecovers() async throws {
        let dir = NSTemporaryDirectory() + "zflux-diskfull-\(UUID().uuidString.prefix(8))"
        let disk = dir + "/disk"
        try Self.mountTmpfs(disk, megabytes: 4)
        defer {
            _ = try? runProgram("/bin/umount", [disk])
            try? FileManager.default.removeItem(atPath: dir)
        }
        let config = dir + "/cluster.toml"
        try """
        [cluster]
        transport = "ipc"
        [journal]
        directory = "\(disk)/journal"
        fsync = "batch"
        [[store]]
        name = "counter"
        [[store]]
        name = "ledger"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let dispatcher = try #require(cluster.currentPid("dispatcher"))
        func dispatch(_ app: String, _ action: String, _ payload: String? = nil) throws -> CommandResult {
            try cluster.zflux(["dispatch", app, action] + (payload.map { [$0] } ?? []) + ["--timeout", "10"])
        }
        func status() throws -> [String: Any] {
            let answered = try cluster.zflux(["status", "--endpoint", try #require(cluster.topology).dispatcher.intake])
            return try #require(try JSONSerialization.jsonObject(with: Data(answered.stdout.utf8)) as? [String: Any], "\(answered.stderr)")
        }
        for _ in 0..<3 { #expect(try dispatch("counter", "incrementTapped").status == 0) }

        // The disk fills up (another program's file). The action whose write finds it full was already
        // sequenced: it is kept, unacknowledged, and written once there is room; the ones after it are refused.
        let filler = disk + "/filler"
        Self.fill(filler)
        let memo = String(repeating: "f", count: 16 << 10)
        let held = try cluster.zflux(["dispatch", "ledger", "post", #"{"account":1,"amount":1,"memo":"\#(memo)"}"#, "--timeout", "2"])
        #expect(held.status == 2 && held.stderr.contains("no answer"), "\(held.stdout) \(held.stderr)")
        let refused = try dispatch("ledger", "post", #"{"account":1,"amount":1,"memo":"\#(memo)"}"#)
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("the journal cannot be written") && refused.stderr.contains("No space left on device"), "\(refused.stderr)")
        // The NACK was not for want of a dispatcher: the same one answers status, and says what is wrong.
        let full = try status()
        #expect(full["journal_writable"] as? Bool == false && (full["problem"] as? String)?.contains("No space left") == true, "\(full)")
        #expect(cluster.currentPid("dispatcher") == dispatcher && kill(dispatcher, 0) == 0, "the dispatcher was not restarted")
        let state = try cluster.zflux(["state", "counter"])
        #expect(state.status == 0 && state.stdout.contains("3"), "the store still serves: \(state.stdout) \(state.stderr)")

        // Space comes back: dispatches are taken again, by the same process.
        try FileManager.default.removeItem(atPath: filler)
        try await eventually("a dispatch to be acknowledged once there is room", timeout: .seconds(60)) {
            try dispatch("ledger", "post", #"{"account":1,"amount":1,"memo":"\#(memo)"}"#).status == 0
        }
        #expect(try dispatch("counter", "incrementTapped").status == 0)
        let back = try status()
        #expect(back["journal_writable"] as? Bool == true && back["problem"] == nil, "\(back)")
        #expect(cluster.currentPid("dispatcher") == dispatcher && kill(dispatcher, 0) == 0, "the dispatcher was not restarted")
        // Seqs 1–3 the counter's, 4 the held post (written once there was room), 5 the next, 6 the counter's.
        let after = try await waitForState(cluster, "counter", version: 6, as: Counter.State.self, timeout: .seconds(60))
        #expect(after.count == 4)
        let ledger = try cluster.zflux(["state", "ledger"])
        #expect(
            ledger.stdout.contains("\"balance\":2") || ledger.stdout.contains("\"balance\" : 2"), "both posts applied: \(ledger.stdout.prefix(300))")

        // Nothing torn or half-written is left in the journal.
        cluster.stop(keepRunDirectory: true)
        let verified = try zflux(["journal", "verify", "--journal", disk + "/journal"])
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
    }
}
