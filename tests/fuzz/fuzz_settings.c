/*
 * Fuzz harness of the settings loader (src/core/settings.h), which reads
 * DCUDA_* environment variables and --dcuda-* arguments.
 *
 * Input: pieces separated by NUL bytes; a piece's first byte says what its
 * text becomes: an argument as is or after "--dcuda-", an environment
 * entry as is or after "DCUDA_", or a NULL argument. The loader sees only
 * these: the harness points `environ` at its own entries during the call
 * and back afterwards, so nothing of one input stays for the next.
 *
 * Checked against this file's own reading of the settings table (README, settings.h):
 * the loader accepts exactly when every DCUDA_* entry that names a setting
 * and every --dcuda-* argument can be read as its type and the results lie
 * in the table's bounds; what it accepts is the value of the last word on
 * each setting (arguments over the environment), numbers to the unit; it
 * says one error when it refuses and none otherwise, warns once per
 * unknown DCUDA_* name, and leaves its output and its input alone when it
 * refuses.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/settings.h"
#include "dcuda/dcuda_host.h"
#include "fuzz.h"
#include "util/msg.h"

extern char **environ;

const char fuzz_name[] = "settings";
const unsigned fuzz_replay_rounds = 80000;
/* clang-format off */
const char *const fuzz_tokens[] = {
    "\002RANKS=", "\003ranks=", "\006PROCESSES=", "\006WATCHDOG=", "\002watchdog-cancel=",
    "\006LOG_ENTRIES=", "\002log-entries=", "\006NOTIF_START=", "\002notif-start=", "\006NET=",
    "\002net-force=", "\002net-loopback=", "\006VERBOSE=", "\002backend=", "\006BACKEND=", "\002on-error=",
    "\006ON_ERROR=", "abort", "continue", "--dcuda-", "--dcuda_",
    "--DCUDA-", "DCUDA_", "0x", "0X", "off", "OFF", "inf", "nan", "1e9", "1e-400", "1e999", "cpu",
    "cuda", "auto", "mpi", "ucx", "none", "-", "+", " ", "\t", "16", "1024", "1048576", "4294967295",
    "4294967296", "18446744073709551615", "9223372036854775807", "9223372036854775808", NULL
};
/* clang-format on */

#define MAX_PIECES 32

/* ---- the settings table, as the README states it --------------------------------- */

enum ref_type { REF_INT, REF_UINT, REF_BOOL, REF_DOUBLE, REF_STRING };

typedef struct ref_setting {
    const char *name;
    enum ref_type type;
    const char *def;
    size_t offset; /* in dcuda_settings_t */
    size_t size;   /* of a string's field: its longest value is one less */
} ref_setting_t;

enum {
    S_BACKEND,
    S_RANKS,
    S_PROCESSES,
    S_WATCHDOG,
    S_LOG_ENTRIES,
    S_NOTIF_START,
    S_NET,
    S_ON_ERROR,
    S_NET_CREDIT,
    S_NET_INBOX_MAX,
    S_PROXY_LANES,
    S_LOG_LEVEL
};

/* clang-format off */
#define REF_(field, NAME, type, def)                                                           \
    { #NAME, REF_##type, def, offsetof(dcuda_settings_t, field),                              \
      sizeof(((dcuda_settings_t *)0)->field) }
/* clang-format on */
static const ref_setting_t table[] = {
    [S_BACKEND] = REF_(backend, BACKEND, STRING, "auto"),
    [S_RANKS] = REF_(ranks, RANKS, INT, "0"),
    [S_PROCESSES] = REF_(processes, PROCESSES, INT, "0"),
    [S_WATCHDOG] = REF_(watchdog, WATCHDOG, DOUBLE, "10"),
    [S_LOG_ENTRIES] = REF_(log_entries, LOG_ENTRIES, INT, "1024"),
    [S_NOTIF_START] = REF_(notif_start, NOTIF_START, UINT, "0"),
    [S_NET] = REF_(net, NET, STRING, "auto"),
    [S_ON_ERROR] = REF_(on_error, ON_ERROR, STRING, "abort"),
    [S_NET_CREDIT] = REF_(net_credit, NET_CREDIT, UINT, "4194304"),
    [S_NET_INBOX_MAX] = REF_(net_inbox_max, NET_INBOX_MAX, UINT, "12288"),
    [S_PROXY_LANES] = REF_(proxy_lanes, PROXY_LANES, INT, "1"),
    [S_LOG_LEVEL] = REF_(log_level, LOG_LEVEL, STRING, "warn"),
    REF_(watchdog_cancel, WATCHDOG_CANCEL, BOOL, "0"),
    REF_(net_if, NET_IF, STRING, ""),
    REF_(net_force, NET_FORCE, BOOL, "0"),
    REF_(net_loopback, NET_LOOPBACK, BOOL, "0"),
    REF_(deadlock, DEADLOCK, BOOL, "1"),
    REF_(node_reads, NODE_READS, BOOL, "1"),
    REF_(verbose, VERBOSE, BOOL, "0"),
    REF_(log_file, LOG_FILE, STRING, ""),
};
#undef REF_
#define TABLE_SIZE (sizeof table / sizeof table[0])

