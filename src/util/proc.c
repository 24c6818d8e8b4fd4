/*
 * Other processes: whether one has ended, read from /proc/<pid>/stat.
 */
#include "proc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int dcu_proc_ended(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re"); /* close-on-exec */
    if (!f)
        return errno == ENOENT || errno == ESRCH;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    /* "pid (name) S ...": the state follows the last parenthesis. */
    const char *close_paren = strrchr(text, ')');
    return close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}
