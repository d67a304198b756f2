import CLinux

/// The process's heap, as glibc keeps it.
package enum Heap {
    /// Gives the memory a burst freed back to the system, from every malloc arena (libzmq's I/O threads
    /// allocate in arenas of their own). glibc keeps freed heap memory for later allocations, so a
    /// node's resident size would stay at its peak after a flood of peers left; a node calls this once
    /// the memory it bounds has drained, not every turn (it walks the free lists).
    package static func giveBackFreedMemory() { _ = CLinux_trim_heap() }
}
