/*
 * The host's monotonic clock, and the named spans the host runtime waits
 * and polls by.
 */
#ifndef DCU_UTIL_CLOCK_H
#define DCU_UTIL_CLOCK_H

#include <stdint.h>

#define DCU_NS_PER_US 1000ull
#define DCU_NS_PER_MS (1000ull * DCU_NS_PER_US)
#define DCU_NS_PER_S (1000ull * DCU_NS_PER_MS)

/* Monotonic nanoseconds. */
uint64_t dcu_clock_ns(void);
/* Sleeps for ns nanoseconds (less than a second). */
void dcu_clock_sleep_ns(uint64_t ns);

#endif /* DCU_UTIL_CLOCK_H */
