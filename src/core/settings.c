/*
 * Settings table: parsing of DCUDA_* environment variables and --dcuda-*
 * arguments, validation, and the listing printed by dcuda_settings_print.
 */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bootstrap/boot.h"
#include "dcuda/dcuda_host.h"
#include "dcuda/shared/layout.h"
#include "net/net.h"
#include "util/msg.h"

typedef enum { SET_INT, SET_UINT, SET_BOOL, SET_DOUBLE, SET_STRING } setting_type_t;

typedef struct setting_desc {
    const char *name; /* upper case, without the DCUDA_ prefix */
    setting_type_t type;
    const char *def;
    const char *desc;
    size_t offset;
    size_t size;
} setting_desc_t;

#define SETTING_DESC_(field, NAME, type, def, desc)                                                \
    { #NAME,                                                                                       \
      SET_##type,                                                                                  \
      def,                                                                                         \
      desc,                                                                                        \
      offsetof(dcuda_settings_t, field),                                                           \
      sizeof(((dcuda_settings_t *)0)->field) },
static const setting_desc_t settings_table[] = { DCUDA_SETTINGS_MAP(SETTING_DESC_) };
#undef SETTING_DESC_
#define SETTINGS_COUNT (sizeof(settings_table) / sizeof(settings_table[0]))

static const char *type_name(setting_type_t t)
{
    switch (t) {
    case SET_INT:
        return "int";
    case SET_UINT:
        return "uint";
    case SET_BOOL:
        return "0 or 1";
    case SET_DOUBLE:
        return "double";
    default:
        return "string";
    }
}

/* Blanks before a number are skipped (as strtol and strtod do), before
 * its sign and its 0x too. */
static const char *skip_blanks(const char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    return text;
}

/* Integers are decimal (a leading 0 is no octal prefix); 0x starts a
 * hexadecimal one. */
static int int_base(const char *text)
{
    const char *t = skip_blanks(text);
    t += t[0] == '-' || t[0] == '+';
    return t[0] == '0' && (t[1] == 'x' || t[1] == 'X') ? 16 : 10;
}

static dcuda_status_t parse_value(const setting_desc_t *d, const char *text, const char *origin,
                                  dcuda_settings_t *s)
{
    char *end = NULL;
    void *field = (char *)s + d->offset;
    errno = 0;
    switch (d->type) {
    case SET_INT:
        *(long *)field = strtol(text, &end, int_base(text));
        break;
    case SET_BOOL:
        *(long *)field = strtol(text, &end, 10);
        if (*(long *)field != 0 && *(long *)field != 1)
            goto bad;
        break;
    case SET_UINT:
        if (*skip_blanks(text) == '-') /* strtoul would negate it */
            goto bad;
        *(unsigned long *)field = strtoul(text, &end, int_base(text));
        break;
    case SET_DOUBLE:
        if (strcasecmp(text, "off") == 0) { /* 0: "never" for the settings of this type */
            *(double *)field = 0.0;
            return DCUDA_OK;
        }
        *(double *)field = strtod(text, &end);
        break;
    case SET_STRING:
        if (strlen(text) >= d->size)
            goto bad;
        strcpy((char *)field, text);
        return DCUDA_OK;
    }
    if (errno != 0 || end == text || *end != '\0')
        goto bad;
    return DCUDA_OK;
bad:
    dcu_msg_error("setting %s from %s: cannot read '%s' as %s", d->name, origin, text,
                  type_name(d->type));
    return DCUDA_ERR_SETTING;
}

#define SETTING_NAME_MAX 64

/* A name as the table spells it: upper case, '_' for '-'; 0 if too long. */
static int normalise(const char *name, size_t len, char norm[SETTING_NAME_MAX])
{
    if (len == 0 || len >= SETTING_NAME_MAX)
        return 0;
    for (size_t k = 0; k < len; k++)
        norm[k] = name[k] == '-' ? '_' : (char)toupper((unsigned char)name[k]);
    norm[len] = '\0';
    return 1;
}

