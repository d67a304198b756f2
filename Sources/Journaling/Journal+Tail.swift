import FluxCore

/// The journal's newest records, in memory, for the common replay (a store repairing a gap, a standby
/// a step behind) without touching the disk: the very bursts the dispatcher wrote (``StampedRecords``,
/// shared with it, never copied), kept until they pass a budget of records and bytes.
struct RecordTail {
    private(set) var chunks: [StampedRecords] = []
    private(set) var count = 0
    /// The memory its records' buffers take (their capacity, which may be up to twice what they hold).
    private(set) var bytes = 0

    var firstSeq: UInt64? { chunks.first?.firstSeq }
    var lastSeq: UInt64? { chunks.last?.lastSeq }

    /// Keeps `records` (the next seqs). Trimmed in whole bursts from the oldest, once a quarter over
    /// budget, back to the budget: appends stay O(1) on average, and the newest burst always stays.
    mutating func append(_ records: StampedRecords, capacity: Int, byteCapacity: Int) {
        guard !records.isEmpty else { return }
        chunks.append(records)
        count += records.count
        bytes += records.bytes.capacity
        guard count > capacity + capacity / 4 || bytes > byteCapacity + byteCapacity / 4 else { return }
        var drop = 0
        while drop < chunks.count - 1 && (count > capacity || bytes > byteCapacity) {
            count -= chunks[drop].count
            bytes -= chunks[drop].bytes.capacity
            drop += 1
        }
        chunks.removeFirst(drop)
    }

    /// Forgets the records after `seq`.
    mutating func removeRecords(after seq: UInt64) {
        while var last = chunks.popLast() {
            count -= last.count
            bytes -= last.bytes.capacity
            if let first = last.firstSeq, first > seq { continue }
            last.removeRecords(after: seq)
            if !last.isEmpty {
                chunks.append(last)
                count += last.count
                bytes += last.bytes.capacity
            }
            return
        }
    }

    /// Whether it holds `seq` and everything after it through `journalEnd`, the journal's last seq: a
    /// walk it serves must not stop short of what the journal holds.
    func holds(_ seq: UInt64, through journalEnd: UInt64) -> Bool {
        guard let first = firstSeq, let last = lastSeq else { return false }
        return seq >= first && seq <= last && last == journalEnd
    }

    /// Visits its records from `from` on (which it holds), in order, as ``Journal``'s walk over the disk
    /// does: (seq, the burst's bytes, the record's body within them), until `visit` returns false.
    func visit(from: UInt64, _ visit: (UInt64, [UInt8], Range<Int>) throws -> Bool) rethrows {
        // The newest burst that starts at or before `from`.
        var lo = 0, hi = chunks.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if let first = chunks[mid].firstSeq, first <= from { lo = mid } else { hi = mid - 1 }
        }
        for chunk in chunks[lo...] {
            guard let first = chunk.firstSeq else { continue }
            // Seqs are consecutive within a burst and from one to the next.
            for record in chunk.records[Int(from > first ? from - first : 0)...] {
                if try !visit(record.seq, chunk.bytes, record.body) { return }
            }
        }
    }
}
