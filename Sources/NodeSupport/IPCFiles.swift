#if canImport(Glibc)
    import Glibc
#endif

/// Removes the socket files of `ipc://` endpoints a node bound.
///
/// libzmq unlinks an ipc file when the listening socket closes, but it does so on its I/O thread, which
/// a process that exits right after closing its sockets may never let run. A node therefore removes its
/// own files once its loop has ended, so a stopped node never leaves a socket file behind.
public func removeIPCFiles(_ endpoints: [String]) {
    for endpoint in endpoints where endpoint.hasPrefix("ipc://") {
        _ = unlink(String(endpoint.dropFirst("ipc://".count)))
    }
}
