/*
 * dcuda_info: what the dcuda library it runs with is: its version and the
 * commit it was built from, its build configuration (backends, network
 * managers, CUDA, MPI and UCX versions), which backends can run ranks on
 * this machine (and why the others cannot), which plugins (MPI's, UCX's)
 * load and from where (or why not), its limits, and every setting
 * (environment variable) with its default, current value and meaning. As
 * text, or as one JSON object (--json).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"

static const char *const backends[] = { "cuda", "cpu" };
#define BACKEND_COUNT (sizeof backends / sizeof backends[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: dcuda_info [--json | --version | --help]\n"
                 "  (none)     the library's version, build, backends here, limits and settings\n"
                 "  --json     the same as one JSON object\n"
                 "  --version  the version and what it was built from, one line\n"
                 "  -h, --help this text\n");
}

/* ---- text --------------------------------------------------------------- */

static void print_text(void)
{
    printf("dcuda %s, layout version %u\n", dcuda_version_string(), DCUDA_LAYOUT_VERSION);
    printf("build:\n");
    for (int i = 0; dcuda_build_info_key(i); i++)
        printf("  %-19s %s\n", dcuda_build_info_key(i), dcuda_build_info(dcuda_build_info_key(i)));
    for (size_t i = 0; i < BACKEND_COUNT; i++) {
        char why[256] = "";
        int can = dcuda_host_backend_available(backends[i], why, sizeof why);
        printf("backend %-4s here: %s%s%s\n", backends[i], can ? "can run" : "cannot run",
               can ? "" : ": ", can ? "" : why);
    }
    for (int i = 0; dcuda_plugin_name(i); i++)
        printf("plugin %-4s: %s\n", dcuda_plugin_name(i),
               dcuda_plugin_status(dcuda_plugin_name(i)));
    printf("limits: %d tags, %d live windows on WORLD and on DEVICE, %d on NODE and on each "
           "split, %d timers per run, rank state %zu bytes\n\n",
           DCUDA_TAG_COUNT, DCUDA_MAX_WINDOWS, DCUDA_COMM_WINDOWS, DCUDA_MAX_TIMERS,
           sizeof(dcuda_state_t));
    dcuda_settings_print(stdout);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_string(const char *s)
{
    if (!s) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void json_member(const char *key, const char *value, int last)
{
    printf("    ");
    json_string(key);
    printf(": ");
    json_string(value);
    printf("%s\n", last ? "" : ",");
}

static void print_json_settings(void)
{
    printf("  \"settings\": [\n");
    const char *name, *type, *def, *meaning;
    for (int i = 0; dcuda_setting_describe(i, &name, &type, &def, &meaning); i++) {
        char var[64];
        snprintf(var, sizeof var, "DCUDA_%s", name);
        printf("    {\"variable\": ");
        json_string(var);
        printf(", \"type\": ");
        json_string(type);
        printf(", \"default\": ");
        json_string(def);
        printf(", \"value\": ");
        json_string(getenv(var));
        printf(", \"meaning\": ");
        json_string(meaning);
        printf("}%s\n", dcuda_setting_describe(i + 1, NULL, NULL, NULL, NULL) ? "," : "");
    }
    printf("  ]\n");
}

static void print_json(void)
{
    printf("{\n  \"version_string\": ");
    json_string(dcuda_version_string());
    printf(",\n  \"layout_version\": %u,\n  \"build\": {\n", DCUDA_LAYOUT_VERSION);
    for (int i = 0; dcuda_build_info_key(i); i++)
        json_member(dcuda_build_info_key(i), dcuda_build_info(dcuda_build_info_key(i)),
                    !dcuda_build_info_key(i + 1));
    printf("  },\n  \"backends_here\": [\n");
    for (size_t i = 0; i < BACKEND_COUNT; i++) {
        char why[256] = "";
        int can = dcuda_host_backend_available(backends[i], why, sizeof why);
        printf("    {\"backend\": ");
        json_string(backends[i]);
        printf(", \"can_run\": %s, \"why_not\": ", can ? "true" : "false");
        json_string(can ? NULL : why);
        printf("}%s\n", i + 1 < BACKEND_COUNT ? "," : "");
    }
    printf("  ],\n  \"plugins\": {\n");
    for (int i = 0; dcuda_plugin_name(i); i++)
        json_member(dcuda_plugin_name(i), dcuda_plugin_status(dcuda_plugin_name(i)),
                    !dcuda_plugin_name(i + 1));
    printf("  },\n  \"limits\": {\"tags\": %d, \"live_windows_per_communicator\": %d, "
           "\"live_windows_per_split\": %d, \"timers_per_run\": %d, "
           "\"rank_state_bytes\": %zu},\n",
           DCUDA_TAG_COUNT, DCUDA_MAX_WINDOWS, DCUDA_COMM_WINDOWS, DCUDA_MAX_TIMERS,
           sizeof(dcuda_state_t));
    print_json_settings();
    printf("}\n");
}

int main(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("dcuda %s\n", dcuda_version_string());
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "dcuda_info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (json)
        print_json();
    else
        print_text();
    return 0;
}
