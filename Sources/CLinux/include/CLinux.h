#ifndef ZFLUX_CLINUX_H
#define ZFLUX_CLINUX_H

/* The Linux calls Swift's Glibc module leaves out (eventfd, timerfd), and a wrapper for the one that
 * Swift cannot call (prctl is variadic). Every symbol of ours is prefixed CLinux_. */

#include <sys/eventfd.h>
#include <sys/timerfd.h>

/* Timer slack lets the kernel delay a thread's wake-ups by ~50 us; a load generator wants them on time.
 * Returns prctl's result (-1 with errno set on failure). */
int CLinux_set_timer_slack_ns(unsigned long nanoseconds);

#endif