/* Looks a name up case-blind, with '-' standing for '_'. */
static const setting_desc_t *find_setting(const char *name, size_t len)
{
    char norm[SETTING_NAME_MAX];
    if (!normalise(name, len, norm))
        return NULL;
    for (size_t i = 0; i < SETTINGS_COUNT; i++)
        if (strcmp(norm, settings_table[i].name) == 0)
            return &settings_table[i];
    return NULL;
}

/* Edits (insert, delete, replace a character) that turn a into b. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[SETTING_NAME_MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* The setting an unknown name was probably meant to be (at most two edits
 * away, and fewer than half its length), or NULL. */
static const setting_desc_t *closest_setting(const char *name, size_t len)
{
    char norm[SETTING_NAME_MAX];
    const setting_desc_t *best = NULL;
    size_t best_d = 3;
    if (!normalise(name, len, norm))
        return NULL;
    for (size_t i = 0; i < SETTINGS_COUNT; i++) {
        size_t d = edit_distance(norm, settings_table[i].name);
        if (d < best_d && 2 * d < strlen(settings_table[i].name)) {
            best = &settings_table[i];
            best_d = d;
        }
    }
    return best;
}

/* "--dcuda-<name>" in lower case with '-' for '_'. */
static void argument_name(const setting_desc_t *d, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "--dcuda-");
    for (const char *c = d->name; *c && n + 1 < size; c++)
        out[n++] = *c == '_' ? '-' : (char)tolower((unsigned char)*c);
    out[n < size ? n : size - 1] = '\0';
}

/* The variables that are not settings: how the processes meet
 * (bootstrap/launch_env.c: they differ by process) and where the plugins
 * are (plugin/loader.c: read before any setting). */
static int launch_variable(const char *name, size_t len)
{
    static const char *const names[] = { "BOOT",         "BOOT_ADDR",     "BOOT_PORT",
                                         "BOOT_TIMEOUT", "PROCESS_INDEX", "PLUGIN_PATH" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0)
            return 1;
    return 0;
}

static dcuda_status_t load_environment(dcuda_settings_t *s)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "DCUDA_", 6) != 0)
            continue;
        const char *name = *e + 6, *eq = strchr(name, '=');
        if (!eq)
            continue;
        const setting_desc_t *d = find_setting(name, (size_t)(eq - name));
        if (!d && launch_variable(name, (size_t)(eq - name)))
            continue;
        if (!d) {
            const setting_desc_t *near = closest_setting(name, (size_t)(eq - name));
            dcu_msg_warn("unknown setting %.*s ignored%s%s%s (dcuda_info lists them)",
                         (int)(eq - *e), *e, near ? "; did you mean DCUDA_" : "",
                         near ? near->name : "", near ? "?" : "");
            continue;
        }
        dcuda_status_t st = parse_value(d, eq + 1, "the environment", s);
        if (st != DCUDA_OK)
            return st;
    }
    return DCUDA_OK;
}

/* An argument meant for dcuda but misspelt: --dcuda_<name>, --DCUDA-... */
static int near_miss_prefix(const char *a)
{
    return strncasecmp(a, "--dcuda", 7) == 0 && (a[7] == '-' || a[7] == '_') &&
           strncmp(a, "--dcuda-", 8) != 0;
}

/* The error for a --dcuda-* argument that names no setting, has no value,
 * or (prefix_wrong) is spelt --dcuda_<name> or the like. */
static dcuda_status_t bad_argument(const char *a, const setting_desc_t *d, int prefix_wrong)
{
    const char *name = a + 8, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const setting_desc_t *near = d ? d : closest_setting(name, len);
    char hint[SETTING_NAME_MAX + 16] = "";
    if (near)
        argument_name(near, hint, sizeof hint);
    if (prefix_wrong && d && eq)
        dcu_msg_error("argument %s: did you mean %s%s?", a, hint, eq);
    else
        dcu_msg_error("argument %s: %s (expected --dcuda-<setting>=<value>)%s%s%s", a,
                      d ? "missing value" : "unknown setting", near ? "; did you mean " : "", hint,
                      near ? "?" : "");
    return DCUDA_ERR_SETTING;
}

