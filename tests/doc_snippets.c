/*
 * Checks that the code a document quotes is the code of the repository:
 *
 *   dcuda_test_doc_snippets <repository root> <document.md>
 *
 * Every ```c and ```cmake block of the document must be an excerpt of the
 * file that the line before it names (the last `path` in backquotes on
 * that line that is a file of the repository): its lines, in order, are
 * lines of that file, consecutive in it, except that a line holding only
 * "..." (indentation allowed) skips any number of the file's lines. Other
 * blocks (commands, output) are not checked. Exits 0 when every block
 * matches, 1 naming each block that does not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A file read whole, cut into lines (the text is modified in place). */
typedef struct lines {
    char *text;
    char **line;
    size_t count;
} lines_t;

static void lines_free(lines_t *l)
{
    free(l->text);
    free(l->line);
    l->text = NULL;
    l->line = NULL;
    l->count = 0;
}

/* Reads path into l; 0 on success. */
static int lines_read(const char *path, lines_t *l)
{
    FILE *f = fopen(path, "rb");
    long size;
    memset(l, 0, sizeof *l);
    if (!f)
        return 1;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 1;
    }
    l->text = malloc((size_t)size + 1);
    l->line = malloc(((size_t)size + 1) * sizeof(char *));
    if (!l->text || !l->line || fread(l->text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        lines_free(l);
        return 1;
    }
    fclose(f);
    l->text[size] = '\0';
    for (char *p = l->text; *p;) {
        char *end = strchr(p, '\n');
        l->line[l->count++] = p;
        if (!end)
            break;
        *end = '\0';
        p = end + 1;
    }
    return 0;
}

/* 1 if the line holds only "..." and blanks. */
static int is_elision(const char *s)
{
    s += strspn(s, " \t");
    return strncmp(s, "...", 3) == 0 && s[3 + strspn(s + 3, " \t")] == '\0';
}

/* The last `path` on the line that names a readable file under root, into
 * out; 0 if there is none. */
static int named_file(const char *root, const char *line, char *out, size_t size)
{
    int found = 0;
    for (const char *p = strchr(line, '`'); p; p = strchr(p + 1, '`')) {
        const char *end = strchr(p + 1, '`');
        if (!end)
            break;
        char path[512];
        int n = snprintf(path, sizeof path, "%s/%.*s", root, (int)(end - p - 1), p + 1);
        FILE *f = n > 0 && (size_t)n < sizeof path && end > p + 1 ? fopen(path, "rb") : NULL;
        if (f) {
            (void)fgetc(f); /* a directory opens, but reading it fails */
            if (!ferror(f)) {
                snprintf(out, size, "%s", path);
                found = 1;
            }
            fclose(f);
        }
        p = end;
    }
    return found;
}

/* Whether block lines [first, end) occur consecutively in the file from
 * line `at` on; the index of the file line after the match, or -1. */
static long match_run(const lines_t *file, size_t at, char **block, size_t first, size_t end)
{
    for (size_t start = at; start + (end - first) <= file->count; start++) {
        size_t i = 0;
        while (first + i < end && strcmp(file->line[start + i], block[first + i]) == 0)
            i++;
        if (first + i == end)
            return (long)(start + i);
    }
    return -1;
}

/* Checks one block (lines [first, end) of the document) against the file;
 * 0 if it is an excerpt. */
static int check_block(const char *file_path, char **block, size_t first, size_t end,
                       size_t doc_line)
{
    lines_t file;
    if (lines_read(file_path, &file) != 0) {
        printf("line %zu: cannot read %s\n", doc_line, file_path);
        return 1;
    }
    size_t at = 0;
    int bad = 0;
    for (size_t run = first; run < end && !bad;) {
        while (run < end && is_elision(block[run]))
            run++;
        size_t stop = run;
        while (stop < end && !is_elision(block[stop]))
            stop++;
        if (run == stop)
            break;
        long next = match_run(&file, at, block, run, stop);
        if (next < 0) {
            printf("line %zu: the block's lines %zu..%zu are not in %s (in this order, "
                   "consecutive); first: \"%s\"\n",
                   doc_line, run - first + 1, stop - first, file_path, block[run]);
            bad = 1;
        } else {
            at = (size_t)next;
        }
        run = stop;
    }
    lines_free(&file);
    return bad;
}

int main(int argc, char **argv)
{
    lines_t doc;
    if (argc != 3) {
        fprintf(stderr, "usage: %s <repository root> <document.md>\n", argv[0]);
        return 2;
    }
    if (lines_read(argv[2], &doc) != 0) {
        printf("FAILED: cannot read %s\n", argv[2]);
        return 1;
    }
    int failed = 0, checked = 0;
    const char *before = ""; /* the last non-blank line outside a block */
    for (size_t i = 0; i < doc.count; i++) {
        const char *s = doc.line[i];
        if (strncmp(s, "```", 3) != 0) {
            if (s[strspn(s, " \t")])
                before = s;
            continue;
        }
        int quoted = strcmp(s, "```c") == 0 || strcmp(s, "```cmake") == 0;
        size_t end = i + 1;
        while (end < doc.count && strncmp(doc.line[end], "```", 3) != 0)
            end++;
        char path[512];
        if (quoted && !named_file(argv[1], before, path, sizeof path)) {
            printf("line %zu: a code block without a file named on the line before it\n", i + 1);
            failed++;
        } else if (quoted) {
            failed += check_block(path, doc.line, i + 1, end, i + 1);
            checked++;
        }
        i = end;
        before = "";
    }
    printf("%s: %d code block(s) checked, %d failed\n", argv[2], checked, failed);
    lines_free(&doc);
    return failed || !checked ? 1 : 0;
}
