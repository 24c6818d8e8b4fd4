/* docs/rank-code.md: the forms rank code uses instead of the constructs in
 * bad_*.c; valid C11 and C++ alike. */
#include <stdbool.h>
#include <stdint.h>

#include "dcuda/dcuda_status.h"

typedef struct {
    int x, y;
} pt_t;

/* The first failure kept, no arithmetic on the enum. */
dcuda_status_t first_failure(dcuda_status_t a, dcuda_status_t b)
{
    dcuda_status_t e = DCUDA_OK;
    if (e == DCUDA_OK)
        e = a;
    if (e == DCUDA_OK)
        e = b;
    return e;
}

/* A cast from void *, members in order, a fixed bound, no restrict. */
double sum(void *data, int n)
{
    const double *d = (const double *)data;
    pt_t p = { 1, 2 };
    double a[8] = { 0 };
    bool any = false;
    for (int i = 0; i < n && i < 8; i++) {
        a[i] = d[i] * p.x + p.y;
        any = true;
    }
    return any ? a[0] : 0.0;
}
