#define _GNU_SOURCE
#include "CLinux.h"

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

int CLinux_cpu_allowed(int cpu) {
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    return CPU_ISSET(cpu, &set) ? 1 : 0;
}
