import FluxCore
import FluxCores
import Foundation
import NodeSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The dispatcher's durable log: append-only segment files of length-prefixed, CRC-checked records.
///
/// A segment is named after the first seq it holds (`00000000000000000001.journal`) and rolls over at
/// `segmentBytes`. A record is `u32 body length, u32 CRC-32 of the body, body`, all little-endian, where
/// the body is the ACTION message as a replay entry (`ReplayBatch.appendEntry`). Opening a journal
/// checks every record: a torn or corrupt tail of the newest segment (a crash in mid-write) is cut off
/// and reported; damage anywhere else stops the open, because acknowledged actions would be lost.
public final class Journal: ActionLog {
    public typealias FsyncPolicy = FluxCore.FsyncPolicy

    /// What opening the journal found.
    public struct Recovery: Sendable, CustomStringConvertible {
        public var segments = 0
        public var records: UInt64 = 0
        public var lastSeq: UInt64 = 0
        /// Sealed segments taken from their index files, not read (their records are checked when read).
        public var indexedSegments = 0
        /// Bytes cut from the end of the newest segment (a torn or corrupt tail).
        public var trimmedBytes = 0
        public var trimmedReason: String? = nil
        public var description: String {
            "\(records) records in \(segments) segments, last seq \(lastSeq)"
                + (trimmedBytes > 0 ? "; trimmed a torn tail of \(trimmedBytes) bytes (\(trimmedReason ?? ""))" : "")
        }
    }

    struct Segment {
        let firstSeq: UInt64
        let path: String
    }

    /// Every `indexStride`-th record's place and each segment's first, for reads from any seq without
    /// scanning whole segments (or reading a segment before the one that holds the seq).
    struct IndexEntry {
        let seq: UInt64
        let segment: Int
        let offset: Int
    }

    public let directory: String
    public let policy: FsyncPolicy
    public let segmentBytes: Int
    public private(set) var lastSeq: UInt64 = 0
    public private(set) var recovery = Recovery()
    private var segments: [Segment] = []
    private var index: [IndexEntry] = []
    private let indexStride: UInt64 = 256
    private var fd: Int32 = -1
    /// Held while this journal is open for appending: one writer per journal, ever.
    private var lockFD: Int32 = -1
    private var segmentSize = 0
    private var unsynced = false
    /// The newest records, for the common replay (gap repair) without touching the disk.
    private var tail: [Message] = []
    private let tailCapacity: Int
    /// The tail's budget in bytes of payload and topic: with large actions, a count alone would let the
    /// cache (and opening a journal, which fills it) take gigabytes.
    private let tailByteCapacity: Int
    /// Bytes the tail cache holds now.
    public private(set) var cachedBytes = 0
    /// The segment last read from disk. Segments only grow by appends, so the copy stays valid for
    /// every record inside its length.
    private var readCache: (segment: Int, bytes: [UInt8])? = nil
    /// Sealed segments opened from their index files whose records have not been checked yet.
    private var unchecked: Set<Int> = []

