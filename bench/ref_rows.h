/*
 * The reference programs' rows (ref_floors.cu, ref_nvshmem.cu): the median
 * of a case's runs, and a row printed in dcuda_bench's table layout and,
 * when a CSV file is open, written in its CSV format
 * (kind,what,ranks,bytes,unit,value), which tools/bench_compare.py reads.
 */
#ifndef DCUDA_BENCH_REF_ROWS_H
#define DCUDA_BENCH_REF_ROWS_H

#include <stdio.h>
#include <stdlib.h>

static int ref_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static double ref_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], ref_compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The table's head, and the CSV's when csv is not NULL. */
static void ref_head(FILE *csv)
{
    printf("%-10s %-30s %6s %9s %12s %10s\n", "kind", "what", "ranks", "bytes", "unit", "value");
    if (csv)
        fprintf(csv, "kind,what,ranks,bytes,unit,value\n");
}

static void ref_row(FILE *csv, const char *kind, const char *what, int ranks, size_t bytes,
                    const char *unit, double value)
{
    printf("%-10s %-30s %6d %9zu %12s %10.3f\n", kind, what, ranks, bytes, unit, value);
    fflush(stdout);
    if (csv)
        fprintf(csv, "%s,%s,%d,%zu,%s,%.6f\n", kind, what, ranks, bytes, unit, value);
}

#endif
