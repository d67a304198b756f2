import CLinux

/// Gives the memory the process has freed back to the system (glibc's `malloc_trim`, over every
/// arena). glibc keeps freed memory for later allocations, and libzmq's I/O threads allocate in
/// arenas of their own: after a flood of large messages drained, a node would hold on to hundreds of
/// megabytes it no longer uses. Costs a walk of the free lists, so call it after a drain, not per turn.
public func releaseFreeMemory() {
    _ = CLinux_trim_heap()
}