static dcuda_status_t load_arguments(int argc, char **argv, dcuda_settings_t *s)
{
    for (int i = 1; i < argc && argv; i++) {
        const char *a = argv[i];
        int near = a && near_miss_prefix(a);
        if (!a || (strncmp(a, "--dcuda-", 8) != 0 && !near))
            continue;
        const char *name = a + 8, *eq = strchr(name, '=');
        const setting_desc_t *d = find_setting(name, eq ? (size_t)(eq - name) : strlen(name));
        if (!d || !eq || near)
            return bad_argument(a, d, near);
        dcuda_status_t st = parse_value(d, eq + 1, "the command line", s);
        if (st != DCUDA_OK)
            return st;
    }
    return DCUDA_OK;
}

/* Bounds of the settings that have them. */
#define SETTING_RANKS_MAX (1L << 20)
/* Processes a WORLD of int ranks can number (no job-wide array holds them). */
#define SETTING_PROCESSES_MAX (1L << 24)
#define SETTING_LOG_ENTRIES_MIN 16L
#define SETTING_LOG_ENTRIES_MAX (1L << 20)
#define SETTING_NET_CREDIT_MIN 4096UL
#define SETTING_NET_CREDIT_MAX 0x100000000UL
#define SETTING_NET_INBOX_MIN 4096UL
#define SETTING_NET_INBOX_MAX 1048576UL

/* BACKEND's text into its choice: 0, or -1 for a name of none. */
static int parse_backend(dcuda_settings_t *s)
{
    s->backend_auto = strcmp(s->backend, "auto") == 0;
    if (strcmp(s->backend, "cpu") == 0)
        s->backend_kind = DCU_BACKEND_CPU;
    else if (strcmp(s->backend, "cuda") == 0)
        s->backend_kind = DCU_BACKEND_CUDA;
    else if (!s->backend_auto)
        return -1;
    return 0;
}

/* NET's text into its choice: 0, or -1 for a name of none. */
static int parse_net(dcuda_settings_t *s)
{
    for (int c = DCU_NET_AUTO; c <= DCU_NET_NONE; c++)
        if (strcmp(s->net, dcu_net_choice_name((dcu_net_choice_t)c)) == 0) {
            s->net_choice = (dcu_net_choice_t)c;
            return 0;
        }
    return -1;
}

