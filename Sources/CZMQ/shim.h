#ifndef ZFLUX_CZMQ_SHIM_H
#define ZFLUX_CZMQ_SHIM_H

#include <zmq.h>
#include <errno.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <stdint.h>

/* errno is a macro over a thread-local; Swift reads it through this helper. */
static inline int czmq_errno(void) { return errno; }

/* prctl is variadic, so Swift cannot call it directly. */
static inline int czmq_set_parent_death_signal(int sig) { return prctl(PR_SET_PDEATHSIG, sig); }

/* A one-shot monotonic timer as a file descriptor (pollable beside sockets), in nanoseconds. */
static inline int czmq_timer_create(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK); }
static inline int czmq_timer_arm_at(int fd, uint64_t monotonic_ns) {
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = (time_t)(monotonic_ns / 1000000000ull);
    spec.it_value.tv_nsec = (long)(monotonic_ns % 1000000000ull);
    if (monotonic_ns == 0) spec.it_value.tv_nsec = 1;
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, 0);
}
/* Timer slack lets the kernel delay wake-ups by ~50 us; a load generator wants them on time. */
static inline int czmq_set_timer_slack_ns(unsigned long ns) { return prctl(PR_SET_TIMERSLACK, ns); }

#endif
