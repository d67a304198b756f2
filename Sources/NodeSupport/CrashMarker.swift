import FluxCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Which action a store was applying when it died, kept in a small file mapped into memory: setting it
/// before each reducer call is a store to memory, no system call, and the kernel keeps the page when
/// the process crashes. A store that finds, as it starts, that it died
/// ``Defaults/crashesBeforeQuarantine`` times on the same seq asks the dispatcher to quarantine that
/// action (``MessageKind/quarantineRequest``), so that a reducer that traps on one action does not
/// take its store down for good. The supervisor reads the file of a store that died
/// (``lastDeath(path:)``), so that the deaths a poison action costs each replica count once against
/// its restart intensity.
///
/// The file holds three words: the seq being applied (0 between actions), the seq of the last crash,
/// and how many times in a row the store died on it.
package final class CrashMarker {
    private let words: UnsafeMutablePointer<UInt64>
    private static let size = 4096

    /// Maps `path` (made 0600 when missing); nil when it cannot, and the store runs without quarantine.
    package init?(path: String) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size >= CrashMarker.size || ftruncate(fd, off_t(CrashMarker.size)) == 0,
            let mapped = mmap(nil, CrashMarker.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED
        else { return nil }
        words = mapped.bindMemory(to: UInt64.self, capacity: 3)
    }

    deinit { munmap(words, CrashMarker.size) }

    /// The seq being applied now (0: none).
    package var applying: UInt64 {
        get { words[0] }
        set { words[0] = newValue }
    }

    /// The store got past `version`: deaths on an earlier seq no longer count as a streak.
    package func passed(_ version: UInt64) {
        if words[1] != 0 && version > words[1] {
            words[1] = 0
            words[2] = 0
        }
    }

    /// At start: if the last run died while applying an action, counts that death against its seq.
    /// Returns the seq and how many times in a row the store died on it (nil: it did not die applying).
    package func countCrash() -> (seq: UInt64, count: UInt64)? {
        let died = words[0]
        words[0] = 0
        guard died != 0 else { return nil }
        if words[1] == died {
            words[2] += 1
        } else {
            words[1] = died
            words[2] = 1
        }
        return (died, words[2])
    }

    /// What the file of a store that has just died says, read without changing it (the store counts
    /// the death itself when it starts again): the seq it died applying and how many deaths in a row
    /// that makes on it, this one included; nil when it did not die applying an action.
    package static func lastDeath(path: String) -> (seq: UInt64, inARow: Int)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let size = MemoryLayout.size(ofValue: words)
        guard withUnsafeMutableBytes(of: &words, { pread(fd, $0.baseAddress, size, 0) }) == size, words.0 != 0 else { return nil }
        let inARow = words.1 == words.0 ? Int(min(words.2, 1 << 32)) + 1 : 1
        precondition(inARow >= 1)
        return (words.0, inARow)
    }
}
