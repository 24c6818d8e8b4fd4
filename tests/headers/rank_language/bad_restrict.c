/* docs/rank-code.md: valid C11, refused as C++ (one of the constructs rank code avoids). */
int f(int *restrict p) { return *p; }
