#define _GNU_SOURCE
#include "CLinux.h"

#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif
#include <sys/syscall.h>
#include <unistd.h>

int CLinux_set_timer_slack_ns(unsigned long nanoseconds) { return prctl(PR_SET_TIMERSLACK, nanoseconds); }

int CLinux_pin_thread(int tid, int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof set, &set);
}

int CLinux_allowed_cpus(int *cpus, int capacity) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < capacity; cpu++) {
        if (CPU_ISSET(cpu, &set)) cpus[count++] = cpu;
    }
    return count;
}

int CLinux_trim_heap(void) { return malloc_trim(0); }

/* sched_setattr(2)'s argument as the kernel reads it (glibc has no wrapper before 2.41). */
struct CLinux_sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

int CLinux_request_slice(int tid, unsigned long long nanoseconds) {
    struct CLinux_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, tid, &attr, sizeof attr, 0) != 0) return -1;
    if (attr.policy != SCHED_OTHER) {
        errno = EINVAL;
        return -1;
    }
    attr.size = sizeof attr;
    /* Threads the caller starts later begin with the default slice (and a reset-on-fork flag set by
     * someone else stays set: an unprivileged thread may not clear it). */
    attr.flags = SCHED_FLAG_RESET_ON_FORK;
    attr.runtime = nanoseconds;
    return (int)syscall(SYS_sched_setattr, tid, &attr, 0);
}

unsigned long long CLinux_slice(int tid) {
    struct CLinux_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, tid, &attr, sizeof attr, 0) != 0) return 0;
    return attr.runtime;
}
