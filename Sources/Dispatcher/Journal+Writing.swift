import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Journal {
    func segmentPath(firstSeq: UInt64) -> String {
        let digits = String(firstSeq)
        return directory + "/" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".journal"
    }

    func write(_ bytes: ArraySlice<UInt8>) throws {
        guard !bytes.isEmpty else { return }
        // Read-only opens never have one; a truncation that failed half-way gives it up (see `truncate(after:)`).
        guard fd >= 0 else { throw JournalError("the journal in \(directory) is not open for appending: open it again") }
        var written = 0
        while written < bytes.count {
            // Not empty (checked above): the buffer has an address.
            let n = bytes.withUnsafeBytes { raw in raw.baseAddress.map { Glibc.write(fd, $0 + written, raw.count - written) } ?? 0 }
            if n < 0 {
                if errno == EINTR { continue }
                throw JournalError.posix("write", segments[segments.count - 1].path)
            }
            written += n
        }
        segmentSize += bytes.count
        unsynced = true
    }

    func sync() throws {
        guard fdatasync(fd) == 0 else { throw JournalError.posix("fdatasync", segments[segments.count - 1].path) }
        unsynced = false
    }

    func roll(firstSeq: UInt64) throws {
        if unsynced && policy != .none { try sync() }
        _ = Glibc.close(fd)
        // Only a shortcut for the next opening: without it, that opening scans the segment instead.
        try? sealIndex(segment: segments.count - 1)
        segments.append(Segment(firstSeq: firstSeq, path: segmentPath(firstSeq: firstSeq)))
        segmentSize = 0
        fd = open(segments[segments.count - 1].path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw JournalError.posix("open", segments[segments.count - 1].path) }
        try syncDirectory()
    }

    /// Writes the index file of a segment the journal has rolled past, from the index in memory.
    private func sealIndex(segment number: Int) throws {
        let entries = index.filter { $0.segment == number }.map { SegmentIndex.Entry(seq: $0.seq, offset: $0.offset) }
        try SegmentIndex(firstSeq: segments[number].firstSeq, lastSeq: lastSeq, length: segmentSize, entries: entries)
            .write(segment: segments[number].path)
    }

    /// Writes a small file whole or not at all: a temporary file (0600), synced, renamed over `path`.
    static func writeWhole(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw JournalError.posix("open", temporary) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fdatasync(fd) == 0
        _ = Glibc.close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else { throw JournalError.posix("write", path) }
    }

    func syncDirectory() throws {
        let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw JournalError.posix("open", directory) }
        defer { _ = Glibc.close(dir) }
        _ = fsync(dir)
    }
}

extension SegmentIndex {
    /// Writes the file whole or not at all.
    func write(segment: String) throws { try Journal.writeWhole(encoded(), to: SegmentIndex.path(segment: segment)) }
}