    /// Opens (or creates) the journal in `directory`. With `repair: false` nothing is changed on disk:
    /// a torn tail is reported in `recovery` and left as it is (for `zflux journal verify`).
    public init(
        directory: String, policy: FsyncPolicy = .batch, segmentBytes: Int = 64 << 20, repair: Bool = true,
        tailCapacity: Int = 65_536, tailByteCapacity: Int = 64 << 20
    ) throws {
        self.tailCapacity = max(tailCapacity, 1)
        self.tailByteCapacity = max(tailByteCapacity, 1)
        self.directory = directory
        self.policy = policy
        self.segmentBytes = max(segmentBytes, 4096)
        // The journal holds every action: this user's alone (0700, files 0600), whatever the umask.
        if repair {
            try RunDirectory.makePrivateDirectory(directory)
        } else {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        if repair { try lock() }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".journal") }.sorted()
        for name in names {
            guard let first = UInt64(name.dropLast(".journal".count)) else { continue }
            segments.append(Segment(firstSeq: first, path: directory + "/" + name))
            // Segments written by an older zflux were 0644.
            if repair { _ = chmod(directory + "/" + name, 0o600) }
        }
        try scan(repair: repair)
        if repair { try openForAppend() }
        try openHistory(repair: repair)
        try openClientScope(repair: repair)
    }

    deinit {
        if fd >= 0 { _ = Glibc.close(fd) }
        if lockFD >= 0 { _ = Glibc.close(lockFD) }  // releases the lock
    }

    /// Takes the journal's writer lock, or explains who holds it. Two dispatchers appending to one
    /// journal would give the same seq to different actions.
    private func lock() throws {
        let path = directory + "/LOCK"
        lockFD = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw JournalError.posix("open", path) }
        _ = fchmod(lockFD, 0o600)
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            _ = Glibc.close(lockFD)
            lockFD = -1
            throw JournalError("the journal in \(directory) is in use by another dispatcher (pid \(holder))")
        }
        _ = ftruncate(lockFD, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(lockFD, $0.baseAddress, $0.count, 0) }
    }

    /// Rebuilds the index and `lastSeq`. A sealed segment (every one but the newest) whose index file
    /// matches it is taken from that file without reading it; any other segment is read and every record
    /// checked (``JournalRecord/check(_:at:)``), and in `repair` mode a sealed one gets its index file
    /// then. `zflux journal verify` (`repair: false`) checks every record of every segment.
    private func scan(repair: Bool) throws {
        recovery.segments = segments.count
        for (number, segment) in segments.enumerated() {
            let isLast = number == segments.count - 1
            if number > 0 && segment.firstSeq != lastSeq + 1 {
                throw JournalError("segment \(segment.path) starts at seq \(segment.firstSeq), but the one before ends at \(lastSeq)")
            }
            if !isLast, repair, let sealed = SegmentIndex.load(segment: segment.path, firstSeq: segment.firstSeq) {
                for entry in sealed.entries { index.append(IndexEntry(seq: entry.seq, segment: number, offset: entry.offset)) }
                recovery.records += sealed.lastSeq - segment.firstSeq + 1
                recovery.indexedSegments += 1
                lastSeq = sealed.lastSeq
                // Its records are checked when it is first read (``loadSegment(_:)``).
                unchecked.insert(number)
                continue
            }
            let bytes = try readFile(segment.path)
            var entries: [SegmentIndex.Entry] = []
            let (offset, expected, problem) = JournalRecord.checkRecords(bytes, firstSeq: segment.firstSeq) { seq, offset in
                if (seq - 1) % indexStride == 0 || offset == 0 { entries.append(.init(seq: seq, offset: offset)) }
            }
            for entry in entries { index.append(IndexEntry(seq: entry.seq, segment: number, offset: entry.offset)) }
            recovery.records += expected - segment.firstSeq
            lastSeq = expected - 1
            if let problem {
                guard isLast else {
                    throw JournalError(
                        "\(segment.path) is damaged at byte \(offset) (\(problem)); it is not the newest segment, so acknowledged actions would be lost: restore it from a backup"
                    )
                }
                recovery.trimmedBytes = bytes.count - offset
                recovery.trimmedReason = "\(problem) at byte \(offset) of \(segment.path)"
                if repair { try truncate(segment.path, to: offset) }
            }
            if isLast {
                segmentSize = offset
                // Reads of what the journal held before this opening start from these bytes.
                readCache = (number, offset == bytes.count ? bytes : Array(bytes.prefix(offset)))
            } else if repair {
                // A shortcut for the next opening; without it, that one scans this segment again.
                try? SegmentIndex(firstSeq: segment.firstSeq, lastSeq: lastSeq, length: offset, entries: entries).write(segment: segment.path)
            }
        }
        recovery.lastSeq = lastSeq
    }

    private func remember(_ message: Message) {
        tail.append(message)
        cachedBytes += message.payload.count + message.topic.count
        // Trimmed in chunks (a quarter over budget, back to the budget) so appends stay O(1) on average.
        guard tail.count > tailCapacity + tailCapacity / 4 || cachedBytes > tailByteCapacity + tailByteCapacity / 4 else { return }
        var drop = 0
        var bytes = cachedBytes
        while drop < tail.count - 1 && (tail.count - drop > tailCapacity || bytes > tailByteCapacity) {
            bytes -= tail[drop].payload.count + tail[drop].topic.count
            drop += 1
        }
        tail.removeFirst(drop)
        cachedBytes = bytes
    }

    private func openForAppend() throws {
        if segments.isEmpty { segments.append(Segment(firstSeq: 1, path: segmentPath(firstSeq: 1))); segmentSize = 0 }
        // What the scan found may be only in the page cache: a dispatcher that crashed after writing and
        // before syncing leaves it there. It is forced to disk now, before anything recovered is acknowledged
        // to a retrying client or replayed to a store (the simulator found the power cut that lost it).
        for segment in segments {
            let readable = open(segment.path, O_RDONLY | O_CLOEXEC)
            guard readable >= 0 else { continue }
            defer { _ = Glibc.close(readable) }
            guard fdatasync(readable) == 0 else { throw JournalError.posix("fdatasync", segment.path) }
        }
        fd = open(segments[segments.count - 1].path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw JournalError.posix("open", segments[segments.count - 1].path) }
        try syncDirectory()
    }

    /// The oldest seq the journal holds (above 1 once older segments were removed).
    public var firstSeq: UInt64 { segments.first?.firstSeq ?? 1 }

    /// The secret that scopes client ids to authenticated keys (``ClientScope``), kept in `CLIENT-SCOPE`
    /// beside the segments (0600, made when the journal is created): the journaled scoped ids must mean
    /// the same after a restart. Read-only opens that find no file report a zero scope.
    public private(set) var clientScope = ClientScope(k0: 0, k1: 0)

    private func openClientScope(repair: Bool) throws {
        let path = directory + "/CLIENT-SCOPE"
        if let bytes = FileManager.default.contents(atPath: path), bytes.count == 16 {
            let words = [UInt8](bytes)
            func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(words[at + $1]) << (8 * UInt64($1)) } }
            clientScope = ClientScope(k0: word(0), k1: word(8))
            return
        }
        guard repair else { return }
        let scope = ClientScope.random()
        var bytes: [UInt8] = []
        for value in [scope.k0, scope.k1] { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        try Journal.writeWhole(bytes, to: path)
        try syncDirectory()
        clientScope = scope
    }

    /// The history this opening of the journal serves (``HistoryID``): the cluster id kept in `HISTORY`
    /// beside the segments (made when the journal is created, copied with it) and a new epoch, later
    /// than the one recorded there. Read-only opens (`repair: false`) report the recorded one.
    public private(set) var history = HistoryID(rawValue: 0)

    private func openHistory(repair: Bool) throws {
        let path = directory + "/HISTORY"
        var cluster: UInt32 = 0, previous: UInt64 = 0
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 2 else { continue }
                if parts[0] == "cluster" { cluster = UInt32(parts[1], radix: 16) ?? 0 }
                if parts[0] == "epoch" { previous = UInt64(parts[1]) ?? 0 }
            }
        }
        guard repair else {
            history = HistoryID(cluster: cluster, epoch: previous)
            return
        }
        var random = SystemRandomNumberGenerator()
        history = DispatcherBoot.history(cluster: cluster, previousEpoch: previous, wallNanoseconds: WallClock.nowNanoseconds()) {
            HistoryID.newCluster(using: &random)
        }
        // Durable before anything of this epoch goes out: a later opening must pick a later epoch.
        let text =
            "# zflux journal history: stores refuse a journal of another cluster, and rebuild when one goes back\n"
            + "cluster \(String(history.cluster, radix: 16))\nepoch \(history.epoch)\n"
        try Journal.writeWhole(Array(text.utf8), to: path)
        try syncDirectory()
    }

    private func segmentPath(firstSeq: UInt64) -> String {
        let digits = String(firstSeq)
        return directory + "/" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".journal"
    }

    public func append(_ actions: [Message]) throws {
        guard !actions.isEmpty else { return }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(actions.count * 160)
        for action in actions {
            precondition(action.header.seq == lastSeq + 1, "journal records are appended in seq order")
            if segmentSize + buffer.count > 0 && segmentSize + buffer.count >= segmentBytes {
                try write(buffer)
                buffer.removeAll(keepingCapacity: true)
                try roll(firstSeq: action.header.seq)
            }
            let start = buffer.count
            JournalRecord.append(action, to: &buffer)
            if (action.header.seq - 1) % indexStride == 0 || segmentSize + start == 0 {
                index.append(IndexEntry(seq: action.header.seq, segment: segments.count - 1, offset: segmentSize + start))
            }
            lastSeq = action.header.seq
            remember(action)
            if policy == .always {
                try write(buffer)
                buffer.removeAll(keepingCapacity: true)
                try sync()
            }
        }
        try write(buffer)
    }

    public func commit() throws {
        if policy == .batch && unsynced { try sync() }
    }

    private func write(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw JournalError.posix("write", segments[segments.count - 1].path)
            }
            written += n
        }
        segmentSize += bytes.count
        unsynced = true
    }

    private func sync() throws {
        guard fdatasync(fd) == 0 else { throw JournalError.posix("fdatasync", segments[segments.count - 1].path) }
        unsynced = false
    }

    private func roll(firstSeq: UInt64) throws {
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

    private func syncDirectory() throws {
        let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw JournalError.posix("open", directory) }
        defer { _ = Glibc.close(dir) }
        _ = fsync(dir)
    }

    public func read(from: UInt64, limit: Int) throws -> [Message] {
        let from = max(from, 1)
        guard from <= lastSeq, limit > 0 else { return [] }
        if let first = tail.first?.header.seq, from >= first {
            let start = Int(from - first)
            return Array(tail[start..<min(tail.count, start + limit)])
        }
        var result: [Message] = []
        try walk(from: from) { _, bytes, body in
            // Checked when the journal was opened or written: decode without a second checksum.
            result.append(try ReplayBatch.decodeEntry(bytes[body]))
            return result.count < limit
        }
        return result
    }

    /// A REPLAY-BATCH payload of at most `limit` actions from `from` on, closed once they pass `maxBytes`
    /// (a larger single action travels alone); nil past the end. Records on disk are copied into it as
    /// they are (a record's body is a batch entry), so serving a replay decodes and encodes nothing.
    public func replayBatch(from: UInt64, limit: Int, maxBytes: Int) throws -> ReplayPlan.Batch? {
        let from = max(from, 1)
        guard from <= lastSeq, limit > 0 else { return nil }
        if let first = tail.first?.header.seq, from >= first {
            let start = Int(from - first)
            return ReplayPlan.batch(Array(tail[start..<min(tail.count, start + limit)]), maxBytes: maxBytes)
        }
        var payload: [UInt8] = [0, 0, 0, 0]
        var count = 0
        var last: UInt64 = 0
        try walk(from: from) { seq, bytes, body in
            guard count == 0 || payload.count - 4 + body.count + 12 <= maxBytes else { return false }
            payload.append(contentsOf: bytes[body])
            count += 1
            last = seq
            return count < limit
        }
        guard count > 0 else { return nil }
        withUnsafeBytes(of: UInt32(count).littleEndian) { payload.replaceSubrange(0..<4, with: $0) }
        return ReplayPlan.Batch(payload: payload, count: count, last: last)
    }

    /// Visits the records on disk from `from` on, in order, as (seq, segment bytes, the record's body
    /// within them), starting at the nearest indexed record, until `visit` returns false or the log ends.
    private func walk(from: UInt64, _ visit: (UInt64, [UInt8], Range<Int>) throws -> Bool) throws {
        var lo = 0, hi = index.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if index[mid].seq <= from { lo = mid } else { hi = mid - 1 }
        }
        guard !index.isEmpty else { return }
        var segment = index[lo].segment
        var offset = index[lo].offset
        var seq = index[lo].seq
        while segment < segments.count {
            if readCache?.segment != segment || readCache!.bytes.count < offset + JournalRecord.headerSize {
                readCache = (segment, try loadSegment(segment))
            }
            var bytes = readCache!.bytes
            var reloaded = false
            while true {
                guard offset + JournalRecord.headerSize <= bytes.count,
                    offset + JournalRecord.headerSize + Int(bytes.readLittleEndian(UInt32.self, at: offset)) <= bytes.count
                else {
                    // The newest segment grows: records written since it was cached are read anew, once.
                    guard segment == segments.count - 1, seq <= lastSeq, bytes.count < segmentSize, !reloaded else { break }
                    reloaded = true
                    readCache = (segment, try readFile(segments[segment].path))
                    bytes = readCache!.bytes
                    continue
                }
                let length = Int(bytes.readLittleEndian(UInt32.self, at: offset))
                let body = (offset + JournalRecord.headerSize)..<(offset + JournalRecord.headerSize + length)
                if seq >= from, try !visit(seq, bytes, body) { return }
                offset += JournalRecord.headerSize + length
                seq += 1
                if seq > lastSeq { return }
            }
            segment += 1
            offset = 0
        }
    }

    /// The (client id, client seq, seq) of every record from `from` on, read from the records' headers
    /// without decoding them whole: what the dispatcher's dedup table is rebuilt from when it opens.
    public func forEachDispatch(from: UInt64, _ body: (_ clientID: UInt64, _ clientSeq: UInt64, _ seq: UInt64) -> Void) throws {
        let from = max(from, firstSeq, 1)
        guard from <= lastSeq else { return }
        if let first = tail.first?.header.seq, from >= first {
            for message in tail[Int(from - first)...] { body(message.header.clientID, message.header.clientSeq, message.header.seq) }
            return
        }
        try walk(from: from) { seq, bytes, record in
            if let dispatch = bytes.withUnsafeBytes({ JournalRecord.dispatch(inBody: UnsafeRawBufferPointer(rebasing: $0[record])) }) {
                body(dispatch.clientID, dispatch.clientSeq, seq)
            }
            return true
        }
    }

    /// Every record in order, for `zflux journal dump` and time travel.
    public func forEach(from: UInt64 = 1, through last: UInt64 = .max, _ body: (Message) throws -> Void) throws {
        var next = from
        while next <= min(last, lastSeq) {
            let batch = try read(from: next, limit: 4096)
            guard !batch.isEmpty else { return }
            for message in batch where message.header.seq <= last { try body(message) }
            next = batch.last!.header.seq + 1
        }
    }

    /// Bytes on disk across every segment.
    public var sizeInBytes: Int {
        segments.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1.path)[.size] as? Int) ?? 0) }
    }

    /// A segment's bytes for reading. A sealed segment opened from its index file has every record
    /// checked the first time it is read: a damaged record is never served, it stops the read instead.
    private func loadSegment(_ number: Int) throws -> [UInt8] {
        let bytes = try readFile(segments[number].path)
        guard unchecked.contains(number) else { return bytes }
        let (offset, expected, found) = JournalRecord.checkRecords(bytes, firstSeq: segments[number].firstSeq) { _, _ in }
        let last = number + 1 < segments.count ? segments[number + 1].firstSeq - 1 : lastSeq
        if let problem = found ?? (expected != last + 1 ? "it ends at seq \(expected - 1), not \(last)" : nil) {
            throw JournalError(
                "\(segments[number].path) is damaged at byte \(offset) (\(problem)); acknowledged actions are in it: restore it from a backup")
        }
        unchecked.remove(number)
        return bytes
    }

    /// A whole file, read straight into the array (no intermediate `Data` and copy: segments are
    /// tens of megabytes, and opening a journal reads the newest).
    private func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw JournalError.posix("open", path) }
        defer { _ = Glibc.close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw JournalError.posix("fstat", path) }
        let size = Int(status.st_size)
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            while count < size {
                let n = pread(fd, buffer.baseAddress! + count, size - count, off_t(count))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    failed = n < 0
                    break
                }
                count += n
            }
        }
        guard !failed else { throw JournalError.posix("read", path) }
        return bytes
    }

    private func truncate(_ path: String, to length: Int) throws {
        guard Glibc.truncate(path, off_t(length)) == 0 else { throw JournalError.posix("truncate", path) }
    }
}

