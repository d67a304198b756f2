import Testing

@testable import NodeCores

@Suite("Journal retention: what may go, and what a reader keeps")
struct JournalRetentionTests {
    /// Ten segments of 100 seqs and 1,000 bytes each.
    let segments = (0..<10).map { JournalRetention.Segment(firstSeq: UInt64($0) * 100 + 1, lastSeq: UInt64($0) * 100 + 100, bytes: 1_000) }

    @Test("within its budget nothing goes; past it the oldest go until the rest fits, never the newest")
    func budget() {
        #expect(JournalRetention.plan(segments: segments, maxBytes: 10_000, needs: []) == .init(remove: 0, freedBytes: 0, keptFor: nil))
        #expect(JournalRetention.plan(segments: segments, maxBytes: 3_500, needs: []) == .init(remove: 7, freedBytes: 7_000, keptFor: nil))
        #expect(JournalRetention.plan(segments: segments, maxBytes: 1, needs: []).remove == 9)
        #expect(JournalRetention.plan(segments: Array(segments.prefix(1)), maxBytes: 1, needs: []).remove == 0)
    }

    @Test("a segment holding a seq some reader needs stays, and the plan names the neediest reader")
    func needs() {
        let store = JournalRetention.Need(from: 250, who: "store counter")
        let standby = JournalRetention.Need(from: 700, who: "the standby")
        let plan = JournalRetention.plan(segments: segments, maxBytes: 1, needs: [standby, store])
        #expect(plan == .init(remove: 2, freedBytes: 2_000, keptFor: store))
        // A need at a segment's first seq lets the segments before it go.
        #expect(JournalRetention.plan(segments: segments, maxBytes: 1, needs: [.init(from: 301, who: "x")]).remove == 3)
        // A need the budget does not reach is not named.
        #expect(JournalRetention.plan(segments: segments, maxBytes: 8_000, needs: [standby]) == .init(remove: 2, freedBytes: 2_000, keptFor: nil))
    }

    @Test("a standby's retention report travels in its ACK's payload and back; an ACK with none (an earlier version's) reports nothing")
    func retentionReport() {
        let report = RetentionReport(journalFirstSeq: 1_234_567, note: "over retain_mb, kept from seq 1234567 for store counter's snapshot")
        #expect(RetentionReport(payload: report.encoded) == report)
        #expect(RetentionReport(payload: []) == nil)
        #expect(RetentionReport(payload: [1, 2, 3]) == nil)
        let long = RetentionReport(journalFirstSeq: 2, note: String(repeating: "x", count: 10_000))
        #expect(long.encoded.count == 8 + 512, "an ACK stays small")
    }
}
