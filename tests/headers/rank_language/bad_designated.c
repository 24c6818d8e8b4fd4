/* docs/rank-code.md: valid C11, refused as C++ (one of the constructs rank code avoids). */
typedef struct {
    int x, y;
} pt_t;
pt_t f(void)
{
    pt_t p = { .y = 2, .x = 1 };
    return p;
}
