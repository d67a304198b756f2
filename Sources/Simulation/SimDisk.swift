import FluxCore
import Journaling

/// A disk in memory, under the real ``Journal`` (its ``JournalStorage``): files, and a directory of
/// names, each in two copies, what the operating system holds (the page cache: a process crash keeps
/// it) and what is on the platter (a power cut keeps only that). A write lands in the cache; a sync
/// puts the file's bytes on the platter, a directory sync its names.
///
/// With faults on (``Faults``), it lies as real disks do, each lie drawn from the seed:
/// - a power cut (``powerCut(_:)``) keeps what was synced, and of the unsynced tail of each file the
///   sectors written before the power went, the one being written torn;
/// - a bit flips in a synced sector, and is found when it is read (``flipBit(_:)``);
/// - a sync writes one sector to the wrong place (right bytes, wrong offset): only the platter has
///   it wrong, so it shows after the cache is gone;
/// - a sync fails with EIO, and the pages it covered are marked clean without reaching the platter
///   (a later sync succeeds and writes none of them), as Linux does;
/// - the disk is full (ENOSPC) for a while;
/// - (the simulator's timing) a sync is slow.
///
/// A class, as the disk outlives every process that has its files open. An operator's backup is a
/// ``copy()``.
final class SimDisk: JournalStorage {
    static let sectorSize = 4096

    final class Inode {
        var cache: [UInt8] = []
        var platter: [UInt8] = []
        /// Bytes of the cache that a failed sync marked clean without writing: no later sync writes
        /// them (they read as zeros from the platter, or as what it held).
        var lost: Range<Int>? = nil

        init(cache: [UInt8] = [], platter: [UInt8] = []) {
            self.cache = cache
            self.platter = platter
        }
    }

    /// What the disk may do wrong, each with its chance per occasion.
    struct Faults {
        /// Per sync: fails with EIO, the pages it covered lost.
        var syncFails = 0.0
        /// Per sync: one whole sector it writes goes to another sector of the file.
        var misdirects = 0.0
    }

    /// The names as the operating system sees them, and as the platter has them.
    private(set) var names: [String: Inode] = [:]
    private var durableNames: [String: Inode] = [:]
    private var directories: Set<String> = []
    private var open: [Int32: Inode] = [:]
    private var nextHandle: Int32 = 3
    var faults = Faults()
    /// Draws the disk's faults: the simulation's generator, so that a seed replays.
    var draw: () -> Double = { 1 }
    /// Picks within a range, from the same generator.
    var pick: (ClosedRange<Int>) -> Int = { $0.lowerBound }
    /// The simulation's clock (µs), by which the disk is full or failing for a while.
    var clock: () -> UInt64 = { 0 }
    /// Until then, writes that need room fail with ENOSPC.
    var fullUntil: UInt64 = 0
    /// Until then, the disk fails as ``faults`` says.
    var failingUntil: UInt64 = 0
    var full: Bool { fullUntil > clock() }
    private var failing: Bool { failingUntil > clock() }
    /// Lies told, for the trace: the simulation notes each.
    var told: (String) -> Void = { _ in }
    /// Syncs that failed, counted for the report.
    private(set) var syncFailures = 0

    init() {}

    /// Its syncs return when the simulation schedules them (``beginSync(_:)``, ``finishSync(_:prefix:)``).
    var syncsInFlight: Bool { true }

    /// The directory as an operator's copy takes it, put back synced: what the page cache holds, or
    /// (`durable`, a snapshot of the volume) what is on the platter. (A copy of the page cache may hold
    /// a record a power cut then takes back, and its seq be given to another action before the copy
    /// is restored: where power cuts happen, the simulated operator snapshots the volume.)
    func copy(durable: Bool = false) -> SimDisk {
        let copy = SimDisk()
        copy.directories = directories
        for (name, inode) in durable ? durableNames : names {
            let bytes = durable ? inode.platter : inode.cache
            let file = Inode(cache: bytes, platter: bytes)
            copy.names[name] = file
            copy.durableNames[name] = file
        }
        return copy
    }

    // MARK: JournalStorage

    func makeDirectory(_ path: String, private: Bool) throws { directories.insert(path) }

