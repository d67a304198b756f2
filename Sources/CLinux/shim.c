#include "CLinux.h"

#include <sys/prctl.h>

int CLinux_set_timer_slack_ns(unsigned long nanoseconds) { return prctl(PR_SET_TIMERSLACK, nanoseconds); }
