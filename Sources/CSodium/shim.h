#ifndef ZFLUX_CSODIUM_SHIM_H
#define ZFLUX_CSODIUM_SHIM_H

#include <sodium.h>

#endif
