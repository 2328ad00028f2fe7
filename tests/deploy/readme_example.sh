#!/usr/bin/env bash
# readme_example.sh - README's library example, extracted, built through pkg-config against a
# scratch `make install`, and run: it must print a reached solve, so the example cannot go stale.
# Usage: readme_example.sh README.md
set -euo pipefail
readme=${1:-README.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the first ```c block of the "## The library" section
awk '/^## The library/{s=1} s&&/^```c$/{c=1;next} c&&/^```$/{exit} c{print}' "$readme" > "$tmp/example.c"
[ -s "$tmp/example.c" ] || { echo "FAIL no C example under '## The library' in $readme"; exit 1; }
make --no-print-directory -s install DESTDIR="$tmp/root" PREFIX=/opt/ikd >/dev/null
PKG_CONFIG_SYSROOT_DIR="$tmp/root" PKG_CONFIG_PATH="$tmp/root/opt/ikd/lib/pkgconfig" \
  sh -c 'cc -std=c11 -Wall -Wextra -Werror -o "$1/example" "$1/example.c" $(pkg-config --cflags --libs ikd)' _ "$tmp"
out=$("$tmp/example")
printf '%s\n' "$out" | sed 's/^/  /'
printf '%s\n' "$out" | head -1 | grep -q ': reached after' || { echo "FAIL the example did not reach"; exit 1; }
echo "readme example: 1 passed, 0 failed"
