/*
 * Other processes: whether one has ended.
 */
#ifndef DCU_UTIL_PROC_H
#define DCU_UTIL_PROC_H

#include <sys/types.h>

/* 1 if pid has ended or is a zombie (ended, not yet reaped). */
int dcu_proc_ended(pid_t pid);

#endif /* DCU_UTIL_PROC_H */