static dcuda_status_t validate(dcuda_settings_t *s)
{
    if (dcu_msg_level_of(s->log_level) < 0) {
        dcu_msg_error("setting LOG_LEVEL: '%s' is not error, warn, info or debug", s->log_level);
        return DCUDA_ERR_SETTING;
    }
    if (parse_backend(s) != 0) {
        dcu_msg_error("setting BACKEND: '%s' is not auto, cpu or cuda", s->backend);
        return DCUDA_ERR_SETTING;
    }
    if (s->ranks < 0 || s->ranks > SETTING_RANKS_MAX) {
        dcu_msg_error("setting RANKS: %ld is not in 0..%ld", s->ranks, SETTING_RANKS_MAX);
        return DCUDA_ERR_SETTING;
    }
    if (s->processes < 0 || s->processes > SETTING_PROCESSES_MAX) {
        dcu_msg_error("setting PROCESSES: %ld is not in 0..%ld", s->processes,
                      SETTING_PROCESSES_MAX);
        return DCUDA_ERR_SETTING;
    }
    if (!(s->watchdog >= 0)) {
        dcu_msg_error("setting WATCHDOG: %g is not a number of seconds >= 0", s->watchdog);
        return DCUDA_ERR_SETTING;
    }
    if (s->watchdog > DCU_WATCHDOG_MAX_S)
        s->watchdog = 0; /* inf, or longer than any run: never */
    if (s->log_entries < SETTING_LOG_ENTRIES_MIN || s->log_entries > SETTING_LOG_ENTRIES_MAX ||
        (s->log_entries & (s->log_entries - 1))) {
        dcu_msg_error("setting LOG_ENTRIES: %ld is not a power of two in %ld..%ld", s->log_entries,
                      SETTING_LOG_ENTRIES_MIN, SETTING_LOG_ENTRIES_MAX);
        return DCUDA_ERR_SETTING;
    }
    if (strcmp(s->on_error, "abort") && strcmp(s->on_error, "continue")) {
        dcu_msg_error("setting ON_ERROR: '%s' is not abort or continue", s->on_error);
        return DCUDA_ERR_SETTING;
    }
    if (parse_net(s) != 0) {
        dcu_msg_error("setting NET: '%s' is not auto, mpi, ucx or none", s->net);
        return DCUDA_ERR_SETTING;
    }
    if (s->net_credit < SETTING_NET_CREDIT_MIN || s->net_credit > SETTING_NET_CREDIT_MAX) {
        dcu_msg_error("setting NET_CREDIT: %lu is not a number of bytes in %lu..%lu", s->net_credit,
                      SETTING_NET_CREDIT_MIN, SETTING_NET_CREDIT_MAX);
        return DCUDA_ERR_SETTING;
    }
    if (s->net_inbox_max < SETTING_NET_INBOX_MIN || s->net_inbox_max > SETTING_NET_INBOX_MAX) {
        dcu_msg_error("setting NET_INBOX_MAX: %lu is not a number of bytes in %lu..%lu",
                      s->net_inbox_max, SETTING_NET_INBOX_MIN, SETTING_NET_INBOX_MAX);
        return DCUDA_ERR_SETTING;
    }
    if (s->proxy_lanes < 1 || s->proxy_lanes > DCUDA_MAX_PROXY_LANES) {
        dcu_msg_error("setting PROXY_LANES: %ld is not in 1..%d", s->proxy_lanes,
                      DCUDA_MAX_PROXY_LANES);
        return DCUDA_ERR_SETTING;
    }
    if (s->notif_start > 0xffffffffUL) {
        dcu_msg_error("setting NOTIF_START: %lu does not fit 32 bits", s->notif_start);
        return DCUDA_ERR_SETTING;
    }
    return DCUDA_OK;
}

void dcu_settings_defaults(dcuda_settings_t *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < SETTINGS_COUNT; i++)
        (void)parse_value(&settings_table[i], settings_table[i].def, "the defaults", out);
    (void)parse_backend(out); /* the defaults name choices there are */
    (void)parse_net(out);
}

dcuda_status_t dcu_settings_load(int argc, char **argv, dcuda_settings_t *out)
{
    dcuda_settings_t s;
    dcu_settings_defaults(&s);
    dcuda_status_t st = load_environment(&s);
    if (st == DCUDA_OK)
        st = load_arguments(argc, argv, &s);
    if (st == DCUDA_OK)
        st = validate(&s);
    if (st == DCUDA_OK)
        *out = s;
    return st;
}

int dcuda_setting_describe(int index, const char **name, const char **type,
                           const char **default_value, const char **meaning)
{
    if (index < 0 || (size_t)index >= SETTINGS_COUNT)
        return 0;
    const setting_desc_t *d = &settings_table[index];
    if (name)
        *name = d->name;
    if (type)
        *type = type_name(d->type);
    if (default_value)
        *default_value = d->def;
    if (meaning)
        *meaning = d->desc;
    return 1;
}

void dcuda_settings_print(FILE *out)
{
    fprintf(out, "%-24s %-7s %-8s %-10s %s\n", "variable", "type", "default", "value", "meaning");
    for (size_t i = 0; i < SETTINGS_COUNT; i++) {
        const setting_desc_t *d = &settings_table[i];
        char var[64];
        snprintf(var, sizeof var, "DCUDA_%s", d->name);
        const char *value = getenv(var);
        fprintf(out, "%-24s %-7s %-8s %-10s %s\n", var, type_name(d->type), d->def,
                value ? value : "(unset)", d->desc);
    }
    fprintf(out, "Each can also be given as --dcuda-<name>=<value>, e.g. --dcuda-ranks=64.\n");
}

/* ---- agreement among processes ------------------------------------------------ */