typedef union ref_value {
    long l;
    unsigned long u;
    double d;
    char s[256];
} ref_value_t;

/* The setting a name (len bytes, case-blind, '-' for '_') names, or -1. */
static int ref_find(const char *name, size_t len)
{
    for (size_t i = 0; i < TABLE_SIZE; i++) {
        size_t k = 0;
        if (strlen(table[i].name) != len)
            continue;
        for (; k < len; k++) {
            char c = name[k] == '-' ? '_' : name[k];
            if (c >= 'a' && c <= 'z')
                c = (char)(c - 'a' + 'A');
            if (c != table[i].name[k])
                break;
        }
        if (k == len)
            return (int)i;
    }
    return -1;
}

static int ref_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int ref_digit(char c, int base)
{
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : 99;
    return d < base ? d : -1;
}

/* An integer: blanks, a sign, then decimal digits or (hex_ok) 0x and hex
 * digits, nothing after. Its sign and magnitude; 0 if not one, or above
 * 2^64 - 1. */
static int ref_number(const char *t, int hex_ok, int *neg, uint64_t *mag)
{
    int base = 10;
    while (ref_space(*t))
        t++;
    *neg = *t == '-';
    t += *t == '-' || *t == '+';
    if (hex_ok && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
        base = 16;
        t += 2;
    }
    if (!*t)
        return 0;
    for (*mag = 0; *t; t++) {
        int d = ref_digit(*t, base);
        if (d < 0 || *mag > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return 0;
        *mag = *mag * (uint64_t)base + (uint64_t)d;
    }
    return 1;
}

/* A long from ref_number's result, if it fits. */
static int ref_long(int neg, uint64_t mag, long *out)
{
    if (mag > (uint64_t)LONG_MAX + (uint64_t)neg)
        return 0;
    *out = neg ? (long)(0u - mag) : (long)mag;
    return 1;
}

/* Text read as setting i's type; 0 if it cannot be. */
static int ref_parse(int i, const char *text, ref_value_t *v)
{
    int neg = 0;
    uint64_t mag = 0;
    char *end = NULL;
    switch (table[i].type) {
    case REF_INT:
        return ref_number(text, 1, &neg, &mag) && ref_long(neg, mag, &v->l);
    case REF_BOOL:
        return ref_number(text, 0, &neg, &mag) && ref_long(neg, mag, &v->l) &&
               (v->l == 0 || v->l == 1);
    case REF_UINT: /* no minus sign, even before a zero */
        if (!ref_number(text, 1, &neg, &mag) || neg)
            return 0;
        v->u = (unsigned long)mag;
        return 1;
    case REF_DOUBLE:
        if (strcasecmp(text, "off") == 0) {
            v->d = 0.0;
            return 1;
        }
        errno = 0;
        v->d = strtod(text, &end);
        return end != text && *end == '\0' && errno == 0;
    default:
        if (strlen(text) >= table[i].size || strlen(text) >= sizeof v->s)
            return 0;
        memset(v->s, 0, sizeof v->s);
        strcpy(v->s, text);
        return 1;
    }
}

static int one_of(const char *s, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(s, *names) == 0)
            return 1;
    return 0;
}

/* The table's bounds on the values v[] (indexed as the table); the value
 * WATCHDOG keeps (above 1e9: 0, never) is written back. */
