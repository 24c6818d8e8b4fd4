/*
 * Processes: whether another one has ended, and whether this one has
 * initialised CUDA (then it must not fork processes that use CUDA).
 */
#ifndef DCU_UTIL_PROC_H
#define DCU_UTIL_PROC_H

#include <sys/types.h>

/* 1 if pid has ended or is a zombie (ended, not yet reaped). */
int dcu_proc_ended(pid_t pid);

/* 1 if this process has initialised the CUDA driver (any CUDA call does):
 * a child it forks cannot use CUDA then. Asks the driver only when it is
 * loaded already, so it never loads or initialises CUDA itself. */
int dcu_proc_cuda_initialised(void);

#endif /* DCU_UTIL_PROC_H */
