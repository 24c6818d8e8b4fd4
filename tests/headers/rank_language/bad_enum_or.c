/* docs/rank-code.md: valid C11, refused as C++ (one of the constructs rank code avoids). */
#include "dcuda/dcuda_status.h"
int f(dcuda_status_t a)
{
    dcuda_status_t e = DCUDA_OK;
    e |= a;
    return (int)e;
}
