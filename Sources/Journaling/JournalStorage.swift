import NodeCores

#if canImport(Glibc)
    import Glibc
#endif

/// An open file of a ``JournalStorage``: what it gave back from ``JournalStorage/open(_:create:truncate:)``.
package struct StorageFile: Sendable, Equatable {
    /// The storage's own number for it (a descriptor for ``FileStorage``).
    package let handle: Int32
    package let path: String

    package init(handle: Int32, path: String) {
        self.handle = handle
        self.path = path
    }
}

/// The files a ``Journal`` stands on: its segments, their index files, `HISTORY`, `CLIENT-SCOPE`,
/// `QUARANTINE` and `LOCK`. ``FileStorage`` makes the system calls; the simulator's disk keeps the bytes
/// in memory and lies the ways real disks do (a power cut, a flipped bit, a failed fsync). Every change
/// goes through here, so the journal's recovery runs the same code on both.
///
/// Errors are ``JournalError``s with the errno of what failed (``JournalError/code``): the journal tells
/// a full disk (``JournalError/isOutOfSpace``) from the rest by it.
package protocol JournalStorage: AnyObject {
    /// Creates `path` and its parents when missing; with `private`, makes it 0700 whatever the umask.
    func makeDirectory(_ path: String, private: Bool) throws
    /// The names of the entries in `directory`.
    func list(_ directory: String) throws -> [String]
    /// Opens `path` for writes at its end. `create` makes it (0600) when missing; `truncate` empties it.
    func open(_ path: String, create: Bool, truncate: Bool) throws -> StorageFile
    /// Writes all of `bytes` at the end of `file`, or throws.
    func append(_ bytes: ArraySlice<UInt8>, to file: StorageFile) throws
    /// fdatasync: what was written to `file` is on the disk once this returns. A sync that throws
    /// proves nothing about those writes, then or after (a retried sync may succeed with them lost).
    func sync(_ file: StorageFile) throws
    /// Cuts (or extends with zeros) `file` to `length` bytes.
    func truncate(_ file: StorageFile, to length: Int) throws
    func close(_ file: StorageFile)
    /// Up to `count` bytes of `path` from `offset` on (fewer at its end).
    func read(_ path: String, at offset: Int, count: Int) throws -> [UInt8]
    /// The length of `path`, or nil when there is no such file.
    func size(_ path: String) -> Int?
    /// Cuts `path` to `length` bytes.
    func truncate(_ path: String, to length: Int) throws
    /// fsync of `path` (a file or a directory) by name.
    func syncFile(_ path: String) throws
    func rename(_ from: String, to: String) throws
    /// Removes `path`; false when there was none.
    @discardableResult func remove(_ path: String) throws -> Bool
    /// fsync of `directory`: the entries made, renamed and removed in it are on the disk.
    func syncDirectory(_ directory: String) throws
    /// Makes `path` its owner's alone (0600): segments an older zflux wrote were 0644.
    func restrict(_ path: String)
    /// Takes the exclusive writer lock held in the file `path` (made when missing) and writes this
    /// process's id in it; nil when another process holds it. With `waiting`, asks again for up to a second.
    func lock(_ path: String, waiting: Bool) throws -> StorageFile?
    /// Whether syncs of a file may run while the journal goes on writing it, each through a descriptor
    /// of its own (``Journal/useSyncLanes()``): the real file system's, and the simulator's disk, which
    /// schedules when each returns. Other storage syncs in place.
    var syncsInFlight: Bool { get }
}

extension JournalStorage {
    /// Syncs in place unless it says otherwise.
    package var syncsInFlight: Bool { false }

    /// The whole of `path`; throws when there is no such file.
    package func contents(_ path: String) throws -> [UInt8] {
        guard let size = size(path) else { throw JournalError("open \(path) failed: \(String(cString: strerror(ENOENT)))", code: ENOENT) }
        return try read(path, at: 0, count: size)
    }

    /// The whole of `path`, or nil when there is none or it cannot be read.
    package func contentsIfAny(_ path: String) -> [UInt8]? { try? contents(path) }

    /// Writes a small file whole or not at all: a temporary file (0600), synced, renamed over `path`.
    package func writeWhole(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp"
        let file = try open(temporary, create: true, truncate: true)
        do {
            try append(bytes[...], to: file)
            try sync(file)
        } catch {
            close(file)
            throw error
        }
        close(file)
        try rename(temporary, to: path)
    }

    /// Writes `path` (made or emptied) with `bytes`, synced.
    package func writeDurably(_ bytes: [UInt8], to path: String) throws {
        let file = try open(path, create: true, truncate: true)
        defer { close(file) }
        try append(bytes[...], to: file)
        try sync(file)
    }
}

/// A journal's surroundings: the storage it stands on, the wall clock its epochs are read from, and
/// the entropy its cluster ids and client scopes are drawn from. ``live`` for a node; the simulator
/// passes its disk, clock and seeded generator, so that a seed replays.
package struct JournalEnvironment {
    package var storage: any JournalStorage
    package var wallNanoseconds: () -> Int64
    /// The monotonic clock in nanoseconds: what the journal times its syncs with (``Journal/syncTimes``).
    package var monotonicNanoseconds: () -> UInt64
    package var randomWord: () -> UInt64
    /// Rules of the journal broken on purpose by the simulator's canaries.
    package var brokenRules: Set<Canary> = []

    package init(
        storage: any JournalStorage, wallNanoseconds: @escaping () -> Int64, monotonicNanoseconds: @escaping () -> UInt64,
        randomWord: @escaping () -> UInt64, brokenRules: Set<Canary> = []
    ) {
        self.storage = storage
        self.wallNanoseconds = wallNanoseconds
        self.monotonicNanoseconds = monotonicNanoseconds
        self.randomWord = randomWord
        self.brokenRules = brokenRules
    }

    /// Files, the real clock and the system's entropy.
    package static var live: JournalEnvironment {
        JournalEnvironment(
            storage: FileStorage.shared,
            wallNanoseconds: {
                var ts = timespec()
                clock_gettime(CLOCK_REALTIME, &ts)
                return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
            },
            monotonicNanoseconds: {
                var ts = timespec()
                clock_gettime(CLOCK_MONOTONIC, &ts)
                return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
            },
            randomWord: {
                var generator = SystemRandomNumberGenerator()
                return generator.next()
            })
    }
}

/// A ``JournalEnvironment``'s entropy as a generator, for what draws from one (``HistoryID/newCluster(using:)``).
struct JournalRandom: RandomNumberGenerator {
    let word: () -> UInt64
    mutating func next() -> UInt64 { word() }
}
