/* docs/rank-code.md: valid C11, refused as C++ (one of the constructs rank code avoids). */
double *f(void *p)
{
    double *d = p;
    return d;
}
