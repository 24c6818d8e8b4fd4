#!/usr/bin/env python3
"""The rooms of src/ and their includes, against the rule written in
src/CMakeLists.txt's head comment.

That comment lists the rooms from the top down, each with the rooms it may
include after an arrow ("core/ ... -> backend, node, ..."; a list may go
on over the next lines, and words in parentheses are remarks). This check
reads every '#include "room/..."' of the .c and .h files under src/ and
fails, naming the file and line, when a file includes a room its own room
does not list, or when the lists allow a room above the includer (a rule
that would let two rooms include each other).

  tools/rooms_check.py [SOURCE_DIR]    exit 0: every include is allowed

Exit 1 when one is not, 2 when the comment cannot be read.
"""
import os
import re
import sys


def read_rule(cmake_path):
    """[(room, set of rooms it may include)] in the comment's order."""
    rooms, current, text = [], None, {}
    with open(cmake_path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                if rooms:
                    break
                continue
            body = line[1:].rstrip("\n")
            if body.strip().startswith("Everything includes"):
                break
            m = re.match(r"\s{1,4}([a-z_]+)/\s", body)
            if m:
                current = m.group(1)
                rooms.append(current)
                text[current] = body[m.end():]
            elif current:
                text[current] += " " + body
    rule = []
    for room in rooms:
        allowed = text[room].split("->", 1)[1] if "->" in text[room] else ""
        allowed = re.sub(r"\([^)]*\)", " ", allowed)
        words = set(re.findall(r"[a-z_]+", allowed)) & set(rooms)
        rule.append((room, words))
    return rule


def main():
    src_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    src = os.path.join(src_dir, "src")
    rule = read_rule(os.path.join(src, "CMakeLists.txt"))
    if not rule:
        print("rooms_check: no rooms found in src/CMakeLists.txt's head comment")
        return 2
    order = [room for room, _ in rule]
    allowed = dict(rule)
    bad = []
    for room, may in rule:
        above = [r for r in may if order.index(r) <= order.index(room)]
        for r in above:
            bad.append("src/CMakeLists.txt: %s/ may include %s/, which is not below it" % (room, r))
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            room = os.path.relpath(path, src).split(os.sep)[0]
            if room not in allowed:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s+"([a-z_]+)/', line)
                    if not m or m.group(1) not in allowed or m.group(1) == room:
                        continue
                    if m.group(1) not in allowed[room]:
                        bad.append("%s:%d: %s/ includes %s/, which its rule does not list"
                                   % (os.path.relpath(path, src_dir), number, room, m.group(1)))
    for room, may in rule:
        print("%-10s -> %s" % (room + "/", ", ".join(r for r in order if r in may) or "(nothing)"))
    if bad:
        print("\n".join(bad))
        return 1
    print("every include goes to a room its rule lists, and every rule points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