static int ref_bounds(ref_value_t v[TABLE_SIZE])
{
    static const char *const backends[] = { "auto", "cpu", "cuda", NULL };
    static const char *const nets[] = { "auto", "mpi", "ucx", "none", NULL };
    static const char *const on_error[] = { "abort", "continue", NULL };
    static const char *const levels[] = { "error", "warn", "info", "debug", NULL };
    long ranks = v[S_RANKS].l, procs = v[S_PROCESSES].l, log = v[S_LOG_ENTRIES].l;
    if (!(v[S_WATCHDOG].d >= 0))
        return 0;
    if (v[S_WATCHDOG].d > 1e9)
        v[S_WATCHDOG].d = 0;
    return one_of(v[S_BACKEND].s, backends) && ranks >= 0 && ranks <= (1L << 20) && procs >= 0 &&
           procs <= (1L << 24) && log >= 16 && log <= (1L << 20) && (log & (log - 1)) == 0 &&
           v[S_NOTIF_START].u <= 0xffffffffUL && v[S_NET_CREDIT].u >= 4096 &&
           v[S_NET_CREDIT].u <= 0x100000000UL && v[S_NET_INBOX_MAX].u >= 4096 &&
           v[S_NET_INBOX_MAX].u <= 1048576 && v[S_PROXY_LANES].l >= 1 && v[S_PROXY_LANES].l <= 16 &&
           one_of(v[S_NET].s, nets) && one_of(v[S_ON_ERROR].s, on_error) &&
           one_of(v[S_LOG_LEVEL].s, levels);
}

/* ---- the reference loader -------------------------------------------------------- */

typedef struct ref_result {
    int ok;
    ref_value_t v[TABLE_SIZE];
    int warnings; /* unknown DCUDA_* names */
} ref_result_t;

/* A DCUDA_* entry or --dcuda-* argument's "name=value": its setting's
 * value from it; 0 if it names none or its value cannot be read. */
static int ref_assign(const char *name_value, ref_result_t *r, int *unknown)
{
    const char *eq = strchr(name_value, '=');
    int i = eq ? ref_find(name_value, (size_t)(eq - name_value)) : -1;
    *unknown = i < 0;
    return i >= 0 && ref_parse(i, eq + 1, &r->v[i]);
}

/* The variables that start processes without a launcher, which
 * docs/clusters.md names: the bootstrap reads them, so the settings'
 * loader neither reads nor warns of them (name: after DCUDA_). */
