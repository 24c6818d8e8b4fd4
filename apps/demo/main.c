/*
 * dcuda demo: the thesis' reduction and a 2D heat stencil, each checked
 * against a serial reference. Runs on the GPU when there is one and the
 * kernels were built for it, on CPU ranks otherwise (DCUDA_BACKEND picks).
 */
#include <stdio.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "demo.h"

int demo_quiet;

int main(int argc, char **argv)
{
    int failed = 0;
    failed += demo_reduce(argc, argv);
    failed += demo_stencil(argc, argv);
    if (failed || !demo_quiet)
        printf("demo: %s\n", failed ? "FAILED" : "all results match their serial references");
    /* In a forked group, process 0 reports for every process. */
    return dcuda_host_exit_status(failed ? 1 : 0);
}
