/*
 * The host's monotonic clock.
 */
#include "clock.h"

#include <time.h>

uint64_t dcu_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * DCU_NS_PER_S + (uint64_t)ts.tv_nsec;
}

void dcu_clock_sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / DCU_NS_PER_S), (long)(ns % DCU_NS_PER_S) };
    nanosleep(&ts, NULL);
}