static int ref_launch_variable(const char *name, size_t len)
{
    static const char *const names[] = { "BOOT",         "BOOT_ADDR",     "BOOT_PORT",
                                         "BOOT_TIMEOUT", "PROCESS_INDEX", "PLUGIN_PATH" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return 1;
    return 0;
}

static void ref_load(char **env, int argc, char **argv, ref_result_t *r)
{
    int unknown = 0;
    memset(r, 0, sizeof *r);
    r->ok = 1;
    for (size_t i = 0; i < TABLE_SIZE; i++)
        ref_parse((int)i, table[i].def, &r->v[i]);
    for (char **e = env; *e; e++) {
        if (strncmp(*e, "DCUDA_", 6) != 0 || !strchr(*e, '='))
            continue; /* not ours, or no value */
        if (ref_launch_variable(*e + 6, (size_t)(strchr(*e, '=') - (*e + 6))))
            continue; /* the bootstrap's */
        if (!ref_assign(*e + 6, r, &unknown) && !unknown)
            r->ok = 0;
        r->warnings += unknown;
    }
    for (int a = 1; a < argc && argv; a++) {
        /* Meant for dcuda: --dcuda- or --dcuda_ in any case; only
         * --dcuda-<setting>=<value> is right. */
        if (!argv[a] || strncasecmp(argv[a], "--dcuda", 7) != 0 ||
            (argv[a][7] != '-' && argv[a][7] != '_'))
            continue;
        if (strncmp(argv[a], "--dcuda-", 8) != 0 || !ref_assign(argv[a] + 8, r, &unknown))
            r->ok = 0;
    }
    r->ok = r->ok && ref_bounds(r->v);
}

/* ---- the input ------------------------------------------------------------------- */

typedef struct built {
    char *text;                 /* every string, NUL-terminated */
    size_t used;                /* bytes of text */
    char *env[MAX_PIECES + 1];  /* NULL-terminated */
    char *argv[MAX_PIECES + 2]; /* argv[0] is the program */
    int argc;
} built_t;

/* Pieces to strings. A piece's first byte, modulo 8: 0, 1 an argument as
 * is; 2, 3 an argument after "--dcuda-"; 4, 5 an environment entry as is;
 * 6 one after "DCUDA_"; 7 a NULL argument. At most MAX_PIECES pieces. */
static void build_input(const uint8_t *data, size_t size, built_t *b)
{
    static const char *const prefix[] = { "", "", "--dcuda-", "--dcuda-", "", "", "DCUDA_", "" };
    size_t room = size + MAX_PIECES * 9 + 8, at = 0;
    int nenv = 0;
    b->text = malloc(room);
    FUZZ_CHECK(b->text != NULL, "out of memory");
    b->argv[0] = strcpy(b->text, "prog");
    at = 5;
    b->argc = 1;
    for (size_t i = 0; i < size && nenv + b->argc <= MAX_PIECES;) {
        const uint8_t *end = memchr(data + i, 0, size - i);
        size_t len = end ? (size_t)(end - (data + i)) : size - i;
        if (len > 0) {
            unsigned kind = data[i] & 7u;
            char *s = b->text + at;
            at += (size_t)sprintf(s, "%s", prefix[kind]);
            memcpy(b->text + at, data + i + 1, len - 1);
            at += len - 1;
            b->text[at++] = '\0';
            if (kind == 7)
                b->argv[b->argc++] = NULL;
            else if (kind >= 4)
                b->env[nenv++] = s;
            else
                b->argv[b->argc++] = s;
        }
        i += len + 1;
    }
    b->env[nenv] = NULL;
    b->argv[b->argc] = NULL;
    b->used = at;
}

/* ---- checking ----------------------------------------------------------------------- */

typedef struct said {
    int errors, warnings;
} said_t;

static void count_line(void *arg, const char *line)
{
    said_t *s = arg;
    s->errors += strncmp(line, "dcuda: error: ", 14) == 0;
    s->warnings += strncmp(line, "dcuda: warning: ", 16) == 0;
}

static void check_value(int i, const dcuda_settings_t *got, const ref_value_t *want)
{
    const char *field = (const char *)got + table[i].offset;
    long l;
    unsigned long u;
    double d;
    switch (table[i].type) {
    case REF_INT:
    case REF_BOOL:
        memcpy(&l, field, sizeof l);
        FUZZ_CHECK(l == want->l, "%s is %ld, expected %ld", table[i].name, l, want->l);
        break;
    case REF_UINT:
        memcpy(&u, field, sizeof u);
        FUZZ_CHECK(u == want->u, "%s is %lu, expected %lu", table[i].name, u, want->u);
        break;
    case REF_DOUBLE:
        memcpy(&d, field, sizeof d);
        FUZZ_CHECK(d == want->d, "%s is %g, expected %g", table[i].name, d, want->d);
        break;
    default:
        FUZZ_CHECK(strcmp(field, want->s) == 0, "%s is '%s', expected '%s'", table[i].name, field,
                   want->s);
    }
}

/* Once: the library's table names the settings this file's does. */
static void check_table(void)
{
    static int done;
    char *listing = NULL, *line;
    size_t len = 0;
    int named = 0;
    if (done++)
        return;
    FILE *f = open_memstream(&listing, &len);
    FUZZ_CHECK(f != NULL, "open_memstream");
    dcuda_settings_print(f);
    fclose(f);
    for (line = strstr(listing, "\nDCUDA_"); line; line = strstr(line + 1, "\nDCUDA_")) {
        size_t n = strcspn(line + 7, " ");
        FUZZ_CHECK(ref_find(line + 7, n) >= 0, "the library has a setting this harness lacks: %.*s",
                   (int)n, line + 7);
        named++;
    }
    FUZZ_CHECK(named == (int)TABLE_SIZE, "the library lists %d settings, this harness %d", named,
               (int)TABLE_SIZE);
    free(listing);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    built_t b;
    ref_result_t want;
    dcuda_settings_t got;
    said_t said = { 0, 0 };
    check_table();
    build_input(data, size, &b);
    char *pristine = malloc(b.used);
    FUZZ_CHECK(pristine != NULL, "out of memory");
    memcpy(pristine, b.text, b.used);
    ref_load(b.env, b.argc, b.argv, &want);

    char **saved = environ;
    memset(&got, 0x5a, sizeof got);
    dcu_msg_set_sink(count_line, &said);
    environ = b.env;
    int argc = b.argc > 1 ? b.argc : 0; /* no arguments: argc 0 and argv NULL */
    dcuda_status_t st = dcu_settings_load(argc, argc ? b.argv : NULL, &got);
    FUZZ_CHECK(environ == b.env, "the loader changed environ");
    environ = saved;
    dcu_msg_set_sink(NULL, NULL);

    FUZZ_CHECK((st == DCUDA_OK) == want.ok, "the loader %s what this harness %s (%d error lines)",
               st == DCUDA_OK ? "accepts" : "refuses", want.ok ? "accepts" : "refuses",
               said.errors);
    FUZZ_CHECK(memcmp(pristine, b.text, b.used) == 0,
               "the loader wrote into its arguments or environment");
    if (st == DCUDA_OK) {
        for (size_t i = 0; i < TABLE_SIZE; i++)
            check_value((int)i, &got, &want.v[i]);
        FUZZ_CHECK(said.errors == 0 && said.warnings == want.warnings,
                   "accepted with %d error and %d warning lines, expected 0 and %d", said.errors,
                   said.warnings, want.warnings);
    } else {
        unsigned char *raw = (unsigned char *)&got;
        FUZZ_CHECK(st == DCUDA_ERR_SETTING, "a refusal returns %d", st);
        FUZZ_CHECK(said.errors == 1, "refused with %d error lines", said.errors);
        for (size_t i = 0; i < sizeof got; i++)
            FUZZ_CHECK(raw[i] == 0x5a, "a refusal wrote its output (byte %zu)", i);
    }
    free(pristine);
    free(b.text);
    return 0;
}

/* ---- seeds -------------------------------------------------------------------------- */

/* Pieces: a kind byte (see build_input; 8 for 0) and its text each, NUL
 * between. */
static void emit_pieces(fuzz_emit_fn emit, void *arg, const char *const *pieces)
{
    char buf[512];
    size_t n = 0;
    for (; *pieces; pieces++) {
        size_t len = strlen(*pieces);
        memcpy(buf + n, *pieces, len + 1);
        n += len + 1;
    }
    emit(arg, buf, n ? n - 1 : 0);
}

void fuzz_seeds(fuzz_emit_fn emit, void *arg)
{
    static const char *const s0[] = { "\006RANKS=4", "\002watchdog=off", "\002on-error=continue",
                                      NULL };
    static const char *const s1[] = { "\002backend=cpu", "\002log-entries=0x100",
                                      "\002notif-start=4294967295", "\010plain", NULL };
    static const char *const s2[] = { "\004"
                                      "DCUDA_NET=ucx",
                                      "\006NET_FORCE=1",
                                      "\006NET_LOOPBACK=0",
                                      "\006verbose=0",
                                      "\001-x",
                                      "\007",
                                      NULL };
    static const char *const s3[] = { "\006WATCHDOG=2.5", "\006RANK=3", "\006PROCESSES=65",
                                      "\006WATCHDOG_CANCEL=+1", NULL };
    static const char *const s4[] = { "\010--dcuda_ranks=3", "\006LOG_ENTRIES=1000", NULL };
    /* Blanks before a number's 0x, and before a minus that an unsigned
     * setting refuses (both once read wrongly). */
    static const char *const s5[] = { "\002ranks= 0x10", "\006NOTIF_START=\t7", NULL };
    static const char *const s6[] = { "\002notif-start= -18446744073709551615", NULL };
    /* The bootstrap's variables beside settings and a misspelt one (the
     * loader warns of the last alone; the model once warned of all). */
    static const char *const s7[] = { "\006BOOT_ADDR=127.0.0.1:5000", "\006PROCESS_INDEX=1",
                                      "\006PLUGIN_PATH=", "\006BOOT_ADR=1", NULL };
    static const char *const *const all[] = { s0, s1, s2, s3, s4, s5, s6, s7 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        emit_pieces(emit, arg, all[i]);
}
