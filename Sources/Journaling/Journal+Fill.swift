import FluxCore
import Foundation
import NodeCores

/// `zflux journal fill`: journals of many actions made at disk speed, for measuring what a large
/// journal costs a start or a failover, without sequencing each action through an intake.
extension Journal {
    /// What ``fill(directories:count:topic:actionType:payload:segmentBytes:progress:)`` wrote.
    package struct Filled: Equatable, Sendable {
        /// The history the records are stamped with (a single dispatcher's opening of the first journal).
        package var history: HistoryID
        package var lastSeq: UInt64
        package var segments: Int
        /// The seqs of the checkpoints each journal keeps at the end, newest first.
        package var checkpoints: [UInt64]
    }

    /// Records per append, as a busy intake's group commit writes them.
    static let fillBatch: UInt64 = 4096

    /// Creates a journal in each of `directories` (each missing or empty) holding `count` copies of one
    /// action (`actionType` of the app `topic`, with `payload`), at seqs 1…`count`, one client's
    /// consecutive dispatches stamped a nanosecond apart up to now. Each is written as a running
    /// dispatcher writes its journal: batches of records rolling into segments of `segmentBytes`, the
    /// index file of each segment it rolls past, and a ``DispatcherCheckpoint`` whenever the journal
    /// asks for one (``checkpointDue(head:)``: at each roll and every million records), each after
    /// the records it covers are synced.
    ///
    /// The journals agree as a pair's do once the standby has followed the leader: the same records,
    /// bytes for bytes, under one cluster id and client scope (the first journal's, which the others
    /// adopt as a standby does). `progress` hears the head after each batch.
    package static func fill(
        directories: [String], count: UInt64, topic: [UInt8], actionType: String, payload: [UInt8], segmentBytes: Int,
        progress: (UInt64) -> Void = { _ in }
    ) throws -> Filled {
        precondition(!directories.isEmpty && count > 0, "a fill writes at least one record into at least one journal")
        // Nothing a fill journals may make, cancel or fire a schedule: each checkpoint's book is empty.
        var sample = StampedRecords()
        sample.append(topic: topic, header: Header(kind: .action, seq: 1, actionType: actionType), payload: payload)
        let concerns = sample.bytes.withUnsafeBytes {
            Schedules.concernsSchedules(recordBody: UnsafeRawBufferPointer(rebasing: $0[sample.records[0].body]))
        }
        guard !concerns else { throw JournalError("a fill journals an app's action, not a schedule's") }
        for directory in directories {
            let existing = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            guard existing.isEmpty else { throw JournalError("\(directory) is not empty: a journal is filled from nothing") }
        }
        let first = try Journal(directory: directories[0], policy: .batch, segmentBytes: segmentBytes)
        var journals = [first]
        for directory in directories.dropFirst() {
            let journal = try Journal(directory: directory, policy: .batch, segmentBytes: segmentBytes, opensEpoch: false)
            try journal.adopt(cluster: first.history.cluster, clientScope: first.clientScope)
            journals.append(journal)
        }
        let history = first.history
        let client = first.environment.randomWord() | 1
        let newest = first.environment.wallNanoseconds()
        let book = ScheduleBook()
        var seq: UInt64 = 1
        while seq <= count {
            let last = min(count, seq + fillBatch - 1)
            var records = StampedRecords()
            var header = Header(kind: .action, actionType: actionType, history: history.rawValue)
            for next in seq...last {
                (header.seq, header.clientID, header.clientSeq, header.timestamp) = (next, client, next, newest - Int64(count - next))
                records.append(topic: topic, header: header, payload: payload)
            }
            for journal in journals { try journal.append([records]) }
            if first.checkpointDue(head: last) {
                let checkpoint = try DispatcherCheckpoint(seq: last, anchor: .init(header), book: book).encoded()
                for journal in journals {
                    // A checkpoint covers only what is durable, as the dispatcher's does.
                    try journal.commit()
                    precondition(journal.checkpointDue(head: last), "the journals roll and checkpoint together")
                    try journal.writeCheckpoint(seq: last, bytes: checkpoint)
                }
            }
            progress(last)
            seq = last + 1
        }
        for journal in journals { try journal.commit() }
        assert(journals.allSatisfy { $0.lastSeq == count && $0.segments.count == first.segments.count })
        return Filled(history: history, lastSeq: first.lastSeq, segments: first.segments.count, checkpoints: first.checkpointFiles().map(\.seq))
    }
}
