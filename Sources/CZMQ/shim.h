#ifndef ZFLUX_CZMQ_SHIM_H
#define ZFLUX_CZMQ_SHIM_H

#include <zmq.h>
#include <errno.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <signal.h>

/* errno is a macro over a thread-local; Swift reads it through this helper. */
static inline int czmq_errno(void) { return errno; }

/* prctl is variadic, so Swift cannot call it directly. */
static inline int czmq_set_parent_death_signal(int sig) { return prctl(PR_SET_PDEATHSIG, sig); }

#endif