/* The settings every process must share, as one step's bytes. */
typedef struct shared_settings {
    char net[16];
    char on_error[16];
    int32_t net_force;
    int32_t net_loopback;
    int32_t deadlock;
    int32_t node_reads;  /* processes that chose differently would wait for each other */
    uint64_t net_credit; /* a receiver refuses a sender beyond it */
    int32_t proxy_lanes; /* lanes are numbered alike everywhere */
} shared_settings_t;

/* The first shared setting in which a and b differ: its name and both
 * values; NULL when none. */
static const char *differing(const shared_settings_t *a, const shared_settings_t *b, char *va,
                             char *vb, size_t size)
{
    if (a->proxy_lanes != b->proxy_lanes) { /* first: NET=auto follows it (dcu_net_auto) */
        snprintf(va, size, "%d", (int)a->proxy_lanes);
        snprintf(vb, size, "%d", (int)b->proxy_lanes);
        return "PROXY_LANES";
    }
    if (strcmp(a->net, b->net) != 0) {
        snprintf(va, size, "%s", a->net);
        snprintf(vb, size, "%s", b->net);
        return "NET";
    }
    if (strcmp(a->on_error, b->on_error) != 0) {
        snprintf(va, size, "%s", a->on_error);
        snprintf(vb, size, "%s", b->on_error);
        return "ON_ERROR";
    }
    if (a->net_force != b->net_force || a->deadlock != b->deadlock) {
        int force = a->net_force != b->net_force;
        snprintf(va, size, "%d", force ? (int)a->net_force : (int)a->deadlock);
        snprintf(vb, size, "%d", force ? (int)b->net_force : (int)b->deadlock);
        return force ? "NET_FORCE" : "DEADLOCK";
    }
    if (a->node_reads != b->node_reads) {
        snprintf(va, size, "%d", (int)a->node_reads);
        snprintf(vb, size, "%d", (int)b->node_reads);
        return "NODE_READS";
    }
    if (a->net_loopback != b->net_loopback) {
        snprintf(va, size, "%d", (int)a->net_loopback);
        snprintf(vb, size, "%d", (int)b->net_loopback);
        return "NET_LOOPBACK";
    }
    if (a->net_credit != b->net_credit) {
        snprintf(va, size, "%llu", (unsigned long long)a->net_credit);
        snprintf(vb, size, "%llu", (unsigned long long)b->net_credit);
        return "NET_CREDIT";
    }
    return NULL;
}

dcuda_status_t dcu_settings_agree(const dcuda_settings_t *s)
{
    int count = dcu_boot_size(), me = dcu_boot_rank();
    shared_settings_t mine, *all = calloc((size_t)count, sizeof *all);
    if (!all)
        return DCUDA_ERR_NO_MEMORY;
    memset(&mine, 0, sizeof mine);
    /* auto means the same manager in every process (dcu_net_auto). */
    dcu_net_choice_t net = s->net_choice;
    if (net == DCU_NET_AUTO)
        net = dcu_net_auto(dcu_boot_is_mpi(), (int)s->proxy_lanes);
    snprintf(mine.net, sizeof mine.net, "%s", dcu_net_choice_name(net));
    snprintf(mine.on_error, sizeof mine.on_error, "%s", s->on_error);
    mine.net_force = (int32_t)s->net_force;
    mine.net_loopback = (int32_t)s->net_loopback;
    mine.deadlock = (int32_t)s->deadlock;
    mine.node_reads = (int32_t)s->node_reads;
    mine.net_credit = (uint64_t)s->net_credit;
    mine.proxy_lanes = (int32_t)s->proxy_lanes;
    dcuda_status_t st = dcu_boot_allgather(&mine, all, sizeof mine);
    for (int p = 0; st == DCUDA_OK && p < count; p++) {
        char va[24], vb[24];
        const char *name = differing(&all[0], &all[p], va, vb, sizeof va);
        if (!name)
            continue;
        dcu_msg_error("dcuda_host_init: setting %s differs between processes: %s in process 0, "
                      "%s in process %d (this is process %d): give every process the same "
                      "value (under mpirun, -x passes a variable only to the programs it "
                      "precedes)",
                      name, va, vb, p, me);
        st = DCUDA_ERR_SETTING;
    }
    free(all);
    return st;
}
