import FluxCore
import Foundation

extension Journal {
    /// What ``truncate(directory:fromSeq:)`` did.
    public struct Truncation: Sendable, Equatable {
        /// The journal's last seq afterwards.
        public var lastSeq: UInt64
        /// The files that now hold what was cut off, for a later look or a restore.
        public var setAside: [String]
        /// How many bytes they hold.
        public var bytesSetAside: Int
    }

    /// Gives up every record from `fromSeq` on, with the journal's writer lock held (so never under a
    /// running dispatcher): the operator's answer to a corrupt record that cannot be restored, since
    /// opening the journal never trims past one by itself. Every record before `fromSeq` must be intact;
    /// the bytes cut from the segment that holds `fromSeq` go to `SEGMENT.set-aside-from-SEQ` and every
    /// later segment is renamed `SEGMENT.set-aside`, so nothing is deleted.
    public static func truncate(directory: String, fromSeq: UInt64) throws -> Truncation {
        try truncate(directory: directory, fromSeq: fromSeq, storage: FileStorage.shared)
    }

    /// The same, on `storage`.
    package static func truncate(directory: String, fromSeq: UInt64, storage: any JournalStorage) throws -> Truncation {
        try withWriterLock(directory: directory, doing: "truncating", storage: storage) {
            let segments = try segmentFiles(in: directory, storage: storage)
            guard let holder = segments.lastIndex(where: { $0.first <= fromSeq }), fromSeq >= 1 else {
                throw JournalError("seq \(fromSeq) is before the journal in \(directory), which starts at seq \(segments.first?.first ?? 1)")
            }
            let path = directory + "/" + segments[holder].name
            let bytes = try storage.contents(path)
            var cut: Int? = nil
            let (end, expected, problem) = JournalRecord.checkRecords(bytes, firstSeq: segments[holder].first) { seq, offset in
                if seq == fromSeq { cut = offset }
            }
            if cut == nil, expected == fromSeq { cut = end }
            guard let cut else {
                throw JournalError(
                    "seq \(fromSeq) is not reached intact in \(path): its records end at seq \(expected - 1)\(problem.map { " (\($0) at byte \(end))" } ?? ""); truncate from seq \(expected) instead"
                )
            }
            precondition(cut <= bytes.count, "a record offset lies inside its segment")
            var result = Truncation(lastSeq: fromSeq - 1, setAside: [], bytesSetAside: 0)
            if cut < bytes.count {
                let aside = uniqueAside("\(path).set-aside-from-\(fromSeq)", storage: storage)
                try storage.writeDurably(Array(bytes[cut...]), to: aside)
                result.setAside.append(aside)
                result.bytesSetAside += bytes.count - cut
            }
            try storage.truncate(path, to: cut)
            try storage.syncFile(path)
            _ = try? storage.remove(SegmentIndex.path(segment: path))
            for later in segments[(holder + 1)...] {
                let from = directory + "/" + later.name
                let size = storage.size(from) ?? 0
                let aside = uniqueAside(from + ".set-aside", storage: storage)
                try storage.rename(from, to: aside)
                _ = try? storage.remove(SegmentIndex.path(segment: from))
                result.setAside.append(aside)
                result.bytesSetAside += size
            }
            try dropQuarantine(from: fromSeq, in: directory, into: &result, storage: storage)
            try storage.syncFile(directory)
            return result
        }
    }

    /// The quarantine list keeps no entry for a seq that is gone: a later action would be given that seq
    /// and be skipped in its place. Entries from `fromSeq` on are dropped (the old list is set aside
    /// whole), and a release that was cut is forgotten, so its action is quarantined again.
    private static func dropQuarantine(
        from fromSeq: UInt64, in directory: String, into result: inout Truncation, storage: any JournalStorage
    ) throws {
        let path = directory + "/QUARANTINE"
        guard let data = storage.contentsIfAny(path) else { return }
        guard let entries = try? JSONDecoder().decode([Quarantine].self, from: Data(data)) else {
            throw JournalError("\(path) is not a quarantine list: nothing was cut from it, so fix or remove it before starting")
        }
        var kept = entries.filter { $0.seq < fromSeq }
        for index in kept.indices where (kept[index].releasedAs ?? 0) >= fromSeq { kept[index].releasedAs = nil }
        guard kept != entries else { return }
        let aside = uniqueAside("\(path).set-aside-from-\(fromSeq)", storage: storage)
        try storage.writeDurably(data, to: aside)
        result.setAside.append(aside)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try storage.writeWhole(Array(try encoder.encode(kept)), to: path)
    }

    /// `path`, or `path.2`, `path.3`… when an earlier cut already set something aside under that name:
    /// nothing set aside is ever overwritten.
    static func uniqueAside(_ path: String, storage: any JournalStorage) -> String {
        var candidate = path
        var number = 2
        while storage.size(candidate) != nil {
            candidate = "\(path).\(number)"
            number += 1
        }
        return candidate
    }

    /// Runs `body` holding the journal's writer lock, or explains which dispatcher holds it.
    static func withWriterLock<T>(directory: String, doing what: String, storage: any JournalStorage, _ body: () throws -> T) throws -> T {
        let lockPath = directory + "/LOCK"
        guard let held = try storage.lock(lockPath, waiting: false) else {
            let holder =
                storage.contentsIfAny(lockPath).flatMap { String(validating: $0, as: UTF8.self) }?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            throw JournalError("the journal in \(directory) is in use by a dispatcher (pid \(holder)): stop it before \(what)")
        }
        defer { storage.close(held) }
        return try body()
    }

    /// The segment files in `directory`, oldest first, with the first seq each is named after.
    static func segmentFiles(in directory: String, storage: any JournalStorage) throws -> [(first: UInt64, name: String)] {
        try storage.list(directory)
            .filter { $0.hasSuffix(".journal") }.compactMap { name in UInt64(name.dropLast(".journal".count)).map { (first: $0, name: name) } }
            .sorted { $0.first < $1.first }
    }
}
