#ifndef ZFLUX_ALLOCATION_COUNTER_H
#define ZFLUX_ALLOCATION_COUNTER_H

/// How many times this process has allocated (malloc, calloc, realloc, posix_memalign, aligned_alloc,
/// memalign) since it started. Linked into an executable, the functions in counter.c stand in for
/// glibc's for the whole process, the Swift runtime's allocations included.
long zflux_allocation_count(void);

#endif
