import FluxCore
import Foundation

extension Journal {
    /// Creates a journal in the empty or missing `directory` holding `records` (consecutive seqs, from
    /// any first seq) as history `history`: what `zflux journal import` starts a cluster from. The
    /// dispatcher that opens it serves a later epoch of the same cluster id.
    public static func create(directory: String, history: HistoryID, records: [Message]) throws {
        try create(directory: directory, history: history, records: records, storage: FileStorage.shared)
    }

    /// The same, on `storage`.
    package static func create(directory: String, history: HistoryID, records: [Message], storage: any JournalStorage) throws {
        try storage.makeDirectory(directory, private: true)
        let existing = try storage.list(directory)
        guard existing.isEmpty else { throw JournalError("\(directory) is not empty") }
        guard let first = records.first?.header.seq, first >= 1,
            records.enumerated().allSatisfy({ $0.element.header.seq == first + UInt64($0.offset) })
        else { throw JournalError("a journal's records must have consecutive seqs from 1 or more") }
        var bytes: [UInt8] = []
        for record in records { JournalRecord.append(record, to: &bytes) }
        let digits = String(first)
        let segment = directory + "/" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".journal"
        let history =
            "# zflux journal history: stores refuse a journal of another cluster, and rebuild when one goes back\n"
            + "cluster \(String(history.cluster, radix: 16))\nepoch \(history.epoch)\n"
        // The directory was empty (checked above): each file is made here.
        for (path, contents) in [(segment, bytes), (directory + "/HISTORY", Array(history.utf8))] {
            try storage.writeDurably(contents, to: path)
        }
    }
}
