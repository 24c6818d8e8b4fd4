/*
 * dcuda_info: prints the library's version, every setting (environment
 * variable) with its default, current value and meaning, and which backends
 * and network managers this build contains.
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
    printf("limits: %d tags, %d live windows per communicator, %d timers per run, "
           "rank state %zu bytes\n\n",
           DCUDA_TAG_COUNT, DCUDA_MAX_WINDOWS, DCUDA_MAX_TIMERS, sizeof(dcuda_state_t));
    dcuda_settings_print(stdout);
    return 0;
}
