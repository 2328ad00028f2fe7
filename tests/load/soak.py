#!/usr/bin/env python3
"""soak.py - ikd under saturation for SOAK_SECONDS: mixed load (two-bone solves, 32-joint jacobian
solves and batches) from wrk against a daemon with a small queue, so that it sheds load with 503.

Passes when: every reply is 200 or a deliberate 503 (no other status, no socket errors), RSS after
the run is within 5% of RSS after the warm-up (the first tenth), and a sample of 200 replies,
re-checked here, keeps every bone length and the root and reaches every reachable target.
Usage: soak.py [--seconds N] [--ikd PATH]"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import load  # noqa: E402  (bodies, start, wrk, result)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def check_sample(url, n=200, seed=7):
    rng = random.Random(seed)
    bad = []
    for k in range(n):
        joints, target = load.chain(rng, rng.choice([3, 4, 8, 16]))
        body = json.dumps({"chain": {"joints": joints}, "target": target}).encode()
        req = urllib.request.Request(url + "/v1/solve", data=body, headers={"Content-Type": "application/json"})
        for attempt in range(50):  # a 503 here is the load shedding, not an error: retry
            try:
                reply = json.loads(urllib.request.urlopen(req, timeout=10).read())
                break
            except urllib.error.HTTPError as e:
                if e.code != 503:
                    raise
                time.sleep(0.05)
        pos = [j["position"] for j in reply["joints"]]
        total = 0.0
        for i in range(len(joints) - 1):
            l0, l1 = math.dist(joints[i], joints[i + 1]), math.dist(pos[i], pos[i + 1])
            total += l0
            if abs(l1 - l0) > 1e-9 * l0:
                bad.append(f"problem {k}: bone {i} length {l1} != {l0}")
        if pos[0] != joints[0]:
            bad.append(f"problem {k}: root moved")
        if math.dist(pos[-1], target) > 1e-3 * total:
            bad.append(f"problem {k}: missed a reachable target by {math.dist(pos[-1], target)}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("SOAK_SECONDS", "60")))
    ap.add_argument("--ikd", default=os.path.join(load.ROOT, "build", "ikd"))
    ap.add_argument("--out", default=os.path.join(load.ROOT, "build", "soak"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    proc, url = load.start([args.ikd, "--listen", "127.0.0.1:0", "--queue", "32", "--log-level", "warn"], "ikd listening")
    files = {}
    for name, kind, batch in (("short", "two_bone", 0), ("long", "jacobian32", 0), ("batch", "two_bone", 64)):
        files[name] = os.path.join(args.out, f"{name}.bin")
        load.write_bodies(files[name], load.bodies(11, kind, "json", batch, count=32))
    warm = max(1, args.seconds // 10)
    procs = [load.wrk(url, "/v1/solve", "application/json", files["short"], 96, 1, args.seconds, count_statuses=True),
             load.wrk(url, "/v1/solve", "application/json", files["long"], 24, 1, args.seconds, count_statuses=True),
             load.wrk(url, "/v1/solve/batch", "application/json", files["batch"], 8, 1, args.seconds, count_statuses=True)]
    samples = []
    start = time.time()
    while time.time() - start < args.seconds:
        time.sleep(1)
        samples.append(rss_kb(proc.pid))
        print(f"[soak {len(samples):4d}s] RSS {samples[-1]} kB", flush=True)
    results = [load.result(p) for p in procs]
    time.sleep(1)
    rss_end = rss_kb(proc.pid)
    failures = []
    statuses = {}
    for r in results:
        for code, n in r["statuses"].items():
            statuses[code] = statuses.get(code, 0) + n
        errs = {k: v for k, v in r["errors"].items() if v and k != "status"}
        if errs:
            failures.append(f"socket errors: {errs}")
    others = {c: n for c, n in statuses.items() if c not in ("200", "503")}
    if others:
        failures.append(f"statuses other than 200 and 503: {others}")
    # drift: the median of the last five samples against the median of the five after warm-up
    # (RSS moves by a few hundred kB as the heap is trimmed every 2 s)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    rss_warm = med(samples[warm - 1:warm + 4])
    rss_end = med(samples[-5:] + [rss_end])
    drift = (rss_end - rss_warm) / rss_warm
    if drift > 0.05:
        failures.append(f"RSS drift {100 * drift:.1f}% ({rss_warm} -> {rss_end} kB)")
    failures += check_sample(url)
    proc.terminate()
    code = proc.wait(timeout=30)
    if code != 0:
        failures.append(f"ikd exited {code} after SIGTERM")
    total = sum(statuses.values())
    print(f"\nsoak: {args.seconds} s, {total} replies ({statuses}), RSS {rss_warm} kB after warm-up, {rss_end} kB at the end"
          f" ({100 * drift:+.1f}%), 200 sampled replies re-checked")
    for f in failures:
        print("FAIL " + f)
    checks = 4 + 200
    print(f"soak: {checks - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
