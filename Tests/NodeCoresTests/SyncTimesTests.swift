import NodeCores
import Testing

/// How the dispatcher times its journal's syncs for its status (`journal_sync_p50_us`…).
@Suite("The journal's sync times: a count, and percentiles of the newest 1,024")
struct SyncTimesTests {
    @Test("before a sync there is nothing to tell; after, the median, 99th percentile and longest")
    func percentiles() {
        var times = SyncTimes()
        #expect(times.percentiles == nil && times.count == 0 && times.sampled == 0)
        for micros in (1...100).reversed() { times.record(nanoseconds: UInt64(micros) * 1000 + 999) }
        #expect(times.count == 100 && times.sampled == 100)
        // The probe's rule: the value at index ⌊n·q⌋ of the sorted n.
        let told = times.percentiles
        #expect(told?.p50 == 51 && told?.p99 == 100 && told?.max == 100, "\(String(describing: told))")
    }

    @Test("the percentiles are those of the newest 1,024 syncs; the count is of all of them")
    func newestOnly() {
        var times = SyncTimes()
        for _ in 0..<976 { times.record(nanoseconds: 1_000_000_000) }
        for micros in 1...1024 { times.record(nanoseconds: UInt64(micros) * 1000) }
        #expect(times.count == 2000 && times.sampled == 1024)
        let told = times.percentiles
        #expect(
            told?.p50 == 513 && told?.p99 == 1014 && told?.max == 1024, "a sync older than the newest 1,024 still counts: \(String(describing: told))"
        )
    }

    @Test("another thread's syncs add to the count, and come after these in the newest 1,024")
    func addingLanes() {
        var inPlace = SyncTimes()
        for _ in 0..<1024 { inPlace.record(nanoseconds: 5_000_000) }
        var lanes = SyncTimes()
        for micros in 1...1500 { lanes.record(nanoseconds: UInt64(micros) * 1000) }
        var all = inPlace
        all.add(lanes)
        #expect(all.count == 2524 && all.sampled == 1024)
        // The lanes' ring holds their newest 1,024 (477…1500), and those push out every in-place one.
        #expect(all.percentiles?.max == 1500 && all.percentiles?.p50 == 989, "\(String(describing: all.percentiles))")
        var few = SyncTimes()
        few.record(nanoseconds: 9_000_000)
        few.add(inPlace)
        // 1,025 syncs in a ring of 1,024: the oldest, the one of 9 ms, is out.
        #expect(few.count == 1025 && few.percentiles?.max == 5000, "\(String(describing: few.percentiles))")
    }
}
