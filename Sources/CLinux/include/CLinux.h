#ifndef ZFLUX_CLINUX_H
#define ZFLUX_CLINUX_H

/* The Linux calls Swift's Glibc module leaves out (eventfd, timerfd), and wrappers for the ones that
 * Swift cannot call (prctl is variadic; CPU affinity needs _GNU_SOURCE and the CPU_SET macros). Every
 * symbol of ours is prefixed CLinux_. */

#ifndef __linux__
/* zflux's nodes, its CLI and its tests use eventfd, timerfd, /proc and CPU affinity: they run on Linux
 * only. A package that needs only the model (FluxCore, FluxWire, FluxTesting) does not build this. */
#error "zflux's nodes and command line build on Linux only (README, Platforms)"
#endif

#include <sys/eventfd.h>
#include <sys/timerfd.h>

/* Timer slack lets the kernel delay a thread's wake-ups by ~50 us; a load generator wants them on time.
 * Returns prctl's result (-1 with errno set on failure). */
int CLinux_set_timer_slack_ns(unsigned long nanoseconds);

/* Keeps thread `tid` (0: the calling thread) on CPU `cpu` alone. Returns sched_setaffinity's result. */
int CLinux_pin_thread(int tid, int cpu);

/* The CPUs the calling thread may run on, in order, into `cpus` (at most `capacity`): how many, or -1
 * when the set cannot be read. */
int CLinux_allowed_cpus(int *cpus, int capacity);

/* Gives the heap's free memory back to the system (malloc_trim(0)): glibc keeps what was freed in its
 * arenas otherwise, so a process whose peers went away would stay as large as at their peak. Returns
 * 1 when memory was released. */
int CLinux_trim_heap(void);

/* Asks the scheduler for a time slice of `nanoseconds` for thread `tid` (0: the calling thread), keeping
 * its policy (SCHED_OTHER only: EINVAL otherwise) and nice value: sched_setattr's sched_runtime, which
 * Linux 6.12 and later read as the slice a fair task asks for (and clamp to 0.1 ms ... 100 ms); earlier
 * kernels ignore it. Sets the reset-on-fork flag, so that threads the caller starts later begin with
 * the default slice (and a nice below 0 reset to 0). Returns 0, or -1 with errno set. */
int CLinux_request_slice(int tid, unsigned long long nanoseconds);

/* The slice of thread `tid` (0: the calling thread), sched_getattr's sched_runtime: on Linux 6.12 and
 * later its slice in nanoseconds, the default included; 0 on earlier kernels, or when it cannot be read. */
unsigned long long CLinux_slice(int tid);

#endif
