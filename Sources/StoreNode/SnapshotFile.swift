import FluxCore
import Foundation
import NodeCores
import NodeSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A store's state on disk, in ``SnapshotFormat``. Written atomically: a temporary file is written and
/// fsynced, renamed over the old one, and the directory fsynced, so a crash leaves the old snapshot or
/// the new one, never half of one.
public enum SnapshotFile {
    /// What a snapshot file holds.
    public typealias Contents = StoreSnapshot

    public static func write(_ contents: Contents, to path: String) throws {
        let bytes = try SnapshotFormat.encode(version: contents.version, history: contents.history, app: contents.app, state: contents.state)
        let directory = (path as NSString).deletingLastPathComponent
        try RunDirectory.makePrivateDirectory(directory)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SnapshotError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress?.advanced(by: written), $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { _ = close(fd); throw SnapshotError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
            written += n
        }
        guard fsync(fd) == 0 else { _ = close(fd); throw SnapshotError("cannot fsync \(temporary)") }
        _ = close(fd)
        guard rename(temporary, path) == 0 else { throw SnapshotError("cannot rename \(temporary) to \(path)") }
        syncDirectory(of: path)
    }

    /// Makes a rename in the directory that holds `path` durable.
    private static func syncDirectory(of path: String) {
        let dir = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { _ = fsync(dir); _ = close(dir) }
    }

    /// Moves an unusable snapshot out of the way without deleting it: to `PATH.set-aside` (or
    /// `PATH.set-aside.2`… when one is there already), so the store rebuilds from the journal and an
    /// operator can still look at what the disk held. Returns where it went; the rename is made durable.
    package static func setAside(_ path: String) throws -> String {
        var aside = path + ".set-aside"
        var number = 2
        while FileManager.default.fileExists(atPath: aside) {
            aside = "\(path).set-aside.\(number)"
            number += 1
        }
        guard rename(path, aside) == 0 else {
            throw SnapshotError("cannot rename \(path) to \(aside): \(String(cString: strerror(errno)))")
        }
        syncDirectory(of: path)
        return aside
    }

    /// The snapshot at `path`, nil when there is none; throws when it is there but unusable.
    public static func read(_ path: String) throws -> Contents? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            let decoded = try SnapshotFormat.decode([UInt8](data))
            return Contents(version: decoded.version, history: decoded.history, app: decoded.app, state: decoded.state)
        } catch {
            throw SnapshotError("\(path): \(error.message)")
        }
    }
}
