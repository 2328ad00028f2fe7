#!/usr/bin/env bash
# runtime_libs.sh - every shared library the built ikd links must come from a Debian package that
# deploy/Dockerfile's runtime stage installs, directly or as a dependency (or from the base image's
# libc6). Usage: runtime_libs.sh BUILD/ikd deploy/Dockerfile
set -euo pipefail
bin=$1 dockerfile=$2
# the packages named in the runtime stage's apt-get install
listed=$(awk '/^FROM debian:12-slim/{rt=1} rt' "$dockerfile" | tr '\\\n' '  ' |
         grep -o 'apt-get install[^&]*' | tr ' ' '\n' | grep -E '^lib[a-z0-9.+-]+$' | sort -u)
[ -n "$listed" ] || { echo "no runtime packages found in $dockerfile"; exit 1; }
# what they pull in (from this machine's package lists; same Debian release)
closure=$( (echo libc6; echo "$listed"; apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
            --no-breaks --no-replaces --no-enhances $listed 2>/dev/null | grep -E '^[a-z0-9]' ) | sed 's/:.*//' | sort -u)
passed=0 failed=0
for lib in $(ldd "$bin" | awk '/=>/ {print $3} /^\t\/lib/ {print $1}' | sort -u); do
    real=$(readlink -f "$lib")
    pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$real" 2>/dev/null || true)
    pkg=${pkg%%:*}
    if [ -z "$pkg" ]; then echo "FAIL $lib: no Debian package owns it"; failed=$((failed+1)); continue; fi
    if grep -qx "$pkg" <<<"$closure"; then passed=$((passed+1)); else echo "FAIL $lib ($pkg) is not installed by the runtime stage"; failed=$((failed+1)); fi
done
echo "runtime libraries: $passed passed, $failed failed (runtime stage installs: $(echo $listed))"
[ "$failed" = 0 ]
