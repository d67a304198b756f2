import FluxTesting
import Foundation
import Testing

/// A pair whose standby's journal disk fills up (issue 35): the standby does not crash-loop; the sync
/// leader acknowledges nothing new meanwhile, and both go on once there is room.
extension PairFailoverTests {
    @Test(
        "the standby's journal disk fills up: the standby keeps running and says so, the sync leader acknowledges nothing new meanwhile, and once space is freed the same standby follows again and dispatches are acknowledged"
    )
    func standbyDiskFull() async throws {
        let run = try await PairRun.start()
        defer { run.end() }
        let (pair, runDir) = (run.pair, run.pair.runDir)
        // d1 leads; d2, whose journal is on a small disk of its own, follows it.
        let disk = runDir + "/journal-d2"
        try DiskFullTests.mountTmpfs(disk, megabytes: 4)
        defer { _ = try? runProgram("/bin/umount", [disk]) }
        let d1 = try pair.start("d1")
        defer { d1.stop() }
        #expect(try await Self.waitForLeader(run.client, pair.key) == "d1", "d1 leads, started alone")
        let d2 = try pair.start("d2")
        defer { d2.stop() }
        try await eventually("d2 to follow d1", timeout: .seconds(60)) { d2.stderr.contains("following the leader") }
        func dispatch(timeout: Int) throws -> CommandResult {
            try zflux(
                [
                    "dispatch", "ledger", "post", #"{"account":1,"amount":1,"memo":"\#(String(repeating: "s", count: 16 << 10))"}"#, "--run-dir",
                    runDir,
                    "--timeout", String(timeout),
                ], timeout: .seconds(Double(timeout + 30)))
        }
        #expect(try dispatch(timeout: 20).status == 0, "acknowledged while both journals have room")

        DiskFullTests.fill(disk + "/filler")
        let held = try dispatch(timeout: 3)
        #expect(held.status == 2, "under sync nothing is acknowledged while the standby cannot write: \(held.stderr)")
        try await eventually("d2 to say its journal cannot be written", timeout: .seconds(30)) {
            d2.stderr.contains("the journal cannot be written; following again in a second")
        }
        #expect(d2.process.isRunning, "the standby did not crash: \(d2.stderr.suffix(2000))")

        try FileManager.default.removeItem(atPath: disk + "/filler")
        try await eventually("a dispatch to be acknowledged once the standby has room", timeout: .seconds(60)) {
            try dispatch(timeout: 5).status == 0
        }
        #expect(d2.process.isRunning && d1.process.isRunning, "the same two processes")
        #expect(try await Self.leader(run.client, pair.key) == "d1")
    }
}
