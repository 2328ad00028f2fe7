#!/usr/bin/env bash
# scale_test.sh - three ikd instances behind nginx (deploy/nginx/ikd.conf) on loopback: load through
# nginx, one instance stopped with SIGTERM in the middle; no request may fail. Then the same load on
# one instance alone, for the throughput ratio, and a 3 MiB GLB imported through nginx (its body
# limit on /v1/import is ikd's). Usage: scale_test.sh BUILD/ikd SECONDS
set -euo pipefail
ikd=$1 seconds=${2:-8}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
chmod 711 "$tmp" # nginx's workers (nobody, under root) write big request bodies to $tmp/body
pids=()
cleanup() { # SIGTERM (nginx's master then takes its workers with it), then wait for all
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

declare -A port pid
start_ikd() { # started here (not in a subshell) so that this shell can wait for it
    "$ikd" --listen 127.0.0.1:0 --log-level warn --shutdown-grace 10 > "$tmp/ikd$1.out" 2>/dev/null &
    pid[$1]=$!
    pids+=($!)
    for _ in $(seq 100); do grep -q listening "$tmp/ikd$1.out" 2>/dev/null && break; sleep 0.05; done
    port[$1]=$(sed 's/.*://' "$tmp/ikd$1.out")
}
start_ikd 1; start_ikd 2; start_ikd 3
p1=${port[1]} p2=${port[2]} p3=${port[3]}
front=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# the shipped config, pointed at these instances and this port
sed -e "s/127.0.0.1:8081/127.0.0.1:$p1/; s/127.0.0.1:8082/127.0.0.1:$p2/; s/127.0.0.1:8083/127.0.0.1:$p3/" \
    -e "s/listen 8080;/listen 127.0.0.1:$front;/" "$root/deploy/nginx/ikd.conf" > "$tmp/ikd.conf"
cat > "$tmp/nginx.conf" <<EOC
worker_processes 2;
pid $tmp/nginx.pid;
error_log $tmp/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $tmp/body;
    proxy_temp_path $tmp/proxy;
    include $tmp/ikd.conf;
}
EOC
nginx -t -p "$tmp" -c "$tmp/nginx.conf" 2>&1 | tail -1
nginx -p "$tmp" -c "$tmp/nginx.conf" -g 'daemon off;' &
pids+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$front/healthz" && break; sleep 0.05; done

python3 - "$root" "$tmp" <<'EOP'
import sys; sys.path.insert(0, sys.argv[1] + "/tests/load"); import load
load.write_bodies(sys.argv[2] + "/bodies.bin", load.bodies(3, "two_bone", "json", 0))
EOP
run_wrk() { # url seconds -> IKD_RESULT json
    IKD_LOAD_BODIES=$tmp/bodies.bin IKD_LOAD_PATH=/v1/solve IKD_LOAD_CTYPE=application/json IKD_LOAD_COUNT_STATUSES=1 \
        wrk -t 2 -c 64 -d "${2}s" --timeout 10s -s "$root/tests/load/wrk.lua" "$1/v1/solve" | grep '^IKD_RESULT' | cut -c 12-
}

run_wrk "http://127.0.0.1:$front" "$seconds" > "$tmp/front.json" &
wrk_pid=$!
sleep $((seconds / 2))
kill -TERM "${pid[2]}"
wait "$wrk_pid"
st=0; wait "${pid[2]}" || st=$?
single=$(run_wrk "http://127.0.0.1:$p1" "$((seconds / 2))")
# a character GLB with its pictures (3 MiB) imports through nginx: its /v1/import body limit is ikd's
imported=$(python3 - "$root" "$front" <<'EOP'
import http.client, random, sys
root, front = sys.argv[1:3]
sys.argv[1:] = [""]  # import_test's daemon binary: none started here
sys.path.insert(0, root + "/tests/e2e")
import import_test
glb = import_test.with_image(import_test.make_gltf(random.Random(5), True)[0], 3 << 20)
c = http.client.HTTPConnection("127.0.0.1", int(front), timeout=60)
c.request("POST", "/v1/import", body=glb, headers={"Content-Type": "model/gltf-binary"})
print(c.getresponse().status)
EOP
)

python3 - "$tmp/front.json" "$single" "$st" "$imported" <<'EOP'
import json, sys
front = json.load(open(sys.argv[1])); single = json.loads(sys.argv[2]); st = int(sys.argv[3]); imported = sys.argv[4]
rps = lambda r: r["requests"] / (r["duration_us"] / 1e6)
bad = {c: n for c, n in front["statuses"].items() if c != "200"}
errs = {k: v for k, v in front["errors"].items() if v}
print(f"through nginx (3 instances, one stopped half-way): {rps(front):.0f} req/s, statuses {front['statuses']}, socket errors {errs or 'none'}")
print(f"one instance alone: {rps(single):.0f} req/s; nginx/single = {rps(front) / rps(single):.2f}")
print(f"stopped instance exit status: {st}")
print(f"a 3 MiB GLB imported through nginx: status {imported}")
failed = (1 if bad else 0) + (1 if errs else 0) + (1 if st != 0 else 0) + (1 if imported != "200" else 0)
print(f"scale-test: {4 - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
EOP
