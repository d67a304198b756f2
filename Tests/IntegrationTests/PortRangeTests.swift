import Foundation
import Testing

@Suite("The tests' tcp port ranges")
struct PortRangeTests {
    @Test(
        "freePortRange never hands out overlapping ranges, and holds each one's block against other test processes (two clusters started at once were given the same ports: Address already in use)"
    )
    func rangesDoNotOverlap() throws {
        let bases = try (0..<40).map { _ in try freePortRange(count: 32) }
        let sorted = bases.sorted()
        for (lower, upper) in zip(sorted, sorted.dropFirst()) {
            #expect(upper - lower >= 32, "ranges at \(lower) and \(upper) overlap")
        }
        // Another test process could not take the block now: its lock is held by this one.
        let block = (bases[0] - 10_000) / portBlockSize
        let fd = open(portBlockDirectory + "/block-\(block)", O_RDWR | O_CLOEXEC)
        try #require(fd >= 0, "the block's lock file exists")
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) != 0, "the block of \(bases[0]) is held")
    }
}
