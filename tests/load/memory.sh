#!/bin/bash
# memory.sh - ikd's memory under many open connections: starts build/ikd with default
# settings, holds CONNECTIONS keep-alive connections busy with single two-bone JSON solves
# (wrk, one run of SECONDS), prints RSS every 10 s and once the load has stopped.
# Usage: tests/load/memory.sh [SECONDS=300] [CONNECTIONS=1000]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-300}
conns=${2:-1000}
out=build/memory
mkdir -p "$out"
python3 -c "import sys; sys.path.insert(0, 'tests/load'); import load; load.write_bodies('$out/bodies.bin', load.bodies(1, 'two_bone', 'json', 0))"
./build/ikd --listen 127.0.0.1:0 > "$out/ikd.out" 2>/dev/null &
ikd=$!
trap 'kill $ikd 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "listening on" "$out/ikd.out" && break; sleep 0.1; done
url=$(sed -n 's/.*listening on //p' "$out/ikd.out")
rss() { awk '/VmRSS/ {print $2}' "/proc/$ikd/status"; }
echo "ikd at $url, RSS $(rss) kB before the load"
IKD_LOAD_BODIES="$out/bodies.bin" IKD_LOAD_PATH=/v1/solve IKD_LOAD_CTYPE=application/json \
  wrk -t2 -c"$conns" -d"${seconds}s" --timeout 10s -s tests/load/wrk.lua "$url/v1/solve" > "$out/wrk.out" 2>&1 &
wrk=$!
for ((t = 10; t <= seconds; t += 10)); do sleep 10; echo "${t} s: RSS $(rss) kB"; done
wait $wrk
grep -E "requests in|Socket errors|Non-2xx" "$out/wrk.out" || true
sleep 3
echo "after the load: RSS $(rss) kB"
