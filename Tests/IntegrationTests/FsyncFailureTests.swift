import Dispatcher
import Examples
import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Spawn
import Testing

/// `scripts/faultfs.py` mounted for one test: a passthrough of `backing` at `mountpoint` whose fsyncs
/// fail (EIO, dropping what they would have made durable) while `control/fail-fsync` exists.
final class FaultFS: Sendable {
    let mountpoint: String
    let control: String
    let log: String
    private let process: ChildProcess

    /// The Python with pyfuse3 and trio (Debian's python3-pyfuse3), when there is one.
    static let python: String? = {
        var candidates: [String] = ["/usr/bin/python3"]
        if let found = which("python3") { candidates.append(found) }
        for candidate in candidates {
            let probe: CommandResult? = try? runProgram(candidate, ["-c", "import pyfuse3, trio"])
            if probe?.status == 0 { return candidate }
        }
        return nil
    }()

    /// Root (to mount), /dev/fuse, fusermount3 (to unmount whatever happens) and the Python binding.
    static let isAvailable: Bool = {
        guard geteuid() == 0, access("/dev/fuse", R_OK | W_OK) == 0 else { return false }
        guard which("fusermount3") != nil else { return false }
        return python != nil
    }()

    init(directory: String) throws {
        let python = try #require(Self.python)
        let backing = directory + "/backing"
        mountpoint = directory + "/mnt"
        control = directory + "/control"
        log = directory + "/faultfs.log"
        for path in [backing, mountpoint, control] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        process = try ChildProcess(
            executable: python, arguments: [packageRoot + "/scripts/faultfs.py", backing, mountpoint, control], output: .appended(to: log),
            diesWithParent: true)
        let deadline = ContinuousClock.now + .seconds(20)
        while !isMounted && process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        guard isMounted else {
            unmount()
            let said: String = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw TestFailure("faultfs did not mount \(mountpoint): \(said)")
        }
    }

    var isMounted: Bool {
        let mounts: String = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        // The fifth field of a line is where it is mounted.
        for line in mounts.split(separator: "\n") {
            let fields: [Substring] = line.split(separator: " ")
            if fields.count > 4 && fields[4] == mountpoint { return true }
        }
        return false
    }

    /// fsync fails from now on (`true`), or works again.
    func failFsync(_ fail: Bool) {
        let flag = control + "/fail-fsync"
        if fail {
            _ = FileManager.default.createFile(atPath: flag, contents: nil)
        } else {
            try? FileManager.default.removeItem(atPath: flag)
        }
    }

    /// The fsyncs that failed, one line each, with what they dropped.
    var failures: [String] {
        let text: String = (try? String(contentsOfFile: control + "/failures", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { String($0) }
    }

    /// Stops the filesystem (SIGTERM unmounts it) and makes sure nothing stays mounted.
    func unmount() {
        process.stop(grace: .seconds(5))
        if isMounted { _ = try? runProgram(which("fusermount3") ?? "/bin/fusermount3", ["-u", "-z", mountpoint]) }
        if isMounted { _ = try? runProgram("/bin/umount", ["-l", mountpoint]) }
    }
}

@Suite("A journal disk whose fsync fails (real processes, FUSE)", .serialized, .timeLimit(.minutes(5)))
struct FsyncFailureTests {
    @Test(
        "fsync failing under load (EIO, its pages dropped): no action whose sync failed is acknowledged, the dispatcher stops and is started again from what the disk holds, and once fsync works every acknowledged action is in the journal and the store",
        .enabled(
            if: FaultFS.isAvailable,
            "needs root, /dev/fuse, and Debian's fuse3 and python3-pyfuse3 (`make test-deps` installs them); this machine lacks one"),
        arguments: ["in place", "on sync threads"])
    func failedFsyncIsNeverTrusted(syncs: String) async throws {
        var template = Array("/tmp/zf-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fs = try FaultFS(directory: dir)
        defer { fs.unmount() }
        let journal = fs.mountpoint + "/journal"
        let config = dir + "/cluster.toml"
        try """
        [cluster]
        transport = "ipc"
        heartbeat_ms = 100
        [journal]
        directory = "\(journal)"
        fsync = "batch"
        [[store]]
        name = "counter"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        // The pipelined group commit (ZFLUX_SYNC_THREADS=2) syncs through descriptors of its own: each
        // must meet the failure too.
        let cluster = try ClusterProcess(
            transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", config],
            environment: syncs == "on sync threads" ? ["ZFLUX_SYNC_THREADS": "2"] : [:])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let first = try #require(cluster.currentPid("dispatcher"))

        // Two clients dispatch; a third of the way in, fsync starts failing, and works again once the
        // dispatcher has met it.
        let switched = Locked(false)
        let acked = try await runLoad(
            intake: try #require(cluster.topology).dispatcher.intake, clients: 2, perClient: 1_500,
            make: { client, i in try counterAction(client * 100_000 + i) },
            progress: { count in
                guard count == 1_000 else { return }
                let firstTime: Bool = switched.withLock { flipped in
                    defer { flipped = true }
                    return !flipped
                }
                guard firstTime else { return }
                fs.failFsync(true)
                let deadline = ContinuousClock.now + .seconds(30)
                while fs.failures.isEmpty && ContinuousClock.now < deadline { usleep(10_000) }
                fs.failFsync(false)
            })
        #expect(acked.count == 3_000)
        let failures = fs.failures
        #expect(!failures.isEmpty, "an fsync failed under the dispatcher")
        let dispatcherLog = try String(contentsOfFile: cluster.runDir + "/logs/dispatcher.log", encoding: .utf8)
        #expect(dispatcherLog.contains("syncs run on sync threads") == (syncs == "on sync threads"), "the mode asked for is the one that ran")
        #expect(dispatcherLog.contains("Input/output error"), "the dispatcher says why: \(dispatcherLog.suffix(3000))")
        #expect(cluster.currentPid("dispatcher") != first, "the dispatcher stopped and was started again")

        // The store ends at the reduction of what the clients were told.
        let expected = try expectedStates(acked).counter
        #expect(try await waitForState(cluster, "counter", version: 3_000, as: Counter.State.self, timeout: .seconds(60)) == expected)
        cluster.stop(keepRunDirectory: true)
        let verified = try zflux(["journal", "verify", "--journal", journal])
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")

        // Each ACK names the action the journal holds at its seq: none was acknowledged whose sync failed.
        let held = try Journal(directory: journal, repair: false)
        #expect(held.lastSeq == 3_000, "no action was sequenced twice or lost")
        var records: [UInt64: Message] = [:]
        try held.forEach { records[$0.header.seq] = $0 }
        for entry in acked {
            let record = try #require(records[entry.seq], "acknowledged seq \(entry.seq) is not in the journal")
            #expect(
                record.header.clientID == entry.client && record.header.clientSeq == entry.clientSeq && record.payload == entry.payload,
                "seq \(entry.seq) holds the action acknowledged with it")
        }
    }
}
