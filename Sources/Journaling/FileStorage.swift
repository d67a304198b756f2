import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// ``JournalStorage`` on the real file system: each call the system call it names, EINTR retried, and
/// any other failure thrown as a ``JournalError`` with its errno.
package final class FileStorage: JournalStorage, Sendable {
    package static let shared = FileStorage()

    package init() {}

    /// Each lane's fdatasync runs on a thread of its own, through a descriptor of its own.
    package var syncsInFlight: Bool { true }

    package func makeDirectory(_ path: String, private: Bool) throws {
        if `private` {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard chmod(path, 0o700) == 0 else {
                throw JournalError("cannot make \(path) private (chmod 0700: \(String(cString: strerror(errno))))", code: errno)
            }
        } else {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
    }

    package func list(_ directory: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: directory) }

    package func open(_ path: String, create: Bool, truncate: Bool) throws -> StorageFile {
        let flags = O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT : 0) | (truncate ? O_TRUNC : 0)
        let fd = Glibc.open(path, flags, 0o600)
        guard fd >= 0 else { throw JournalError.posix("open", path) }
        return StorageFile(handle: fd, path: path)
    }

    package func append(_ bytes: ArraySlice<UInt8>, to file: StorageFile) throws {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { raw in raw.baseAddress.map { Glibc.write(file.handle, $0 + written, raw.count - written) } ?? 0 }
            if n < 0 {
                if errno == EINTR { continue }
                throw JournalError.posix("write", file.path)
            }
            written += n
        }
    }

    package func sync(_ file: StorageFile) throws {
        guard fdatasync(file.handle) == 0 else { throw JournalError.posix("fdatasync", file.path) }
    }

    package func truncate(_ file: StorageFile, to length: Int) throws {
        guard ftruncate(file.handle, off_t(length)) == 0 else { throw JournalError.posix("ftruncate", file.path) }
    }

    package func close(_ file: StorageFile) { _ = Glibc.close(file.handle) }

    /// Read straight into the array (no intermediate `Data` and copy: segments are tens of megabytes,
    /// and opening a journal reads the newest).
    package func read(_ path: String, at offset: Int, count: Int) throws -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw JournalError.posix("open", path) }
        defer { _ = Glibc.close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw JournalError.posix("fstat", path) }
        let size = max(0, min(count, Int(status.st_size) - offset))
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, done in
            guard let base = buffer.baseAddress else { return }  // nothing to read
            while done < size {
                let n = pread(fd, base + done, size - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    failed = n < 0
                    break
                }
                done += n
            }
        }
        guard !failed else { throw JournalError.posix("read", path) }
        return bytes
    }

    package func size(_ path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int(status.st_size)
    }

    package func truncate(_ path: String, to length: Int) throws {
        guard Glibc.truncate(path, off_t(length)) == 0 else { throw JournalError.posix("truncate", path) }
    }

    package func syncFile(_ path: String) throws {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw JournalError.posix("open", path) }
        defer { _ = Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw JournalError.posix("fsync", path) }
    }

    package func rename(_ from: String, to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw JournalError.posix("rename", from) }
    }

    @discardableResult package func remove(_ path: String) throws -> Bool {
        guard unlink(path) == 0 else {
            if errno == ENOENT { return false }
            throw JournalError.posix("unlink", path)
        }
        return true
    }

    /// A directory's fsync may fail where the file system does not support it: the entries are then
    /// as durable as that file system makes them, and the journal goes on.
    package func syncDirectory(_ directory: String) throws {
        let dir = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw JournalError.posix("open", directory) }
        defer { _ = Glibc.close(dir) }
        _ = fsync(dir)
    }

    package func restrict(_ path: String) { _ = chmod(path, 0o600) }

    package func lock(_ path: String, waiting: Bool) throws -> StorageFile? {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw JournalError.posix("open", path) }
        _ = fchmod(fd, 0o600)
        // Asked again for up to a second: a child this process forks holds its copy of the lock's
        // descriptor until it execs (close-on-exec), so a journal closed and opened again at once can
        // find its own lock still held for a moment.
        var locked = flock(fd, LOCK_EX | LOCK_NB) == 0
        var attempts = 0
        while waiting && !locked && errno == EWOULDBLOCK && attempts < 50 {
            attempts += 1
            usleep(20_000)
            locked = flock(fd, LOCK_EX | LOCK_NB) == 0
        }
        guard locked else {
            _ = Glibc.close(fd)
            return nil
        }
        _ = ftruncate(fd, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return StorageFile(handle: fd, path: path)
    }
}
