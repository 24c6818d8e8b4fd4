/*
 * What a bootstrap step does while it waits (the host's monitor, so that a
 * process that died is named while the others wait for it): set by the
 * host, called by every mode's waits. Below boot.c and the modes, which
 * both call it and which it calls none of.
 */
#include <stddef.h>

#include "boot.h"

static void (*waiting)(void *); /* called while a step waits (dcu_boot_while_waiting) */
static void *waiting_arg;

void dcu_boot_while_waiting(void (*fn)(void *), void *arg)
{
    waiting = fn;
    waiting_arg = arg;
}

void dcu_boot_waiting(void)
{
    if (waiting)
        waiting(waiting_arg);
}
