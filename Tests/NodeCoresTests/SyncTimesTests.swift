import NodeCores
import Testing

/// How the dispatcher times its journal's syncs for its status (`journal_sync_p50_us`…).
@Suite("The journal's sync times: a count, and percentiles of the newest 1,024")
struct SyncTimesTests {
    struct Refused: Error {}

    @Test("before a sync there is nothing to tell; after, the median, 99th percentile and longest")
    func percentiles() {
        var times = SyncTimes()
        #expect(times.percentiles == nil && times.count == 0)
        for micros in (1...100).reversed() { times.record(nanoseconds: UInt64(micros) * 1000 + 999) }
        #expect(times.count == 100)
        let told = times.percentiles
        #expect(told?.p50 == 50 && told?.p99 == 99 && told?.max == 100, "\(String(describing: told))")
    }

    @Test("the percentiles are those of the newest 1,024 syncs; the count is of all of them")
    func newestOnly() {
        var times = SyncTimes()
        for _ in 0..<976 { times.record(nanoseconds: 1_000_000_000) }
        for micros in 1...1024 { times.record(nanoseconds: UInt64(micros) * 1000) }
        #expect(times.count == 2000)
        let told = times.percentiles
        #expect(
            told?.p50 == 512 && told?.p99 == 1014 && told?.max == 1024, "a sync older than the newest 1,024 still counts: \(String(describing: told))"
        )
    }

    @Test("a sync that fails is timed too")
    func failedSync() {
        var times = SyncTimes()
        #expect(throws: Refused.self) { try times.timing { throw Refused() } }
        let value = times.timing { 7 }
        #expect(value == 7 && times.count == 2 && times.percentiles != nil)
    }
}
