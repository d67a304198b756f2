import CLinux

/// The process's heap, as glibc keeps it.
package enum Heap {
    /// Gives the memory a burst freed back to the system. glibc keeps freed heap memory for later
    /// allocations, so a node's resident size would stay at its peak after a flood of peers left;
    /// a node calls this once the memory it bounds has drained.
    package static func giveBackFreedMemory() { _ = CLinux_trim_heap() }
}
