/*
 * dcuda_info: prints the library's version, every setting (environment
 * variable) with its default, current value and meaning, which backends
 * and network managers this build contains, and which backends can run
 * ranks on this machine (and why the others cannot).
 */
#include <stdio.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"

int main(void)
{
    int major, minor, patch;
    dcuda_version(&major, &minor, &patch);
    printf("dcuda %d.%d.%d, layout version %u; backends: cpu%s\n", major, minor, patch,
           DCUDA_LAYOUT_VERSION,
#if defined(DCUDA_HAVE_CUDA)
           ", cuda"
#else
           ""
#endif
    );
    /* DCUDA_NET=auto takes mpi under mpirun, else ucx. */
    const char *nets = ""
#if defined(DCUDA_HAVE_MPI)
                       " mpi"
#endif
#if defined(DCUDA_HAVE_UCX)
                       " ucx"
#endif
        ;
    printf("network managers (DCUDA_NET):%s\n", nets[0] ? nets : " none built");
    /* Which backends can run ranks on this machine, and why not. */
    static const char *backends[] = { "cuda", "cpu" };
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        char why[256] = "";
        int can = dcuda_host_backend_available(backends[i], why, sizeof why);
        printf("backend %-4s here: %s%s%s\n", backends[i], can ? "can run" : "cannot run",
               can ? "" : ": ", can ? "" : why);
    }
    printf("limits: %d tags, %d live windows per communicator, %d timers per run, "
           "rank state %zu bytes\n\n",
           DCUDA_TAG_COUNT, DCUDA_MAX_WINDOWS, DCUDA_MAX_TIMERS, sizeof(dcuda_state_t));
    dcuda_settings_print(stdout);
    return 0;
}