    func list(_ directory: String) throws -> [String] {
        guard directories.contains(directory) else { throw JournalError("open \(directory) failed: no such directory") }
        let prefix = directory + "/"
        return names.keys.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }.map { String($0.dropFirst(prefix.count)) }
            .sorted()
    }

    func open(_ path: String, create: Bool, truncate: Bool) throws -> StorageFile {
        let inode: Inode
        if let existing = names[path] {
            inode = existing
            if truncate { try cut(inode, to: 0) }
        } else {
            guard create else { throw JournalError("open \(path) failed: No such file or directory", code: SimDisk.noEntry) }
            guard !full else { throw outOfSpace(path) }
            inode = Inode()
            names[path] = inode
        }
        nextHandle += 1
        open[nextHandle] = inode
        return StorageFile(handle: nextHandle, path: path)
    }

    func append(_ bytes: ArraySlice<UInt8>, to file: StorageFile) throws {
        let inode = try handle(file)
        guard !full else { throw outOfSpace(file.path) }
        inode.cache.append(contentsOf: bytes)
    }

    func sync(_ file: StorageFile) throws { try sync(try handle(file), file.path) }

    func truncate(_ file: StorageFile, to length: Int) throws { try cut(try handle(file), to: length) }

    func close(_ file: StorageFile) { open[file.handle] = nil }

    func read(_ path: String, at offset: Int, count: Int) throws -> [UInt8] {
        guard let inode = names[path] else { throw JournalError("open \(path) failed: No such file or directory", code: SimDisk.noEntry) }
        let start = min(offset, inode.cache.count)
        return Array(inode.cache[start..<min(inode.cache.count, start + count)])
    }

    func size(_ path: String) -> Int? { names[path]?.cache.count }

    func truncate(_ path: String, to length: Int) throws {
        guard let inode = names[path] else { throw JournalError("truncate \(path) failed: No such file or directory", code: SimDisk.noEntry) }
        try cut(inode, to: length)
    }

    func syncFile(_ path: String) throws {
        if directories.contains(path) { return try syncDirectory(path) }
        guard let inode = names[path] else { throw JournalError("open \(path) failed: No such file or directory", code: SimDisk.noEntry) }
        // Not failed here: a sync by name is the opening's (of what an earlier process wrote), and after
        // one that failed no later opening can tell what reached the disk (see GUARANTEES.md).
        try sync(inode, path, mayFail: false)
    }

    func rename(_ from: String, to: String) throws {
        guard let inode = names.removeValue(forKey: from) else {
            throw JournalError("rename \(from) failed: No such file or directory", code: SimDisk.noEntry)
        }
        names[to] = inode
    }

    func remove(_ path: String) throws -> Bool { names.removeValue(forKey: path) != nil }

    func syncDirectory(_ directory: String) throws {
        let prefix = directory + "/"
        durableNames = durableNames.filter { !$0.key.hasPrefix(prefix) }
        for (name, inode) in names where name.hasPrefix(prefix) { durableNames[name] = inode }
    }

    func restrict(_ path: String) {}

    /// One process at a time has the journal open: the simulation's kill drops the old one first.
    func lock(_ path: String, waiting: Bool) throws -> StorageFile? { try open(path, create: true, truncate: false) }

    // MARK: The disk's own doing

    private func handle(_ file: StorageFile) throws -> Inode {
        guard let inode = open[file.handle] else { throw JournalError("\(file.path): not open", code: SimDisk.badHandle) }
        return inode
    }

    private func cut(_ inode: Inode, to length: Int) throws {
        if length > inode.cache.count {
            guard !full else { throw outOfSpace("a file") }
            inode.cache += [UInt8](repeating: 0, count: length - inode.cache.count)
        } else {
            inode.cache.removeLast(inode.cache.count - length)
        }
        if let lost = inode.lost { inode.lost = lost.lowerBound < length ? lost.lowerBound..<min(lost.upperBound, length) : nil }
    }

    private func outOfSpace(_ path: String) -> JournalError {
        JournalError("write \(path) failed: No space left on device", code: SimDisk.noSpace)
    }

    /// The file's cache onto its platter, but for what a failed sync lost; or, drawn from the seed,
    /// the sync fails (EIO) and loses what it covered, or writes one sector to the wrong place. With
    /// `prefix`, a sync that began when the file held that many bytes: it writes those (what was
    /// written before it began), and what the platter holds past them stays as it is.
    private func sync(_ inode: Inode, _ path: String, mayFail: Bool = true, prefix: Int? = nil) throws {
        let cache = prefix.map { Array(inode.cache.prefix($0)) } ?? inode.cache
        let covered = prefix.map { _ in Array(inode.platter.prefix(cache.count)) } ?? inode.platter
        guard cache != covered else { return }
        let dirty = dirtyRange(cache: cache, platter: inode.platter)
        if mayFail && !dirty.isEmpty && failing && draw() < faults.syncFails {
            inode.lost = inode.lost.map { min($0.lowerBound, dirty.lowerBound)..<max($0.upperBound, dirty.upperBound) } ?? dirty
            syncFailures += 1
            told("fsync of \(path) fails (EIO): bytes \(dirty.lowerBound)..<\(dirty.upperBound) are marked clean and never reach the disk")
            throw JournalError("fdatasync \(path) failed: Input/output error", code: SimDisk.ioError)
        }
        var written = cache
        if let lost = inode.lost {
            for offset in lost where offset < written.count { written[offset] = offset < inode.platter.count ? inode.platter[offset] : 0 }
        }
        // A misdirected write: a whole sector of what this sync writes lands at an earlier sector of the
        // same file, two or more before it (so intact records lie between the damage and the hole, and
        // recovery tells it from a torn tail), and its own place keeps what the platter had.
        let size = SimDisk.sectorSize
        let firstWhole = (dirty.lowerBound + size - 1) / size
        if !dirty.isEmpty, (firstWhole + 1) * size <= dirty.upperBound, firstWhole >= 2, failing, draw() < faults.misdirects {
            let target = pick(0...(firstWhole - 2))
            let sector = Array(written[(firstWhole * size)..<((firstWhole + 1) * size)])
            for offset in 0..<size {
                let at = firstWhole * size + offset
                written[at] = at < inode.platter.count ? inode.platter[at] : 0
            }
            written.replaceSubrange((target * size)..<((target + 1) * size), with: sector)
            told("a write to \(path) is misdirected: sector \(firstWhole) lands on sector \(target)")
        }
        // A sync of a prefix leaves what a later one (returned first) put past it.
        if prefix != nil && inode.platter.count > written.count { written += inode.platter[written.count...] }
        inode.platter = written
    }

    /// A sync through `file` begins (a lane's fdatasync, issued on another thread): it will make
    /// durable what the file holds now, and returns when the simulation says
    /// (``finishSync(_:prefix:)`` with what this returns).
    func beginSync(_ file: StorageFile) -> Int { open[file.handle]?.cache.count ?? 0 }

    /// The sync that began when the file held `prefix` bytes returns: 0, having written them to the
    /// platter (and whatever a failed sync lost, not), or the errno it failed with: EIO drawn from the
    /// seed as for any sync (what it covered is lost), EBADF for a file closed meanwhile.
    func finishSync(_ file: StorageFile, prefix: Int) -> Int32 {
        guard let inode = open[file.handle] else { return SimDisk.badHandle }
        do {
            try sync(inode, file.path, prefix: prefix)
            return 0
        } catch {
            return (error as? JournalError)?.code ?? SimDisk.ioError
        }
    }

    /// Where `cache` (a file's, or the part of it a sync covers) and the platter differ: from the first
    /// byte that differs to the end.
    private func dirtyRange(cache: [UInt8], platter: [UInt8]) -> Range<Int> {
        let common = zip(cache, platter).prefix { $0 == $1 }.count
        return common..<max(common, cache.count)
    }

    /// The power goes: the names and bytes on the platter are all that is left. Of each file's unsynced
    /// tail (what was appended since its last sync), the sectors written before the power went are
    /// kept, in order, and the one being written is torn: part of it reached the disk, and the rest
    /// of that sector holds garbage. Returns what happened, for the trace.
    func powerCut(_ rng: inout SplitMix64) -> String {
        var told: [String] = []
        names = durableNames
        open = [:]
        for (name, inode) in names.sorted(by: { $0.key < $1.key }) {
            defer {
                inode.cache = inode.platter
                inode.lost = nil
            }
            let unsynced = inode.cache.count - inode.platter.count
            guard unsynced > 0, inode.lost == nil, Array(inode.cache.prefix(inode.platter.count)) == inode.platter else { continue }
            guard rng.chance(0.3) else {
                told.append("\(name.split(separator: "/").last ?? ""): lost \(unsynced) bytes")
                continue
            }
            let kept = rng.int(0...unsynced)
            var bytes = Array(inode.cache.prefix(inode.platter.count + kept))
            var torn = ""
            if kept > 0 && rng.chance(0.5) {
                // The sector being written when the power went: garbage from a point in it to its end.
                let sectorEnd = min(inode.cache.count, (bytes.count / SimDisk.sectorSize + 1) * SimDisk.sectorSize)
                let from = inode.platter.count + rng.int(0...(kept - 1))
                bytes += [UInt8](repeating: 0, count: max(0, sectorEnd - bytes.count))
                for at in from..<bytes.count { bytes[at] = UInt8(truncatingIfNeeded: rng.next()) }
                torn = ", torn from byte \(from) to \(bytes.count)"
            }
            inode.platter = bytes
            told.append("\(name.split(separator: "/").last ?? ""): lost \(unsynced - kept) bytes, kept \(kept)\(torn)")
        }
        return told.isEmpty ? "nothing unsynced" : told.joined(separator: "; ")
    }

    /// A bit of a synced sector of `path` flips on the medium (the cached page is evicted, so the next
    /// read sees it): somewhere in `range` of its bytes. Returns the byte it changed.
    func flipBit(_ path: String, in range: Range<Int>, _ rng: inout SplitMix64) -> Int? {
        guard let inode = names[path], !range.isEmpty, range.upperBound <= inode.platter.count, inode.cache.count >= range.upperBound else {
            return nil
        }
        let at = rng.int(range.lowerBound...(range.upperBound - 1))
        let bit = UInt8(1) << UInt8(rng.int(0...7))
        inode.platter[at] ^= bit
        inode.cache[at] ^= bit
        return at
    }

    /// The kernel may evict a page at any time, and one a failed sync marked clean is then read from
    /// the platter: the simulation draws whether it has when the process that wrote it is gone.
    func evictLost() {
        for inode in names.values {
            guard let lost = inode.lost else { continue }
            for offset in lost where offset < inode.cache.count { inode.cache[offset] = offset < inode.platter.count ? inode.platter[offset] : 0 }
        }
    }

    /// The extent of each record in the synced part of `path`, a journal segment whose first seq is `firstSeq`.
    func syncedRecords(_ path: String, firstSeq: UInt64) -> [Range<Int>] {
        guard let inode = names[path], inode.cache.starts(with: inode.platter) else { return [] }
        var starts: [Int] = []
        let (end, _, _) = JournalRecord.checkRecords(inode.platter, firstSeq: firstSeq) { _, offset in starts.append(offset) }
        return zip(starts, starts.dropFirst() + [end]).map { $0..<$1 }
    }

    // MARK: What the checker reads

    /// The records of the journal in `directory`, segment after segment, up to the first that is cut
    /// short, fails its CRC or is not the seq due: from the cache, or (`durable`) from the platter.
    func records(in directory: String, durable: Bool = false) -> [Message] {
        let files = durable ? durableNames : names
        let segments = files.keys.filter { $0.hasPrefix(directory + "/") && $0.hasSuffix(".journal") }.compactMap { path -> (UInt64, String)? in
            UInt64(path.dropFirst(directory.count + 1).dropLast(".journal".count)).map { ($0, path) }
        }.sorted { $0.0 < $1.0 }
        var records: [Message] = []
        for (first, path) in segments {
            guard let inode = files[path], first == (records.last?.header.seq ?? 0) + 1 || records.isEmpty else { break }
            let bytes = durable ? inode.platter : inode.cache
            let (end, _, _) = JournalRecord.checkRecords(bytes, firstSeq: first) { _, offset in
                if case .success(let record) = JournalRecord.read(bytes, at: offset) { records.append(record.message) }
            }
            guard end == bytes.count else { break }
        }
        return records
    }

    /// The whole of each segment file, as the cache has it: what a check compares before and after an
    /// open. (An open may write index files of the sealed segments it scanned before it stopped.)
    func image(in directory: String) -> [String: [UInt8]] {
        names.filter { $0.key.hasPrefix(directory + "/") && $0.key.hasSuffix(".journal") }.mapValues(\.cache)
    }

    /// Linux's errnos, for the errors it throws (``JournalError/isOutOfSpace`` reads ENOSPC).
    static let noEntry: Int32 = 2
    static let ioError: Int32 = 5
    static let badHandle: Int32 = 9
    static let noSpace: Int32 = 28
}
