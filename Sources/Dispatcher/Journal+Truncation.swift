import FluxCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

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
        try withWriterLock(directory: directory, doing: "truncating") {
            let segments = try segmentFiles(in: directory)
            guard let holder = segments.lastIndex(where: { $0.first <= fromSeq }), fromSeq >= 1 else {
                throw JournalError("seq \(fromSeq) is before the journal in \(directory), which starts at seq \(segments.first?.first ?? 1)")
            }
            let path = directory + "/" + segments[holder].name
            let bytes = try readWhole(path)
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
                let aside = uniqueAside("\(path).set-aside-from-\(fromSeq)")
                try writeDurably(Array(bytes[cut...]), to: aside)
                result.setAside.append(aside)
                result.bytesSetAside += bytes.count - cut
            }
            guard Glibc.truncate(path, off_t(cut)) == 0 else { throw JournalError.posix("truncate", path) }
            try syncFile(path)
            _ = unlink(SegmentIndex.path(segment: path))
            for later in segments[(holder + 1)...] {
                let from = directory + "/" + later.name
                let size = ((try? FileManager.default.attributesOfItem(atPath: from))?[.size] as? Int) ?? 0
                let aside = uniqueAside(from + ".set-aside")
                guard rename(from, aside) == 0 else { throw JournalError.posix("rename", from) }
                _ = unlink(SegmentIndex.path(segment: from))
                result.setAside.append(aside)
                result.bytesSetAside += size
            }
            try dropQuarantine(from: fromSeq, in: directory, into: &result)
            try syncFile(directory)
            return result
        }
    }

    /// The quarantine list keeps no entry for a seq that is gone: a later action would be given that seq
    /// and be skipped in its place. Entries from `fromSeq` on are dropped (the old list is set aside
    /// whole), and a release that was cut is forgotten, so its action is quarantined again.
    private static func dropQuarantine(from fromSeq: UInt64, in directory: String, into result: inout Truncation) throws {
        let path = directory + "/QUARANTINE"
        guard let data = FileManager.default.contents(atPath: path) else { return }
        guard let entries = try? JSONDecoder().decode([Quarantine].self, from: data) else {
            throw JournalError("\(path) is not a quarantine list: nothing was cut from it, so fix or remove it before starting")
        }
        var kept = entries.filter { $0.seq < fromSeq }
        for index in kept.indices where (kept[index].releasedAs ?? 0) >= fromSeq { kept[index].releasedAs = nil }
        guard kept != entries else { return }
        let aside = uniqueAside("\(path).set-aside-from-\(fromSeq)")
        try writeDurably([UInt8](data), to: aside)
        result.setAside.append(aside)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try writeWhole(Array(try encoder.encode(kept)), to: path)
    }

    /// `path`, or `path.2`, `path.3`… when an earlier cut already set something aside under that name:
    /// nothing set aside is ever overwritten.
    static func uniqueAside(_ path: String) -> String {
        var candidate = path
        var number = 2
        while FileManager.default.fileExists(atPath: candidate) {
            candidate = "\(path).\(number)"
            number += 1
        }
        return candidate
    }

    /// Runs `body` holding the journal's writer lock, or explains which dispatcher holds it.
    static func withWriterLock<T>(directory: String, doing what: String, _ body: () throws -> T) throws -> T {
        let lockPath = directory + "/LOCK"
        let lockFD = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw JournalError.posix("open", lockPath) }
        defer { _ = Glibc.close(lockFD) }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            throw JournalError("the journal in \(directory) is in use by a dispatcher (pid \(holder)): stop it before \(what)")
        }
        return try body()
    }

    /// The segment files in `directory`, oldest first, with the first seq each is named after.
    static func segmentFiles(in directory: String) throws -> [(first: UInt64, name: String)] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".journal") }.compactMap { name in UInt64(name.dropLast(".journal".count)).map { (first: $0, name: name) } }
            .sorted { $0.first < $1.first }
    }

    private static func readWhole(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw JournalError.posix("read", path) }
        return [UInt8](data)
    }

    private static func writeDurably(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw JournalError.posix("open", path) }
        defer { _ = Glibc.close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress.map { $0 + written }, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw JournalError.posix("write", path) }
            written += n
        }
        guard fdatasync(fd) == 0 else { throw JournalError.posix("fdatasync", path) }
    }

    /// fsync of a file or a directory by path.
    private static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw JournalError.posix("open", path) }
        defer { _ = Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw JournalError.posix("fsync", path) }
    }
}