extension Journal {
    /// Creates a journal in the empty or missing `directory` holding `records` (consecutive seqs, from
    /// any first seq) as history `history`: what `zflux journal import` starts a cluster from. The
    /// dispatcher that opens it serves a later epoch of the same cluster id.
    public static func create(directory: String, history: HistoryID, records: [Message]) throws {
        try RunDirectory.makePrivateDirectory(directory)
        let existing = try FileManager.default.contentsOfDirectory(atPath: directory)
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
        for (path, contents) in [(segment, bytes), (directory + "/HISTORY", Array(history.utf8))] {
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw JournalError.posix("open", path) }
            let written = contents.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd) == 0
            _ = Glibc.close(fd)
            guard written == contents.count, synced else { throw JournalError.posix("write", path) }
        }
    }
}

public struct JournalError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    static func posix(_ call: String, _ path: String) -> JournalError {
        JournalError("\(call) \(path) failed: \(String(cString: strerror(errno)))")
    }
}

extension Journal {
    /// What ``compact(directory:keepFrom:dryRun:)`` removed (or would remove).
    public struct Compaction: Sendable, Equatable {
        /// Segments removed, oldest first, as (first seq, last seq, bytes).
        public var removed: [(first: UInt64, last: UInt64, bytes: Int)] = []
        /// The journal's first seq afterwards.
        public var firstSeq: UInt64 = 1

