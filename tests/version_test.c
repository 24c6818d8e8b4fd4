/*
 * The version three ways: the header's macros, the library's
 * dcuda_version(), and the project version CMake read from the header
 * (DCUDA_TEST_PROJECT_VERSION). All must agree. And what the library says
 * it was built from (dcuda_version_string, dcuda_build_info) and its
 * settings' descriptions (dcuda_setting_describe) are well formed.
 */
#include <stdio.h>
#include <string.h>

#include "dcuda/dcuda_host.h"

static int failures;

static void expect_int(const char *what, int got, int want)
{
    if (got != want) {
        printf("FAIL %s: %d, expected %d\n", what, got, want);
        failures++;
    }
}

static void expect_str(const char *what, const char *got, const char *want)
{
    if (strcmp(got, want) != 0) {
        printf("FAIL %s: \"%s\", expected \"%s\"\n", what, got, want);
        failures++;
    }
}

static void expect(const char *what, int ok)
{
    if (!ok) {
        printf("FAIL %s\n", what);
        failures++;
    }
}

/* Every key has a non-empty value, no key twice, unknown keys NULL; the
 * version string is the version and the describe. */
static void check_build_info(void)
{
    int keys = 0;
    for (int i = 0; dcuda_build_info_key(i); i++, keys++) {
        const char *k = dcuda_build_info_key(i), *v = dcuda_build_info(k);
        expect("a key has a value", v != NULL && v[0] != '\0');
        for (int j = 0; j < i; j++)
            expect("keys are unique", strcmp(dcuda_build_info_key(j), k) != 0);
    }
    expect("at least the documented 13 keys", keys >= 13);
    expect("key -1 is NULL", dcuda_build_info_key(-1) == NULL);
    expect("an unknown key is NULL", dcuda_build_info("no such key") == NULL);
    expect("a NULL key is NULL", dcuda_build_info(NULL) == NULL);
    expect_str("build_info version", dcuda_build_info("version"), DCUDA_VERSION_STRING);
    const char *commit = dcuda_build_info("commit");
    expect("commit is 40 hex digits or unknown",
           strcmp(commit, "unknown") == 0 ||
               (strlen(commit) == 40 && strspn(commit, "0123456789abcdef") == 40));
    char want[256];
    snprintf(want, sizeof want, "%s (%s)", DCUDA_VERSION_STRING, dcuda_build_info("describe"));
    expect_str("dcuda_version_string", dcuda_version_string(), want);
    const char *backends = dcuda_build_info("backends");
    expect("backends name cpu", strncmp(backends, "cpu", 3) == 0);
}

/* Every setting described, names unique, the first call past the end 0. */
static void check_settings(void)
{
    int n = 0;
    const char *name, *type, *def, *meaning;
    for (; dcuda_setting_describe(n, &name, &type, &def, &meaning); n++) {
        expect("a setting has a name, type, default and meaning",
               name && name[0] && type && def && meaning && meaning[0]);
        expect("a setting's name has no DCUDA_ prefix", strncmp(name, "DCUDA_", 6) != 0);
        const char *other;
        for (int j = 0; j < n; j++)
            if (dcuda_setting_describe(j, &other, NULL, NULL, NULL))
                expect("setting names are unique", strcmp(other, name) != 0);
    }
    expect("settings exist", n > 10);
    expect("setting -1 does not", dcuda_setting_describe(-1, &name, NULL, NULL, NULL) == 0);
}

int main(void)
{
    int major = -1, minor = -1, patch = -1;
    int number = dcuda_version(&major, &minor, &patch);
    expect_int("dcuda_version major", major, DCUDA_VERSION_MAJOR);
    expect_int("dcuda_version minor", minor, DCUDA_VERSION_MINOR);
    expect_int("dcuda_version patch", patch, DCUDA_VERSION_PATCH);
    expect_int("dcuda_version number", number, DCUDA_VERSION);
    expect_int("DCUDA_VERSION", DCUDA_VERSION,
               DCUDA_VERSION_MAJOR * 10000 + DCUDA_VERSION_MINOR * 100 + DCUDA_VERSION_PATCH);
    expect_int("DCUDA_VERSION_NUMBER order",
               DCUDA_VERSION_NUMBER(0, 10, 0) > DCUDA_VERSION_NUMBER(0, 9, 99), 1);
    /* NULL parts are allowed. */
    expect_int("dcuda_version(NULL, NULL, NULL)", dcuda_version(NULL, NULL, NULL), DCUDA_VERSION);

    char parts[64];
    snprintf(parts, sizeof parts, "%d.%d.%d", major, minor, patch);
    expect_str("DCUDA_VERSION_STRING", DCUDA_VERSION_STRING, parts);
    expect_str("CMake project version", DCUDA_TEST_PROJECT_VERSION, DCUDA_VERSION_STRING);
    check_build_info();
    check_settings();
    if (failures)
        return 1;
    printf("PASSED version %s (%d)\n", DCUDA_VERSION_STRING, number);
    return 0;
}
