#!/usr/bin/env python3
"""Calls between the .c files of a folder, and the loops among them.

For each .c file under FOLDER (recursively), lists the non-static
functions of the other files that it names (a call, or a function handed
on as a pointer), then the strongly connected components of more than one
file: files that reach each other through such calls. Comments, strings
and character constants are skipped, and preprocessor lines but for the
bodies of macros. A function defined in several files (plugins' entry points, and
what a plugin's side defines for itself) is an edge to each of them, so a
loop it shows may go through a pair that are never linked together; the
names are listed first. A loop through data (a table of functions, a
variable) is not seen.

  tools/call_loops.py src/proxy            the calls and the loops
  tools/call_loops.py --check src/proxy    exit 1 when there is a loop

Exit 0 when there is no loop (or without --check), 1 with --check and a
loop, 2 on a usage error.
"""
import os
import re
import sys

TOKEN = re.compile(
    r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
    r"|^[ \t]*#(?:\\\n|[^\n])*|[A-Za-z_]\w*|[{}();=]",
    re.S | re.M,
)
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}


def tokens(text):
    """Identifiers and the punctuation that matters, comments and
    literals left out."""
    for m in TOKEN.finditer(text):
        t = m.group(0)
        if t[0] in "/\"'#" or t[0].isspace():
            continue
        yield t


def scan(text):
    """(defined, named): the non-static functions a file defines, and every
    identifier it names inside function bodies or initialisers."""
    defined, named = set(), set()
    depth, stmt = 0, []
    for t in tokens(text):
        if depth > 0:
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    stmt = []
            elif t not in "();=":
                named.add(t)
            continue
        if t == "{":
            # `name ( ... ) {` at file level is a function definition.
            if stmt and stmt[-1] == ")":
                level, i = 0, len(stmt) - 1
                while i >= 0:
                    level += stmt[i] == ")"
                    level -= stmt[i] == "("
                    if level == 0:
                        break
                    i -= 1
                name = stmt[i - 1] if i > 0 else ""
                if re.match(r"[A-Za-z_]\w*$", name) and name not in KEYWORDS:
                    if "static" not in stmt:
                        defined.add(name)
            depth = 1
        elif t == ";":
            stmt = []
        else:
            if "=" in stmt and t != "=":  # an initialiser's names (a function as a pointer)
                named.add(t)
            stmt.append(t)
    # What a macro of the file names (its body calls at each use).
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+\w+((?:\\\n|[^\n])*)", text, re.M):
        body = "".join(" " + t + " " for t in tokens(m.group(1)))
        named.update(re.findall(r"[A-Za-z_]\w*", body))
    return defined, named


def graph(folder):
    files = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".c")]
    scans = {}
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            scans[os.path.relpath(f, folder)] = scan(fh.read())
    owners = {}
    for f, (defined, _) in scans.items():
        for name in defined:
            owners.setdefault(name, []).append(f)
    edges = {f: {} for f in scans}
    for f, (defined, named) in scans.items():
        for name in named - defined:
            for owner in owners.get(name, []):
                edges[f].setdefault(owner, set()).add(name)
    shared = {n: sorted(o) for n, o in owners.items() if len(o) > 1}
    return edges, shared


def components(edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.stderr.write(__doc__)
        return 2
    edges, shared = graph(args[0])
    for name in sorted(shared):
        print("%s is defined in %s (an edge to each)" % (name, ", ".join(shared[name])))
    for f in sorted(edges):
        for g in sorted(edges[f]):
            print("%s -> %s: %s" % (f, g, ", ".join(sorted(edges[f][g]))))
    loops = sorted(c for c in components(edges) if len(c) > 1)
    for c in loops:
        print("LOOP: " + " ".join(c))
    if not loops:
        print("no loop among the %d .c files of %s" % (len(edges), args[0]))
    return 1 if check and loops else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
