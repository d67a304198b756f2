// Counts every heap allocation of the process it is linked into: these definitions take the place
// of glibc's (an executable's own symbols come first), count, and call glibc's implementations
// under their internal names. Used only by zflux-allocations, never by the zflux binary.
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "CAllocationCounter.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static atomic_long allocations;

static inline void counted(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

long zflux_allocation_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

void *malloc(size_t size) {
    counted();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    counted();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    counted();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    counted();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    counted();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    counted();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

void free(void *pointer) { __libc_free(pointer); }
