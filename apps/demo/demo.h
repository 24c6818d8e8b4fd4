/*
 * The demo's programs: each runs a dcuda kernel, checks its result against
 * an independent serial computation and prints timings. Each returns 0 on a
 * matching result.
 */
#ifndef DCUDA_DEMO_H
#define DCUDA_DEMO_H

/* Set in processes other than the first when all went well: only process 0
 * prints results then. */
extern int demo_quiet;

int demo_reduce(int argc, char **argv);
int demo_stencil(int argc, char **argv);

#endif
