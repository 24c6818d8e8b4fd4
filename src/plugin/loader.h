/*
 * Loading the plugins (plugin.h): by name, once, from the directories of
 * DCUDA_PLUGIN_PATH when it is set, else from beside the library, its
 * install directory and its build directory.
 */
#ifndef DCU_PLUGIN_LOADER_H
#define DCU_PLUGIN_LOADER_H

#include <stddef.h>

#include "plugin.h"

/* The plugin `name` ("mpi", "ucx"), loaded on first use; NULL, and why,
 * when it cannot be (not built, not found, another contract version, its
 * library missing). */
const dcu_plugin_t *dcu_plugin_get(const char *name, char *why, size_t why_size);
/* Was plugin `name` built with this library (whether it loads or not)? */
int dcu_plugin_built(const char *name);
/* What a plugin's bootstrap step must call while it waits (the
 * bootstrap's dcu_boot_waiting, registered before a plugin starts one). */
void dcu_plugin_set_waiting(void (*fn)(void));

#endif /* DCU_PLUGIN_LOADER_H */
