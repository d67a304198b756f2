import Testing

@testable import ZFluxCLI

@Suite("What a devtools page's export covers")
struct DevtoolsExportRangeTests {
    @Test("a stretch past the head ends at it and the cap counts what is left; past the cap, or starting past the head, it is refused")
    func range() throws {
        func covered(_ from: UInt64, _ to: UInt64, head: UInt64) -> String {
            switch ClusterDevtools.exportedRange(from: from, to: to, head: head) {
            case .success(let range): "\(range.lowerBound)…\(range.upperBound)"
            case .failure(let error): error.description
            }
        }
        #expect(covered(1, 8, head: 20) == "1…8")
        // The new user's case: 6000 to 99999 of a journal at 6036 is 37 actions, not "at most 10000".
        #expect(covered(6000, 99_999, head: 6036) == "6000…6036")
        #expect(covered(1, 10_000, head: 20_000) == "1…10000")
        let over = covered(1, 10_001, head: 20_000)
        #expect(over.contains("at most 10000 actions") && over.contains("--from 1 --to 10001"), "\(over)")
        // The command it points to runs: its `to` is within the journal.
        #expect(covered(1, 50_000, head: 20_000).contains("--to 20000"))
        #expect(covered(7000, 7100, head: 6036).contains("seq 7000 is beyond the journal's head (6036)"))
        #expect(covered(0, 5, head: 20).contains("from must be at least 1"))
        #expect(covered(9, 5, head: 20).contains("at most to"))
    }
}
