#define _GNU_SOURCE
#include "CLinux.h"

#include <malloc.h>
#include <sched.h>
#include <sys/prctl.h>

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
