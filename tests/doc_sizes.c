/*
 * The sizes docs/architecture.md states are the sizes the layouts have:
 * every table row of its "Shared layouts and sizes" that names structs in
 * backquotes and gives their sizes (comma-separated, thousands with a
 * comma) must match sizeof, struct by struct. A struct of shared/layout.h
 * missing from the page fails too, so a new layout is documented.
 *
 *   dcuda_test_doc_sizes <docs/architecture.md>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_rank.h"
#include "dcuda/shared/layout.h"

#define SIZE_OF(t)                                                                                 \
    {                                                                                              \
#t, sizeof(t), 0                                                                           \
    }
static struct {
    const char *name;
    size_t size;
    int seen;
} known[] = {
    SIZE_OF(dcuda_state_t),        SIZE_OF(dcuda_context_t),        SIZE_OF(dcuda_put_route_t),
    SIZE_OF(dcuda_comm_info_t),    SIZE_OF(dcuda_notif_counters_t), SIZE_OF(dcuda_to_host_t),
    SIZE_OF(dcuda_barrier_t),      SIZE_OF(dcuda_node_slot_t),      SIZE_OF(dcuda_rank_status_t),
    SIZE_OF(dcuda_error_record_t), SIZE_OF(dcuda_peer_t),           SIZE_OF(dcuda_segment_t),
    SIZE_OF(dcuda_lib_part_t),     SIZE_OF(dcuda_log_entry_t),      SIZE_OF(dcuda_cmd_t),
    SIZE_OF(dcuda_cmd_reply_t),    SIZE_OF(dcuda_inbox_entry_t),
};
#define KNOWN (sizeof known / sizeof known[0])

static int failures;

/* The sizes of a cell "2,704" or "64, 40": the next number at *p. */
static int next_size(const char **p, size_t *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == ',')
        s++;
    if (*s < '0' || *s > '9')
        return 0;
    size_t v = 0;
    while ((*s >= '0' && *s <= '9') ||
           (*s == ',' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' && s[3] >= '0' &&
            s[3] <= '9' && (s[4] < '0' || s[4] > '9'))) {
        if (*s != ',')
            v = v * 10 + (size_t)(*s - '0');
        s++;
    }
    *p = s;
    *out = v;
    return 1;
}

static void check_row(const char *line)
{
    const char *names = line + 1, *bar = strchr(names, '|');
    if (!bar || !strchr(names, '`') || strchr(names, '`') > bar)
        return;
    const char *sizes = bar + 1;
    const char *n = names;
    for (;;) {
        const char *open = strchr(n, '`');
        if (!open || open > bar)
            break;
        const char *close = strchr(open + 1, '`');
        if (!close || close > bar)
            break;
        size_t len = (size_t)(close - open - 1), stated = 0;
        if (!next_size(&sizes, &stated)) {
            printf("FAIL: no size stated for %.*s\n", (int)len, open + 1);
            failures++;
        }
        for (size_t i = 0; i < KNOWN; i++)
            if (strlen(known[i].name) == len && strncmp(known[i].name, open + 1, len) == 0) {
                known[i].seen = 1;
                if (known[i].size != stated) {
                    printf("FAIL: the page says %s is %zu bytes; it is %zu\n", known[i].name,
                           stated, known[i].size);
                    failures++;
                }
            }
        n = close + 1;
    }
}

int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
    if (!f) {
        printf("usage: %s docs/architecture.md\n", argv[0]);
        return 2;
    }
    char line[4096];
    int in_sizes = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "## ", 3) == 0)
            in_sizes = strstr(line, "sizes") != NULL;
        else if (in_sizes && line[0] == '|')
            check_row(line);
    }
    fclose(f);
    for (size_t i = 0; i < KNOWN; i++)
        if (!known[i].seen) {
            printf("FAIL: the page states no size for %s (%zu bytes)\n", known[i].name,
                   known[i].size);
            failures++;
        }
    printf("%s: %zu layouts checked against the page\n", failures ? "FAILED" : "PASSED", KNOWN);
    return failures ? 1 : 0;
}