        public static func == (a: Compaction, b: Compaction) -> Bool {
            a.firstSeq == b.firstSeq && a.removed.map(\.first) == b.removed.map(\.first) && a.removed.map(\.last) == b.removed.map(\.last)
        }
    }

    /// Removes every whole segment that holds only seqs below `keepFrom`, never the newest segment,
    /// with the journal's writer lock held (so never under a running dispatcher). Records at or above
    /// `keepFrom` all stay; the journal then starts at the first kept segment's first seq.
    public static func compact(directory: String, keepFrom: UInt64, dryRun: Bool = false) throws -> Compaction {
        let lockPath = directory + "/LOCK"
        let lockFD = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw JournalError.posix("open", lockPath) }
        defer { _ = Glibc.close(lockFD) }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            throw JournalError("the journal in \(directory) is in use by a dispatcher (pid \(holder)): stop it before compacting")
        }
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".journal") }.compactMap { name in UInt64(name.dropLast(".journal".count)).map { (first: $0, name: name) } }
            .sorted { $0.first < $1.first }
        var result = Compaction(removed: [], firstSeq: segments.first?.first ?? 1)
        for (index, segment) in segments.enumerated().dropLast() {
            let first = segment.first, next = segments[index + 1].first
            guard next <= keepFrom else { break }
            let path = directory + "/" + segment.name
            let bytes = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
            if !dryRun {
                guard unlink(path) == 0 else { throw JournalError.posix("unlink", path) }
                _ = unlink(SegmentIndex.path(segment: path))
            }
            result.removed.append((first, next - 1, bytes))
            result.firstSeq = next
        }
        if !dryRun, !result.removed.isEmpty {
            let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dir >= 0 {
                _ = fsync(dir)
                _ = Glibc.close(dir)
            }
        }
        return result
    }
}
