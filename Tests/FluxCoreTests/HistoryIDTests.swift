import FluxCore
import Testing

@Suite("HistoryID")
struct HistoryIDTests {
    /// 2024-01-01 plus `years`, in nanoseconds since the Unix epoch.
    func wall(yearsAfter2024 years: Int64) -> Int64 { (1_704_067_200_000 + years * 365 * 86_400_000) * 1_000_000 }

    @Test("an epoch won through etcd is newer than any opening before it, and two wins compare as their revisions")
    func leadingOrder() {
        let won = HistoryID.leading(cluster: 0xC1, revision: 1)
        #expect(won.cluster == 0xC1 && won.isLeadership)
        for years: Int64 in [0, 1, 10, 17] {
            let opened = HistoryID.opening(cluster: 0xC1, previousEpoch: 0, wallNanoseconds: wall(yearsAfter2024: years))
            #expect(!opened.isLeadership && opened.epoch < won.epoch, "an opening \(years) years after 2024")
        }
        let later = HistoryID.leading(cluster: 0xC1, revision: 2)
        let much = HistoryID.leading(cluster: 0xC1, revision: (1 << 39) - 1)
        #expect(won.epoch < later.epoch && later.epoch < much.epoch && much.isLeadership)
        #expect(HistoryID.leading(cluster: 0xC1, revision: 7) == HistoryID.leading(cluster: 0xC1, revision: 7))
        // An opening after a win continues past it, whatever the clock says.
        let reopened = HistoryID.opening(cluster: 0xC1, previousEpoch: later.epoch, wallNanoseconds: wall(yearsAfter2024: 1))
        #expect(reopened.epoch > later.epoch && reopened.cluster == 0xC1)
    }
}
