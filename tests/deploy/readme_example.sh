#!/usr/bin/env bash
# readme_example.sh - the library examples (docs/library.md's chain and clip), extracted, built
# through pkg-config against a scratch `make install`, and run: each must print what it checks
# (a reached solve; every frame of the clip reached), so the examples cannot go stale.
# Usage: readme_example.sh README.md docs/library.md
set -euo pipefail
readme=${1:-README.md}
library=${2:-docs/library.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make --no-print-directory -s install DESTDIR="$tmp/root" PREFIX=/opt/ikd >/dev/null
passed=0 failed=0
# example NAME FILE SECTION PATTERN: the first ```c block under SECTION in FILE, built and run;
# the first line of its output must match PATTERN
example() {
  awk -v sec="$3" '$0==sec{s=1;next} s&&/^## /{exit} s&&/^```c$/{c=1;next} c&&/^```$/{exit} c{print}' "$2" > "$tmp/$1.c"
  if [ ! -s "$tmp/$1.c" ]; then echo "FAIL no C example under '$3' in $2"; failed=$((failed + 1)); return; fi
  PKG_CONFIG_SYSROOT_DIR="$tmp/root" PKG_CONFIG_PATH="$tmp/root/opt/ikd/lib/pkgconfig" \
    sh -c 'cc -std=c11 -Wall -Wextra -Werror -o "$1/$2" "$1/$2.c" $(pkg-config --cflags --libs ikd)' _ "$tmp" "$1"
  local out rc=0
  out=$("$tmp/$1") || rc=$?
  printf '%s\n' "$out" | sed 's/^/  /'
  if [ "$rc" = 0 ] && printf '%s\n' "$out" | head -1 | grep -Eq "$4"; then
    echo "ok   $1 ($2)"; passed=$((passed + 1))
  else
    echo "FAIL $1 ($2): exit $rc"; failed=$((failed + 1))
  fi
}
example chain "$library" "## A chain" ': reached after'
example clip "$library" "## A clip" '^([0-9]+) of \1 frames reached'
echo "library examples: $passed passed, $failed failed"
[ "$failed" = 0 ]
