/*
 * The version three ways: the header's macros, the library's
 * dcuda_version(), and the project version CMake read from the header
 * (DCUDA_TEST_PROJECT_VERSION). All must agree.
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
    if (failures)
        return 1;
    printf("PASSED version %s (%d)\n", DCUDA_VERSION_STRING, number);
    return 0;
}
