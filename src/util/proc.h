/*
 * Processes: whether another one has ended, whether this one has
 * initialised CUDA (then it must not fork processes that use CUDA), and
 * whether the calling thread is the process's first (a child forked from
 * another thread holds that thread alone).
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

/* 1 if the calling thread is the one that started the process (main's). */
int dcu_proc_on_main_thread(void);

/* The cores this process may run on (its affinity: mpirun binds a process
 * of a small job to one core by default); 0 when unknown. */
int dcu_proc_cores(void);

#endif /* DCU_UTIL_PROC_H */
