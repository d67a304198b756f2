import Dispatcher
import FluxCore
import Foundation
import Testing

func action(_ seq: UInt64, client: UInt64 = 7) -> Message {
    Message(
        topic: Array("counter".utf8),
        header: Header(
            kind: .action, seq: seq, clientID: client, clientSeq: seq, timestamp: Int64(seq), actionType: "addTapped"),
        payload: Array(#"{"addTapped":{"amount":\#(seq)}}"#.utf8))
}

func temporaryDirectory() throws -> String {
    var template = Array((NSTemporaryDirectory() + "zflux-journal-XXXXXX").utf8CString)
    guard let dir = mkdtemp(&template) else { throw JournalError("mkdtemp failed") }
    return String(cString: dir)
}

@Suite("Journal")
struct JournalTests {
    @Test("records survive a reopen, across segment rolls, and read back from any seq", arguments: Journal.FsyncPolicy.allCases)
    func roundTrip(policy: Journal.FsyncPolicy) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, policy: policy, segmentBytes: 8192, tailCapacity: 10)
            for start in stride(from: 1, through: 1000, by: 100) {
                try journal.append((UInt64(start)..<UInt64(start + 100)).map { action($0) })
                try journal.commit()
            }
            #expect(journal.lastSeq == 1000)
        }
        let segments = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".journal") }
        #expect(segments.count > 5, "8 KiB segments roll")
        let reopened = try Journal(directory: dir, policy: policy, segmentBytes: 8192, tailCapacity: 10)
        #expect(reopened.lastSeq == 1000)
        #expect(reopened.recovery.records == 1000 && reopened.recovery.trimmedBytes == 0)
        // Far older than the 10-record tail cache: from disk, through the index, across segments.
        for from: UInt64 in [1, 2, 255, 256, 257, 500, 990] {
            let read = try reopened.read(from: from, limit: 20)
            #expect(read.map(\.header.seq) == Array(from..<min(from + 20, 1001)))
            #expect(read.first == action(from))
        }
        #expect(try reopened.read(from: 1001, limit: 5).isEmpty)
        try reopened.append([action(1001)])
        try reopened.commit()
        #expect(try reopened.read(from: 1000, limit: 5).map(\.header.seq) == [1000, 1001])
        var count = 0
        try reopened.forEach { message in
            count += 1; #expect(message.header.seq == UInt64(count))
        }
        #expect(count == 1001)
    }

    @Test("a torn tail is reported, trimmed on open, and the sequence continues after the last good record")
    func tornTail() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir)
            try journal.append((1...50).map { action($0) })
            try journal.commit()
        }
        let segment = dir + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: dir).first { $0.hasSuffix(".journal") }))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
        #expect(truncate(segment, off_t(size - 3)) == 0)

        let inspected = try Journal(directory: dir, repair: false)
        #expect(inspected.lastSeq == 49)
        #expect(inspected.recovery.trimmedBytes > 0)
        #expect(inspected.recovery.trimmedReason?.contains("cut short") == true)
        #expect(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int == size - 3, "verify changes nothing")

        do {
            let repaired = try Journal(directory: dir)
            #expect(repaired.lastSeq == 49)
            try repaired.append([action(50)])
            try repaired.commit()
        }
        let again = try Journal(directory: dir)
        #expect(again.lastSeq == 50 && again.recovery.trimmedBytes == 0)
    }

    @Test("a flipped byte in the last record fails its checksum and is trimmed")
    func checksum() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir)
            try journal.append((1...3).map { action($0) })
        }
        let segment = dir + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: dir).first { $0.hasSuffix(".journal") }))
        var bytes = try #require(FileManager.default.contents(atPath: segment))
        bytes[bytes.count - 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: segment))
        let journal = try Journal(directory: dir, repair: false)
        #expect(journal.lastSeq == 2)
        #expect(journal.recovery.trimmedReason?.contains("checksum") == true)
    }

    /// Where each record of a segment starts, read from the file itself.
    func recordOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        _ = JournalRecord.checkRecords(bytes, firstSeq: 1) { _, offset in offsets.append(offset) }
        return offsets
    }

    @Test(
        "damage in the middle of the newest segment with intact records after it is corruption, not a torn tail: nothing is trimmed or served, and truncate sets the rest aside",
        arguments: ["body byte", "length field", "zeroed sector"])
    func corruptionIsNotATornTail(damage: String) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir)
            try journal.append((1...2000).map { action($0) })
            try journal.commit()
        }
        let segment = dir + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: dir).first { $0.hasSuffix(".journal") }))
        let original = [UInt8](try #require(FileManager.default.contents(atPath: segment)))
        let offsets = recordOffsets(original)
        #expect(offsets.count == 2000)
        var bytes = original
        let victim = offsets[999]  // seq 1000
        switch damage {
        case "body byte": bytes[victim + 20] ^= 0x01
        case "length field": bytes[victim] ^= 0x40
        default: for i in (victim & ~511)..<min((victim & ~511) + 512, bytes.count) { bytes[i] = 0 }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        let firstDamaged = UInt64(recordOffsets(bytes).count + 1)
        #expect(firstDamaged <= 1000)

        for repair in [false, true] {
            let error = #expect(throws: JournalError.self) { try Journal(directory: dir, repair: repair) }
            let text = error?.description ?? ""
            #expect(text.contains("seq \(firstDamaged) is due") && text.contains("not a torn tail"), "\(text)")
            #expect(text.contains("journal truncate") && text.contains("--from-seq \(firstDamaged)"), "says what to do: \(text)")
            #expect([UInt8](try #require(FileManager.default.contents(atPath: segment))) == bytes, "nothing trimmed (repair: \(repair))")
        }

        let refused = #expect(throws: JournalError.self) { try Journal.truncate(directory: dir, fromSeq: firstDamaged + 1) }
        #expect(refused?.description.contains("truncate from seq \(firstDamaged)") == true, "\(refused.map { "\($0)" } ?? "")")
        let done = try Journal.truncate(directory: dir, fromSeq: firstDamaged)
        #expect(done.lastSeq == firstDamaged - 1 && done.setAside.count == 1)
        let aside = [UInt8](try #require(FileManager.default.contents(atPath: done.setAside[0])))
        #expect(aside == Array(bytes[offsets[Int(firstDamaged) - 1]...]), "the cut bytes are kept, not deleted")
        let reopened = try Journal(directory: dir)
        #expect(reopened.lastSeq == firstDamaged - 1 && reopened.recovery.trimmedBytes == 0)
        #expect(try reopened.read(from: firstDamaged - 1, limit: 5).map(\.header.seq) == [firstDamaged - 1])
    }

    @Test(
        "truncate drops the quarantine entries of the seqs it cuts (a later action given that seq would be skipped) and forgets a release it cut; a second truncate overwrites nothing set aside"
    )
    func truncateQuarantineAndAsides() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir)
            try journal.append((1...100).map { action($0) })
            try journal.commit()
            try journal.keepQuarantine([
                Quarantine(seq: 10, app: "counter", actionType: "addTapped", reason: "trapped", releasedAs: 90),
                Quarantine(seq: 20, app: "counter", actionType: "addTapped", reason: "trapped"),
                Quarantine(seq: 70, app: "counter", actionType: "addTapped", reason: "trapped"),
            ])
        }
        let first = try Journal.truncate(directory: dir, fromSeq: 60)
        do {
            let journal = try Journal(directory: dir)
            #expect(journal.lastSeq == 59)
            let kept = try journal.quarantine()
            #expect(kept.map(\.seq) == [10, 20], "seq 70 is gone with its record")
            #expect(kept.first?.releasedAs == nil, "the release at seq 90 was cut: seq 10 is quarantined again")
            #expect(first.setAside.contains { $0.hasSuffix("QUARANTINE.set-aside-from-60") })
            // New actions take the seqs again, and are cut again from the same seq.
            try journal.append((60...80).map { action($0, client: 8) })
            try journal.commit()
        }
        let second = try Journal.truncate(directory: dir, fromSeq: 60)
        #expect(second.setAside.count == 1 && second.lastSeq == 59)
        #expect(Set(first.setAside).isDisjoint(with: second.setAside), "a name of its own each time: \(first.setAside) \(second.setAside)")
        for file in first.setAside { #expect(FileManager.default.fileExists(atPath: file), "\(file) is still there") }
    }

    @Test("the search for intact records after damage finds the next one exactly, and nothing in zeros, random bytes or before the damage")
    func nextIntactRecord() throws {
        var bytes: [UInt8] = []
        for seq in 1...5 { JournalRecord.append(action(UInt64(seq)), to: &bytes) }
        let offsets = recordOffsets(bytes)
        #expect(JournalRecord.nextIntact(bytes, after: offsets[1], seqAbove: 2).map { [$0.offset, Int($0.seq)] } == [offsets[2], 3])
        #expect(JournalRecord.nextIntact(bytes, after: offsets[4], seqAbove: 4) == nil, "nothing after the last record")
        #expect(JournalRecord.nextIntact(bytes, after: 0, seqAbove: 5) == nil, "only later seqs count")
        #expect(JournalRecord.nextIntact([UInt8](repeating: 0, count: 4096), after: 0, seqAbove: 0) == nil)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(JournalRecord.nextIntact(noise, after: 0, seqAbove: 0) == nil)
        let buried = noise + bytes
        #expect(JournalRecord.nextIntact(buried, after: 0, seqAbove: 0)?.offset == noise.count)
    }

    @Test("damage in an older segment is never served: refused by verify, by an open that scans it, and by a read when its index file was trusted")
    func damagedOlderSegment() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try oldestSegment(ofJournalIn: dir, records: 200, segmentBytes: 4096)
        var bytes = try #require(FileManager.default.contents(atPath: first))
        bytes[20] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: first))
        let verify = #expect(throws: JournalError.self) { try Journal(directory: dir, repair: false) }
        #expect(verify?.description.contains("not the newest segment") == true)
        do {
            // Its index file still matches its length: the open trusts it, and the first read checks it.
            let opened = try Journal(directory: dir)
            #expect(opened.recovery.indexedSegments > 0 && opened.lastSeq == 200)
            let read = #expect(throws: JournalError.self) { try opened.read(from: 1, limit: 10) }
            #expect(read?.description.contains("is damaged") == true)
            #expect(try opened.read(from: 200, limit: 1).map(\.header.seq) == [200], "other segments still read")
        }
        try FileManager.default.removeItem(atPath: first + ".index")
        let error = #expect(throws: JournalError.self) { try Journal(directory: dir) }
        #expect(error?.description.contains("not the newest segment") == true)
    }

    @Test(
        "a sealed segment opened from its index file is checked as it is read: its first records are served before the rest is read, and a damaged record after them still stops the read"
    )
    func checkedAsRead() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try oldestSegment(ofJournalIn: dir, records: 200, segmentBytes: 4096)
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: first)))
        var offset = 0
        var records: [Int] = []
        while offset < bytes.count {
            records.append(offset)
            offset += JournalRecord.headerSize + Int(bytes.readLittleEndian(UInt32.self, at: offset))
        }
        try #require(records.count > 4 && offset == bytes.count)
        let last = try #require(records.last)
        bytes[last + JournalRecord.headerSize + 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: first))
        let opened = try Journal(directory: dir)
        #expect(opened.recovery.indexedSegments > 0, "the open trusted the index file")
        #expect(try opened.read(from: 1, limit: 3).map(\.header.seq) == [1, 2, 3], "what a read takes before the damage is served at once")
        let error = #expect(throws: JournalError.self) { try opened.read(from: 1, limit: 200) }
        #expect(error?.description.contains("is damaged") == true, "the damaged record is never served")
        #expect(error?.description.contains("--from-seq \(records.count)") == true, "and the seq due there is named, with the way to give it up")
        let again = #expect(throws: JournalError.self) { try opened.read(from: UInt64(records.count), limit: 1) }
        #expect(again?.description.contains("is damaged") == true, "nor read on its own")
        #expect(try opened.read(from: 200, limit: 1).map(\.header.seq) == [200], "other segments still read")
    }

    @Test(
        "a truncation inside a sealed segment opened from its index file checks that segment whole first: a damaged record before the cut stops it, and is not served afterwards"
    )
    func truncationChecksKeptSegment() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try oldestSegment(ofJournalIn: dir, records: 1500, segmentBytes: 64 * 1024)
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: first)))
        let records = recordOffsets(bytes)
        try #require(records.count > 300, "an index entry (seq 257) lies between the damage and the cut")
        // The last byte of seq 2's payload: the record still decodes, to another action.
        bytes[records[2] - 1] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: first))
        let opened = try Journal(directory: dir, segmentBytes: 64 * 1024)
        #expect(opened.recovery.indexedSegments > 0, "the open trusted the index file")
        let error = #expect(throws: JournalError.self) { try opened.truncate(after: 260) }
        #expect(error?.description.contains("is damaged") == true)
        #expect(opened.lastSeq == 1500, "nothing was cut")
        let read = #expect(throws: JournalError.self) { try opened.read(from: 1, limit: 10) }
        #expect(read?.description.contains("is damaged") == true, "the damaged record is never served")
    }

    @Test("sealed segments open from their index files; a missing, damaged or stale index file means a scan, which writes it again")
    func segmentIndexes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, segmentBytes: 4096)
            try journal.append((1...500).map { action($0) })
            try journal.commit()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        let segments = names.filter { $0.hasSuffix(".journal") }.sorted()
        #expect(segments.count > 3)
        #expect(Set(names.filter { $0.hasSuffix(".index") }) == Set(segments.dropLast().map { $0 + ".index" }), "every sealed segment has one")
        func reopen() throws -> Journal {
            let journal = try Journal(directory: dir, segmentBytes: 4096)
            #expect(journal.lastSeq == 500)
            #expect(try journal.read(from: 1, limit: 600) == (1...500).map { action($0) })
            return journal
        }
        #expect(try reopen().recovery.indexedSegments == segments.count - 1)
        let firstIndex = dir + "/" + segments[0] + ".index"
        try FileManager.default.removeItem(atPath: firstIndex)
        #expect(try reopen().recovery.indexedSegments == segments.count - 2, "the first is scanned")
        #expect(FileManager.default.fileExists(atPath: firstIndex), "and its index file written again")
        var index = try #require(FileManager.default.contents(atPath: firstIndex))
        index[12] ^= 1
        try index.write(to: URL(fileURLWithPath: firstIndex))
        #expect(try reopen().recovery.indexedSegments == segments.count - 2, "a damaged index file is not trusted")
        // A segment cut behind its index's back (a restore gone wrong) no longer matches it: scanned,
        // and, not being the newest, refused.
        let second = dir + "/" + segments[1]
        let size = try #require(try FileManager.default.attributesOfItem(atPath: second)[.size] as? Int)
        #expect(truncate(second, off_t(size - 3)) == 0)
        let error = #expect(throws: JournalError.self) { try Journal(directory: dir) }
        #expect(error?.description.contains("not the newest segment") == true)
    }

    @Test("the dispatches read from record headers alone are those of the whole records, from any seq, across segments and the tail")
    func dispatchesFromHeaders() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, segmentBytes: 4096)
            try journal.append((1...700).map { action($0, client: $0 % 5) })
        }
        let reopened = try Journal(directory: dir, segmentBytes: 4096, tailCapacity: 50)
        // Past the tail's capacity: the oldest of these leave the tail, and are read from the grown segment.
        try reopened.append((701...800).map { action($0, client: 9) })
        for from: UInt64 in [1, 2, 40, 255, 256, 257, 699, 700, 701, 702, 750, 800, 801] {
            var seen: [UInt64] = []
            try reopened.forEachDispatch(from: from) { client, clientSeq, seq in
                #expect(client == (seq > 700 ? 9 : seq % 5) && clientSeq == seq)
                seen.append(seq)
            }
            #expect(seen == Array(from..<801), "from \(from)")
        }
    }

    @Test("replay batches copied from record bytes hold what decoding and encoding the records gives, within their limits")
    func replayBatchesFromBytes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, segmentBytes: 4096)
            try journal.append((1...700).map { action($0) })
        }
        let reopened = try Journal(directory: dir, segmentBytes: 4096, tailCapacity: 50)
        try reopened.append((701...760).map { action($0) })
        for from: UInt64 in [1, 2, 255, 256, 257, 699, 700, 701, 759, 760] {
            for (limit, maxBytes) in [(1, 1 << 20), (10, 1 << 20), (512, 1 << 20), (512, 1000), (512, 1)] {
                let batch = try #require(try reopened.replayBatch(from: from, limit: limit, maxBytes: maxBytes))
                let decoded = try ReplayBatch.decode(batch.payload)
                #expect(decoded.count == batch.count && decoded.last?.header.seq == batch.last)
                #expect(decoded == Array(try reopened.read(from: from, limit: batch.count)), "from \(from), limit \(limit)")
                #expect(batch.count >= 1 && batch.count <= limit)
                #expect(batch.count == 1 || batch.payload.count <= maxBytes + 200, "closed near \(maxBytes) bytes")
                if maxBytes == 1 << 20 { #expect(batch.count == min(limit, Int(761 - from)), "only the limit or the log's end stops it") }
            }
        }
        #expect(try reopened.replayBatch(from: 761, limit: 10, maxBytes: 1 << 20) == nil)
    }

    @Test("records from before an opening read exactly after new appends, however the newest segment grew")
    func readsAfterReopen() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, policy: .none)
            try journal.append((1...300).map { action($0) })
        }
        let reopened = try Journal(directory: dir, policy: .none, tailCapacity: 10)
        #expect(try reopened.read(from: 250, limit: 10) == (250...259).map { action($0) })
        for seq: UInt64 in 301...330 {
            try reopened.append([action(seq)])
            #expect(try reopened.read(from: 295, limit: 100) == (295...seq).map { action($0) })
        }
    }

    @Test("records from before an opening read exactly after the segment that held them was sealed by new appends")
    func readsAfterRollPastCachedSegment() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, segmentBytes: 4096)
            try journal.append((1...10).map { action($0) })
        }
        // The opening caches the newest segment's 10 records; the appends fill it and roll past it.
        let reopened = try Journal(directory: dir, segmentBytes: 4096, tailCapacity: 5)
        try reopened.append((11...100).map { action($0) })
        #expect(try reopened.read(from: 1, limit: 200) == (1...100).map { action($0) })
    }

    @Test("one writer per journal: a second open for appending is refused, reading is not")
    func exclusive() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var first: Journal? = try Journal(directory: dir)
        try first?.append([action(1)])
        let error = #expect(throws: JournalError.self) { try Journal(directory: dir) }
        #expect(error?.description.contains("in use by another dispatcher (pid \(getpid()))") == true)
        #expect(try Journal(directory: dir, repair: false).lastSeq == 1, "verify and dump still read it")
        first = nil
        #expect(try Journal(directory: dir).lastSeq == 1, "the lock goes with its holder")
    }
}

