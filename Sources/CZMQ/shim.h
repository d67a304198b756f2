#ifndef ZFLUX_CZMQ_SHIM_H
#define ZFLUX_CZMQ_SHIM_H

#include <zmq.h>

#endif
