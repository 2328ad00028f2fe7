#!/usr/bin/env python3
"""structure.py - the layering and size rules of src/ and include/ (DESIGN.md "Layout", "Style").

Checks, each printed as one ok/FAIL line, closing with "N passed, N failed":
- libikd.a exports no ikd_ symbol that include/ikd/ does not declare
  (internal helpers shared between library files are ikd__);
- no function in src/ is longer than 100 lines;
- src/server/http.c is at most 500 lines, every other file in src/ at most 650;
- each layer includes only the layers below it (solve < codec < service < server),
  and the library includes no HTTP, JSON or MessagePack header;
- every file in src/ starts with a one-line purpose comment.
Usage: structure.py LIBIKD_A
"""
import glob
import os
import re
import subprocess
import sys

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}{': ' + detail if detail else ''}")


def exported_symbols(lib):
    out = subprocess.run(["nm", "-g", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if re.match(r"^[0-9a-f]+ [TDRB] ", line)}


def declared_in_headers():
    text = "".join(open(h).read() for h in glob.glob("include/ikd/*.h"))
    return set(re.findall(r"\b(ikd_[a-z0-9_]+)\s*\(", text))


def functions(path):
    """(name, first line, length) of every function definition at file level: from the first line
    of its signature (which may span lines) to its closing brace in column 0."""
    lines = open(path).read().split("\n")
    start, body = None, False
    for i, line in enumerate(lines):
        if start is None:
            if re.match(r"^[a-zA-Z_][^;=]*\(", line) and not line.startswith(("typedef", "#")):
                start, body = i, line.rstrip().endswith("{")
                if line.rstrip().endswith(";"):
                    start = None  # a one-line prototype
            continue
        if not body:
            if line.rstrip().endswith(";"):
                start = None  # a prototype over several lines
            elif line.rstrip().endswith("{") or line == "{":
                body = True
            continue
        if line == "}":
            m = re.search(r"([a-zA-Z_0-9]+)\s*\(", lines[start])
            yield (m.group(1) if m else "?"), start + 1, i - start + 1
            start, body = None, False


LAYERS = {"solve": 0, "codec": 1, "service": 2, "server": 3, "ui": 4}
FOREIGN = {"solve": ("microhttpd.h", "jansson.h", "msgpack.h")}


def main():
    lib = sys.argv[1]
    undeclared = sorted(s for s in exported_symbols(lib) if s.startswith("ikd_") and not s.startswith("ikd__")
                        and s not in declared_in_headers())
    check(not undeclared, "libikd.a exports only what include/ikd/ declares", ", ".join(undeclared))
    long_ones = [f"{p}:{line} {name} ({n} lines)" for p in sorted(glob.glob("src/*/*.c"))
                 for name, line, n in functions(p) if n > 100]
    check(not long_ones, "no function in src/ over 100 lines", "; ".join(long_ones))
    n = sum(1 for _ in open("src/server/http.c"))
    check(n <= 500, f"src/server/http.c is at most 500 lines ({n})")
    big = [f"{p} ({m} lines)" for p in sorted(glob.glob("src/*/*.[ch]")) for m in [sum(1 for _ in open(p))] if m > 650]
    check(not big, "no file in src/ over 650 lines", ", ".join(big))
    bad = []
    for path in sorted(glob.glob("src/*/*.[ch]")):
        layer = path.split("/")[1]
        for inc in re.findall(r'#include [<"]([^>"]+)[>"]', open(path).read()):
            m = re.match(r"\.\./(\w+)/", inc)
            if m and LAYERS.get(m.group(1), 0) > LAYERS[layer]:
                bad.append(f"{path} includes {inc}")
            if os.path.basename(inc) in FOREIGN.get(layer, ()):
                bad.append(f"{path} includes {inc}")
    check(not bad, "each layer includes only the layers below it", "; ".join(bad))
    nopurpose = [p for p in sorted(glob.glob("src/*/*.[ch]") + glob.glob("include/ikd/*.h"))
                 if not re.match(r"/\* \S+ - .+\*/$", open(p).readline().strip())]
    check(not nopurpose, "every source file starts with a one-line purpose", ", ".join(nopurpose))
    print(f"structure: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
