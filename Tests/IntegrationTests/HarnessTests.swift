import Foundation
import Testing

/// The harness the process tests stand on: what it reads of a child's output is all of it.
@Suite("The test harness")
struct HarnessTests {
    @Test("a follower that exits with its reason as the last of 60 kB on stderr: exits(within:) returns only once all of it is read")
    func followerReadsAllOfAnExitedChildsOutput() throws {
        // The pipe holds the 60 kB, so the child is gone before the reader has seen the last line.
        // Reading `stderr` when the pid is gone (what the pair test did) can miss the reason.
        let child = try Follower("/bin/sh", ["-c", "head -c 60000 /dev/zero | tr '\\0' x >&2; echo the-reason >&2; exit 3"])
        #expect(child.exits(within: .seconds(60)))
        #expect(child.stderr.count == 60_000 + "the-reason\n".count && child.stderr.hasSuffix("the-reason\n"), "\(child.stderr.suffix(40))")
        #expect(child.process.termination == .exited(3))
    }
}
