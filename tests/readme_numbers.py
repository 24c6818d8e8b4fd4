#!/usr/bin/env python3
"""The README's measured figures are stated on the results page each links to.

Convention (README.md):

  - The README quotes measurements in one table, under "Where it stands":
    the markdown table whose header row's first cell is "measured" and
    whose last cell is "page". Each of its rows is one measurement:

      | measured | dcuda | beside it (same call) | page |
      | what ran, sizes, ranks, machine | figures | figures | [kind](docs/results/<kind>.md) |

  - The first column says what was measured; its numbers (sizes, rank
    counts) are not checked.
  - Every number in the other columns but the last (the figures, the
    reference's figures, the ratios; code spans left out) must be stated
    on the page the last column links, docs/results/<kind>.md: as a
    number of that page with the same digits. Thousands separators are
    ignored (1,430.4 is 1430.4); trailing digits are not (3.50 is not
    3.5, 0.55 is not 0.559): copy the figure as the page writes it.
  - The last column links exactly one page under docs/results/.
  - Outside that table the README quotes no figure: a number followed by
    us, ms, GB/s, MB/s, M (millions), "times faster/slower" or "x
    faster/slower", or written as 1.5x, outside code spans and code
    blocks (a line read with the next, so that a figure broken over two
    lines is seen), fails the check (put it in the table, where it is
    checked, or on a page).

Usage: readme_numbers.py [REPOSITORY_ROOT]   (default: this file's ../)
Exit status 0: every figure found; 1: a figure or a page missing, each
named on stderr; 77: no README.md or docs/results/ to check (a skip).
"""
import os
import re
import sys

NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")
CODE_SPAN = re.compile(r"`[^`]*`")
PAGE_LINK = re.compile(r"\]\((docs/results/[\w.-]+\.md)\)")
STRAY = [
    re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?\s*(?:us|ms|GB/s|MB/s)\b"),
    re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?\s*M\b"),
    re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?\s*(?:times|x)\s+(?:faster|slower)"),
    re.compile(r"(?<![\w.,])\d+(?:\.\d+)?x\b"),
]


def numbers(text):
    """The numbers of a text, thousands separators removed."""
    return [m.group(1).replace(",", "") + (m.group(2) or "") for m in NUMBER.finditer(text)]


def cells(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def find_table(lines):
    """(header index, [(line number, cells)]) of the results table, or None."""
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("|"):
            continue
        head = [c.lower() for c in cells(line)]
        if len(head) >= 3 and head[0] == "measured" and head[-1] == "page":
            rows = []
            j = i + 2  # past the |---| row
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append((j + 1, cells(lines[j])))
                j += 1
            return i, j, len(head), rows
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    readme = os.path.join(root, "README.md")
    if not os.path.isfile(readme) or not os.path.isdir(os.path.join(root, "docs", "results")):
        print(f"SKIP docs.readme_numbers: no README.md and docs/results/ under {root}")
        return 77
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")

    failures = []
    table = find_table(lines)
    if table is None:
        print("FAIL docs.readme_numbers: README.md has no results table "
              "(a header row '| measured | ... | page |')", file=sys.stderr)
        return 1
    start, end, width, rows = table
    if not rows:
        failures.append("the results table has no rows")

    pages = {}
    checked = 0
    for lineno, row in rows:
        what = row[0] if row else ""
        if len(row) != width:
            failures.append(f"README.md:{lineno}: {len(row)} cells where the header has {width} ('{what}')")
            continue
        links = PAGE_LINK.findall(row[-1])
        if len(links) != 1:
            failures.append(f"README.md:{lineno}: the page column links {len(links)} pages under "
                            f"docs/results/ ('{row[-1]}'), not one")
            continue
        page = links[0]
        if page not in pages:
            path = os.path.join(root, page)
            if not os.path.isfile(path):
                failures.append(f"README.md:{lineno}: {page} does not exist ('{what}')")
                continue
            with open(path, encoding="utf-8") as f:
                pages[page] = set(numbers(f.read()))
        for cell in row[1:-1]:
            for n in numbers(CODE_SPAN.sub("", cell)):
                checked += 1
                if n not in pages[page]:
                    failures.append(f"README.md:{lineno}: {n} ('{what}') is not stated on {page}")

    prose = []  # (line number, text) outside code blocks and the table
    in_code = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if not in_code and not start <= i < end:
            prose.append((i + 1, CODE_SPAN.sub("", line).strip()))
    for k, (lineno, text) in enumerate(prose):
        after = prose[k + 1][1] if k + 1 < len(prose) and prose[k + 1][0] == lineno + 1 else ""
        both = text + " " + after
        for pattern in STRAY:
            for m in pattern.finditer(both):
                if m.start() < len(text):
                    failures.append(f"README.md:{lineno}: '{m.group(0)}' is a figure outside the "
                                    "results table (quote it there, where it is checked)")

    if failures:
        for f in failures:
            print(f"FAIL docs.readme_numbers: {f}", file=sys.stderr)
        return 1
    print(f"PASSED docs.readme_numbers: {checked} figures of {len(rows)} rows found on "
          f"{len(pages)} pages; no figure outside the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