@Suite("Journal memory in bytes")
struct JournalMemoryTests {
    func big(_ seq: UInt64) -> Message {
        Message(
            topic: Array("ledger".utf8), header: Header(kind: .action, seq: seq, clientID: 7, clientSeq: seq, actionType: "post"),
            payload: [UInt8](repeating: UInt8(truncatingIfNeeded: seq), count: 100_000))
    }

    @Test("the tail cache holds at most its byte budget of large records, when appending and when a journal is opened; reads stay exact")
    func tailCacheBytes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, policy: .none, tailByteCapacity: 1 << 20)
            for seq: UInt64 in 1...200 { try journal.append([big(seq)]) }
            try journal.commit()
            #expect(journal.cachedBytes <= (1 << 20) + (1 << 20) / 4 + 100_200, "appending: \(journal.cachedBytes) bytes cached")
        }
        let reopened = try Journal(directory: dir, policy: .none, tailByteCapacity: 1 << 20)
        #expect(reopened.cachedBytes <= (1 << 20) + (1 << 20) / 4 + 100_200, "opening: \(reopened.cachedBytes) bytes cached")
        #expect(try reopened.read(from: 1, limit: 200) == (1...200).map { big($0) })
    }
}

@Suite("Journal compaction")
struct JournalCompactionTests {
    @Test("compaction removes only whole segments below the seq to keep, never the newest, and not under a running dispatcher")
    func compact() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let journal = try Journal(directory: dir, policy: .none, segmentBytes: 8192)
            for start in stride(from: 1, through: 1000, by: 100) {
                try journal.append((UInt64(start)..<UInt64(start + 100)).map { action($0) })
            }
            try journal.commit()
            #expect(throws: JournalError.self, "the writer lock is held") { try Journal.compact(directory: dir, keepFrom: 500) }
        }
        let planned = try Journal.compact(directory: dir, keepFrom: 500, dryRun: true)
        #expect(!planned.removed.isEmpty && planned.removed.allSatisfy { $0.last < 500 })
        #expect(try Journal(directory: dir, repair: false).firstSeq == 1, "a dry run removes nothing")
        let done = try Journal.compact(directory: dir, keepFrom: 500)
        #expect(done == planned && done.firstSeq <= 500 && done.firstSeq > 1)
        do {
            let reopened = try Journal(directory: dir, policy: .none)
            #expect(reopened.firstSeq == done.firstSeq && reopened.lastSeq == 1000)
            #expect(try reopened.read(from: 500, limit: 501) == (500...1000).map { action($0) }, "everything from the kept seq on is there")
        }
        let all = try Journal.compact(directory: dir, keepFrom: .max)
        let left = try Journal(directory: dir, repair: false)
        #expect(left.lastSeq == 1000 && left.firstSeq == all.firstSeq && left.firstSeq <= 1000, "the newest segment always stays")
    }
}

/// Writes actions 1 through `records` into a new journal in `dir` (several segments of `segmentBytes`)
/// and returns its oldest segment's path: a sealed segment, opened from its index file on the next open.
func oldestSegment(ofJournalIn dir: String, records: UInt64, segmentBytes: Int) throws -> String {
    do {
        let journal = try Journal(directory: dir, segmentBytes: segmentBytes)
        try journal.append((1...records).map { action($0) })
    }
    let segments = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".journal") }.sorted()
    try #require(segments.count > 1, "the oldest segment is sealed")
    return dir + "/" + segments[0]
}
