/*
 * The plugin loader: finds libdcuda_<name>.so, opens it (RTLD_LOCAL: its
 * MPI or UCX stays its own), checks the contract's version both ways, and
 * keeps the table, or why there is none, for the rest of the process
 * (dcuda_plugin_status reports both). Where it looks: the directories of
 * DCUDA_PLUGIN_PATH (colon-separated) when set, and only those; else the
 * directory of the library itself, then its install and build directories
 * (CMake's, compiled in).
 */
#include "loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "dcuda/dcuda_version.h"
#include "util/msg.h"

typedef struct plugin_slot {
    const char *name;
    int tried;
    const dcu_plugin_t *table;
    char path[512];
    char why[1024];
} plugin_slot_t;

static plugin_slot_t slots[] = { { "mpi", 0, NULL, "", "" },
                                 { "ucx", 0, NULL, "", "" },
                                 { "pmix", 0, NULL, "", "" } };
#define SLOT_COUNT (sizeof slots / sizeof slots[0])
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void lend_message(int level, const char *text)
{
    if (level == DCU_PLUGIN_ERROR)
        dcu_msg_error("%s", text);
    else if (level == DCU_PLUGIN_WARN)
        dcu_msg_warn("%s", text);
    else
        dcu_msg_info("%s", text);
}

/* The bootstrap's wait hook (registered from above: this room calls
 * nothing up). */
static void (*waiting_hook)(void);

void dcu_plugin_set_waiting(void (*fn)(void)) { waiting_hook = fn; }

static void lend_waiting(void)
{
    if (waiting_hook)
        waiting_hook();
}

static const dcu_plugin_host_t lent = {
    .version = DCU_PLUGIN_VERSION,
    .message = lend_message,
    .waiting = lend_waiting,
};

static plugin_slot_t *slot_of(const char *name)
{
    for (size_t i = 0; i < SLOT_COUNT; i++)
        if (strcmp(slots[i].name, name) == 0)
            return &slots[i];
    return NULL;
}

/* Was the plugin built with this library? */
int dcu_plugin_built(const char *name)
{
    const char *list = DCU_PLUGINS_BUILT;
    size_t n = strlen(name);
    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The directory this library was loaded from ("" if unknown). */
static void own_dir(char *dir, size_t size)
{
    Dl_info info;
    dir[0] = '\0';
    if (!dladdr((void *)dcu_plugin_get, &info) || !info.dli_fname)
        return;
    snprintf(dir, size, "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        dir[0] = '\0';
}

/* Opens the module of slot s from `dir`: 1 if found there (loaded or not:
 * s->why says), 0 if no such file. */
static int try_dir(plugin_slot_t *s, const char *dir, size_t dir_len)
{
    char path[sizeof s->path];
    snprintf(path, sizeof path, "%.*s/libdcuda_%s.so", (int)dir_len, dir, s->name);
    if (access(path, R_OK) != 0)
        return 0;
    snprintf(s->path, sizeof s->path, "%s", path);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(s->why, sizeof s->why, "%s cannot be loaded: %s", path, dlerror());
        return 1;
    }
    dcu_plugin_init_fn init = (dcu_plugin_init_fn)(uintptr_t)dlsym(lib, DCU_PLUGIN_ENTRY);
    const dcu_plugin_t *t = init ? init(&lent) : NULL;
    if (!t)
        snprintf(s->why, sizeof s->why, "%s is no dcuda plugin of contract version %u (%s)", path,
                 DCU_PLUGIN_VERSION, init ? "it refused this library's" : "no " DCU_PLUGIN_ENTRY);
    else if (t->version != DCU_PLUGIN_VERSION || strcmp(t->name, s->name) != 0)
        snprintf(s->why, sizeof s->why,
                 "%s is plugin '%s' of contract version %u; this library "
                 "needs '%s' of version %u (another dcuda build's?)",
                 path, t->name, t->version, s->name, DCU_PLUGIN_VERSION);
    else if (t->net && t->net->version != DCU_NET_VERSION)
        snprintf(s->why, sizeof s->why,
                 "%s has a network manager of contract version %u; this "
                 "library's is %u",
                 path, t->net->version, DCU_NET_VERSION);
    else if (t->boot && t->boot->version != DCU_BOOT_OPS_VERSION)
        snprintf(s->why, sizeof s->why,
                 "%s has a bootstrap of contract version %u; this "
                 "library's is %u",
                 path, t->boot->version, DCU_BOOT_OPS_VERSION);
    else {
        s->table = t;
        return 1;
    }
    dlclose(lib);
    return 1;
}

/* Every directory of a colon-separated list, until one has the module. */
static int try_list(plugin_slot_t *s, const char *list, char *tried, size_t tried_size)
{
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            size_t used = strlen(tried);
            snprintf(tried + used, tried_size - used, "%s%.*s", used ? ", " : "", (int)len, p);
            if (try_dir(s, p, len))
                return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

static void load(plugin_slot_t *s)
{
    char tried[1024] = "", dir[512];
    s->tried = 1;
    if (!dcu_plugin_built(s->name)) {
        snprintf(s->why, sizeof s->why, "this build of dcuda has no %s plugin (CMake found no %s)",
                 s->name,
                 strcmp(s->name, "mpi") == 0   ? "MPI"
                 : strcmp(s->name, "ucx") == 0 ? "UCX: pkg-config ucx"
                                               : "PMIx: pkg-config pmix");
        return;
    }
    const char *env = getenv("DCUDA_PLUGIN_PATH");
    if (env && *env) {
        if (!try_list(s, env, tried, sizeof tried))
            snprintf(s->why, sizeof s->why, "libdcuda_%s.so is not in DCUDA_PLUGIN_PATH (%s)",
                     s->name, tried);
        return;
    }
    own_dir(dir, sizeof dir);
    char list[1600];
    snprintf(list, sizeof list, "%s:%s:%s", dir, DCU_PLUGIN_INSTALL_DIR, DCU_PLUGIN_BUILD_DIR);
    if (!try_list(s, list, tried, sizeof tried))
        snprintf(s->why, sizeof s->why,
                 "libdcuda_%s.so was not found (looked in %s; "
                 "DCUDA_PLUGIN_PATH names other directories)",
                 s->name, tried);
}

const dcu_plugin_t *dcu_plugin_get(const char *name, char *why, size_t why_size)
{
    plugin_slot_t *s = slot_of(name);
    if (!s) {
        snprintf(why, why_size, "no plugin is called '%s'", name);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    if (!s->tried)
        load(s);
    pthread_mutex_unlock(&lock);
    if (!s->table)
        snprintf(why, why_size, "%s", s->why);
    return s->table;
}

const char *dcuda_plugin_name(int index)
{
    return index >= 0 && (size_t)index < SLOT_COUNT ? slots[index].name : NULL;
}

const char *dcuda_plugin_status(const char *name)
{
    static __thread char text[1200];
    char why[1100], built_with[160] = "";
    const plugin_slot_t *slot = slot_of(name);
    if (!slot)
        return NULL;
    const dcu_plugin_t *t = dcu_plugin_get(name, why, sizeof why);
    if (!t) {
        snprintf(text, sizeof text, "not loaded: %s", why);
        return text;
    }
    if (t->describe)
        t->describe(built_with, sizeof built_with);
    snprintf(text, sizeof text, "loaded from %s (%s)", slot->path,
             built_with[0] ? built_with : "no version given");
    return text;
}
