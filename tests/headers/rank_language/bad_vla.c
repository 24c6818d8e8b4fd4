/* docs/rank-code.md: valid C11, refused as C++ (one of the constructs rank code avoids). */
int f(int n)
{
    int a[n];
    a[0] = n;
    return a[n - 1];
}
