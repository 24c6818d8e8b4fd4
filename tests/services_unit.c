/*
 * The proxy's table of services (src/proxy/service.h) against the wire
 * types and commands it must cover: every wire type is received by
 * exactly the service this test names for it, every command but PING is
 * executed by exactly the one named, every service that claims commands
 * can execute them, and the table's own check agrees. dcuda_test_services.
 */
#include <stdio.h>
#include <string.h>

#include "proxy/service.h"

static const struct {
    unsigned n;
    const char *service;
} messages[] = {
    { DCU_WIRE_PUT, "rma" },           { DCU_WIRE_NOTIFY, "rma" },
    { DCU_WIRE_ABORT, "control" },     { DCU_WIRE_LEFT, "control" },
    { DCU_WIRE_PROBE, "detector" },    { DCU_WIRE_REPLY, "detector" },
    { DCU_WIRE_FOUND, "detector" },    { DCU_WIRE_ROUND, "barrier" },
    { DCU_WIRE_ACK, "barrier" },       { DCU_WIRE_PART_ASK, "parts" },
    { DCU_WIRE_PART, "parts" },        { DCU_WIRE_BEAT, "beats" },
    { DCU_WIRE_GET, "bulk" },          { DCU_WIRE_HOST_PUT, "host" },
    { DCU_WIRE_HOST_GET, "host" },     { DCU_WIRE_HOST_DATA, "host" },
    { DCU_WIRE_HOST_DONE, "host" },    { DCU_WIRE_ATOMIC, "atomics" },
    { DCU_WIRE_ATOMIC_DONE, "atomics" },
}, commands[] = {
    { DCUDA_CMD_PUT, "rma" },      { DCUDA_CMD_NOTIFY, "rma" },  { DCUDA_CMD_BARRIER, "barrier" },
    { DCUDA_CMD_PUT_READ, "bulk" }, { DCUDA_CMD_PART, "parts" }, { DCUDA_CMD_GET, "bulk" },
    { DCUDA_CMD_FENCE, "fence" },  { DCUDA_CMD_WINDOW, "parts" }, { DCUDA_CMD_ATOMIC, "atomics" },
};

/* The names of the services whose set (messages: which 0; commands: 1)
 * holds bit n, apart by spaces, into out; how many. */
static int owners(unsigned n, int which, char *out, size_t size)
{
    int count, k = 0;
    const dcu_proxy_service_t *const *s = dcu_proxy_services(&count);
    out[0] = '\0';
    for (int i = 0; i < count; i++)
        if ((which ? s[i]->commands : s[i]->messages) & DCU_SVC_BIT(n)) {
            snprintf(out + strlen(out), size - strlen(out), "%s%s", k ? " " : "", s[i]->name);
            k++;
        }
    return k;
}

static int expect(const char *what, unsigned n, int which, const char *service)
{
    char names[256];
    owners(n, which, names, sizeof names);
    if (strcmp(names, service) != 0) {
        printf("FAIL: %s %u is handled by '%s', expected '%s'\n", what, n, names, service);
        return 1;
    }
    return 0;
}

int main(void)
{
    int failed = 0, count;
    unsigned covered = 0, ops = 0;
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++) {
        failed += expect("wire type", messages[i].n, 0, messages[i].service);
        covered |= DCU_SVC_BIT(messages[i].n);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        failed += expect("command", commands[i].n, 1, commands[i].service);
        ops |= DCU_SVC_BIT(commands[i].n);
    }
    char names[256], why[256];
    for (unsigned n = 0; n < 32; n++) {
        if (!(covered & DCU_SVC_BIT(n)))
            failed += expect("wire type", n, 0, "");
        if (!(ops & DCU_SVC_BIT(n)))
            failed += expect("command", n, 1, ""); /* PING is the core's */
    }
    const dcu_proxy_service_t *const *s = dcu_proxy_services(&count);
    for (int i = 0; i < count; i++) {
        if (s[i]->commands && !s[i]->on_command) {
            printf("FAIL: service %s claims commands and cannot execute them\n", s[i]->name);
            failed++;
        }
        if (owners(0, 0, names, sizeof names) != 0 || !s[i]->name) {
            printf("FAIL: a service without a name, or one claiming wire type 0\n");
            failed++;
        }
    }
    if (dcu_proxy_services_check(why, sizeof why) != 0) {
        printf("FAIL: the table's own check: %s\n", why);
        failed++;
    }
    printf("%s: %d services, %zu wire types, %zu commands\n", failed ? "FAILED" : "PASSED", count,
           sizeof messages / sizeof messages[0], sizeof commands / sizeof commands[0]);
    return failed != 0;
}
