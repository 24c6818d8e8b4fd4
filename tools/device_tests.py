#!/usr/bin/env python3
"""Packs test entries of a build for a GPU machine that should not build
them again: tools/device_pack.sh packs the library, its plugins and every
program the entries run; this writes PACK/tests.sh, which runs each entry
as ctest would (its environment, its timeout, 77 a skip) from the pack,
with the build's paths turned into the pack's and the source tree's into
the repository root's, writes each entry's output under LOG_DIR, and prints
a line an entry and a count last.

Usage: tools/device_tests.py [--also PROGRAM]... BUILD_DIR PACK_DIR REGEX [REGEX...]
  Entries whose names match any REGEX (ctest -R); --also packs a program
  of the build besides theirs (a benchmark: `PACK_DIR/run.sh PROGRAM`).
  Carry PACK_DIR and run `PACK_DIR/tests.sh LOG_DIR` from the repository
  root there.
"""
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def entries(build, patterns):
    """The entries of `build` whose names match one of `patterns`."""
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    tests = json.loads(out)["tests"]
    found = [t for t in tests if any(re.search(p, t["name"]) for p in patterns)]
    return [t for t in found if t.get("command")]


def props(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def programs(build, tests):
    """The build's files the entries name (their programs), by path."""
    files = set()
    for t in tests:
        for word in t["command"] + props(t).get("ENVIRONMENT", []):
            for m in re.finditer(re.escape(build) + r"/[^\s:;=\"']+", word):
                if os.path.isfile(m.group(0)):
                    files.add(m.group(0))
    return sorted(files)


def rewrite(word, build):
    """A word of an entry with the build's paths made the pack's
    ($PACK/name) and the source tree's the root's ($ROOT/path)."""
    word = re.sub(re.escape(build) + r"/(?:[^\s:;=\"']+/)?([^/\s:;=\"']+)", r"$PACK/\1", word)
    word = word.replace(ROOT + "/", "$ROOT/").replace(ROOT, "$ROOT")
    if word == "/usr/bin/mpiexec":
        return "mpiexec"
    return word


def quoted(word):
    """Double-quoted for the shell, $PACK and $ROOT expanded."""
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") + '"'


def script(tests, build):
    lines = [
        "#!/usr/bin/env bash",
        "# Runs packed test entries (tools/device_tests.py); LOG_DIR gets their output.",
        'PACK=$(cd "$(dirname "$0")" && pwd)',
        "ROOT=$(pwd)",
        'LOGS=${1:-$PACK/logs}',
        'mkdir -p "$LOGS"',
        'cuda=${CUDA_HOME:-/usr/local/cuda}',
        'export LD_LIBRARY_PATH="$PACK:$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"',
        "export NVSHMEM_DISABLE_NVLS=1",
        "passed=0; failed=0; skipped=0",
        "entry() { # NAME TIMEOUT SKIP_CODE -- ENV... -- COMMAND...",
        '    local name=$1 limit=$2 skip=$3; shift 4',
        '    local env=(); while [ "$1" != -- ]; do env+=("$1"); shift; done; shift',
        '    local t0=$SECONDS',
        '    (cd "$PACK" && env "${env[@]}" timeout -k 5 "$limit" "$@") >"$LOGS/$name.log" 2>&1',
        '    local rc=$?',
        '    local verdict=passed',
        '    if [ "$rc" = "$skip" ]; then verdict=skipped; skipped=$((skipped + 1))',
        '    elif [ "$rc" != 0 ]; then verdict="FAILED ($rc)"; failed=$((failed + 1))',
        '    else passed=$((passed + 1)); fi',
        '    printf "%-50s %s %ds\\n" "$name" "$verdict" $((SECONDS - t0))',
        "}",
    ]
    for t in tests:
        p = props(t)
        env = [rewrite(e, build) for e in p.get("ENVIRONMENT", [])]
        cmd = [rewrite(w, build) for w in t["command"]]
        limit = int(float(p.get("TIMEOUT", 120)))
        skip = int(p.get("SKIP_RETURN_CODE", 77))
        lines.append("entry %s %d %d -- %s -- %s" % (
            shlex.quote(t["name"]), limit, skip, " ".join(quoted(e) for e in env),
            " ".join(quoted(w) for w in cmd)))
    lines.append('echo "tests: $passed passed, $failed failed, $skipped skipped"')
    lines.append("[ $failed = 0 ]")
    return "\n".join(lines) + "\n"


def main(argv):
    also = []
    while len(argv) > 2 and argv[1] == "--also":
        also.append(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    build, pack, patterns = os.path.abspath(argv[1]), argv[2], argv[3:]
    tests = entries(build, patterns)
    if not tests:
        sys.stderr.write("device_tests: no entry of %s matches %s\n" % (build, patterns))
        return 2
    progs = [os.path.relpath(f, build) for f in programs(build, tests)] + also
    subprocess.run([os.path.join(ROOT, "tools", "device_pack.sh"), build, pack] + progs, check=True)
    path = os.path.join(pack, "tests.sh")
    with open(path, "w") as f:
        f.write(script(tests, build))
    os.chmod(path, 0o755)
    print("device_tests: %d entries in %s" % (len(tests), path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
