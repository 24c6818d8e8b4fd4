/* docs/rank-code.md: valid C11, refused as C++ (one of the constructs rank code avoids). */
#include "dcuda/dcuda_status.h"
dcuda_status_t f(void)
{
    dcuda_status_t s = 0;
    return s;
}
