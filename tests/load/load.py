#!/usr/bin/env python3
"""load.py - ikd's load test: drives a daemon with wrk and reports solves per second.

Starts ikd (or targets --url) and a baseline server (a minimal libmicrohttpd POST
handler configured like ikd: the HTTP ceiling of this machine), drives both with wrk
using request bodies generated from a seed, and reports solves/s, requests/s, latency
p50/p90/p99/p99.9 and errors by status, with ikd's request rate as a fraction of the
baseline's in the same run, and the started ikd's RSS each second (first, last, highest)
and its CPU time per request (skeleton mode: with the mean solve time from its /metrics).
A progress line is printed each second (wrk runs in
one-second slices); at the end: a table, results.json, summary.md and plot.png
(gnuplot: throughput and latency percentiles over time) in --out.

Modes: single (one problem per request), batch (--batch-size problems per request;
solves/s counts problems), mixed (two-bone solves alone, then again with 10% of the
connections sending 32-joint jacobian solves; reports the two-bone p99 of both), clip
(POST /v1/solve/clip, --frames frames per request of an 8-joint hinge chain whose end
follows a circle, or with --clip humanoid the bench's 240-frame humanoid clips with 6-DoF
hand and foot goals, from `build/bench SEED clip-json`; solves/s counts frames; --stream
asks for the NDJSON or MessagePack stream instead of one reply).
"""
import argparse
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


# ---- bodies -------------------------------------------------------------------------

def msgpack(o):
    """The same document as MessagePack (maps, arrays, str, float 64, int, bool)."""
    if isinstance(o, dict):
        n = len(o)
        head = bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n)
        return head + b"".join(msgpack(k) + msgpack(v) for k, v in o.items())
    if isinstance(o, list):
        n = len(o)
        head = bytes([0x90 | n]) if n < 16 else (b"\xdc" + struct.pack(">H", n) if n < 65536 else b"\xdd" + struct.pack(">I", n))
        return head + b"".join(msgpack(x) for x in o)
    if isinstance(o, str):
        e = o.encode()
        return (bytes([0xa0 | len(e)]) if len(e) < 32 else b"\xd9" + bytes([len(e)])) + e
    if isinstance(o, bool):
        return b"\xc3" if o else b"\xc2"
    if isinstance(o, int):
        return b"\xd3" + struct.pack(">q", o)
    return b"\xcb" + struct.pack(">d", float(o))


def unit(rng):
    while True:
        v = [rng.uniform(-1, 1) for _ in range(3)]
        n = math.sqrt(sum(x * x for x in v))
        if 0.1 < n <= 1:
            return [x / n for x in v]


def chain(rng, n, max_bend_deg=60):
    """A random walk chain, each bone within max_bend_deg of the previous; and a target
    from a second such pose of the same bones (so it is reachable)."""
    lengths = [rng.uniform(0.5, 1.5) for _ in range(n - 1)]

    def walk():
        pts, d = [[0.0, 0.0, 0.0]], unit(rng)
        for length in lengths:
            e = unit(rng)
            # bend d toward e by up to max_bend_deg
            a = math.radians(rng.uniform(0, max_bend_deg))
            perp = [e[i] - d[i] * sum(e[j] * d[j] for j in range(3)) for i in range(3)]
            pn = math.sqrt(sum(x * x for x in perp)) or 1.0
            d = [d[i] * math.cos(a) + perp[i] / pn * math.sin(a) for i in range(3)]
            pts.append([pts[-1][i] + d[i] * length for i in range(3)])
        return pts
    start = walk()
    return start, walk()[-1]


def problem(rng, kind):
    if kind == "two_bone":
        joints, target = chain(rng, 3)
        return {"chain": {"joints": joints}, "target": target, "pole": [0, 0, 5]}
    if kind == "chain":
        joints, target = chain(rng, rng.choice([4, 8, 16, 32]))
        return {"chain": {"joints": joints}, "target": target}
    if kind == "constrained":
        n = rng.choice([4, 8, 16])
        joints, target = chain(rng, n, 40)
        js = [{"position": p, "constraint": {"type": "ball", "max_deg": 45}} for p in joints[:-1]] + [joints[-1]]
        return {"chain": {"joints": js}, "target": target}
    if kind == "clip":
        return clip_doc(rng, 240)
    if kind == "jacobian32":
        joints, target = chain(rng, 32)
        return {"solver": "jacobian", "chain": {"joints": joints}, "target": target}
    raise ValueError(kind)


def clip_doc(rng, frames):
    """An 8-joint chain with knee-like hinges; its end follows a circle of random size and
    phase over `frames` frames (a period of 240)."""
    joints = [[0, 0, 0]] + [{"position": [0, j, 0], "constraint": {"type": "hinge", "axis": [1, 0, 0],
                                                                    "min_deg": 0, "max_deg": 120}} for j in range(1, 8)]
    rad, ph = rng.uniform(0.1, 0.4), rng.uniform(0, 2 * math.pi)
    fr = [{"goals": [{"joint": 7, "position": [0, 5 + rad * math.cos(ph + 2 * math.pi * k / 240),
                                               2 + rad * math.sin(ph + 2 * math.pi * k / 240)]}]} for k in range(frames)]
    return {"skeleton": {"joints": joints}, "frames": fr}


def humanoid_clip(seed):
    """The coherence table's humanoid 6-DoF clip (tests/unit/humanoid.c) for `seed`."""
    out = subprocess.run([os.path.join(ROOT, "build", "bench"), str(seed), "clip-json"], check=True,
                         capture_output=True).stdout
    return json.loads(out)


def humanoid_problems(seed, count):
    """POST /v1/solve/skeleton bodies: the bench's humanoid (25 joints, limits) with five goals,
    the clip's four 6-DoF hand and foot goals of a frame and a head aim."""
    doc = humanoid_clip(seed)
    out = []
    for i in range(count):
        goals = doc["frames"][(i * 37) % len(doc["frames"])]["goals"]
        aim = {"joint": "head", "aim": {"axis": [0, 0, 1], "at": [0.3 * math.sin(i), 1.7, 2.0]}}
        out.append({"skeleton": doc["skeleton"], "goals": goals + [aim]})
    return out


def bodies(seed, kind, encoding, batch_size, count=64, frames=240, skeleton_id=None):
    rng = random.Random(seed)
    out = []
    if kind == "clip-humanoid":
        count = 8  # 240 frames each: a request is 30 ms of solving
    humans = humanoid_problems(seed, count) if kind == "skeleton" else None
    for i in range(count):
        if kind == "skeleton":
            doc = humans[i]
            if skeleton_id:
                doc = dict(doc, skeleton=skeleton_id)
        elif kind == "clip-humanoid":
            doc = humanoid_clip(seed * 1000 + i)
        elif kind == "clip":
            doc = clip_doc(rng, frames)
        else:
            doc = {"problems": [problem(rng, kind) for _ in range(batch_size)]} if batch_size else problem(rng, kind)
        out.append(msgpack(doc) if encoding == "msgpack" else json.dumps(doc, separators=(",", ":")).encode())
    return out


def write_bodies(path, items):
    with open(path, "wb") as f:
        for b in items:
            f.write(b"%d\n" % len(b) + b)


# ---- processes ----------------------------------------------------------------------

# `taskset -c LIST` prefixes for the servers and for wrk (--server-cpus, --wrk-cpus): on a
# machine with cores to spare, the load generator can be kept off the servers' cores.
SERVER_PREFIX, WRK_PREFIX = [], []


def start(cmd, marker):
    name, cmd = cmd[0], SERVER_PREFIX + cmd  # taskset execs the server: the pid is the server's
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    if marker not in line:
        p.kill()
        sys.exit(f"load: {name} did not start: {line!r}")
    return p, line.strip().split(" on ")[1]


ACCEPT = ""  # --stream: the clip stream's media type


def wrk(url, path, ctype, bodies_file, connections, threads, seconds, count_statuses=False):
    env = dict(os.environ, IKD_LOAD_BODIES=bodies_file, IKD_LOAD_PATH=path, IKD_LOAD_CTYPE=ctype,
               IKD_LOAD_ACCEPT=ACCEPT, IKD_LOAD_COUNT_STATUSES="1" if count_statuses else "0")
    cmd = WRK_PREFIX + ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s",
           "-s", os.path.join(HERE, "wrk.lua"), url + path]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def result(proc):
    out, _ = proc.communicate()
    for line in out.splitlines():
        if line.startswith("IKD_RESULT "):
            r = json.loads(line[len("IKD_RESULT "):])
            r["rps"] = r["requests"] / (r["duration_us"] / 1e6) if r["duration_us"] else 0.0
            return r
    sys.exit("load: wrk failed:\n" + out)


def merge(rs):
    """Slices -> totals (latency: the worst slice's percentiles are not additive, so the
    request-weighted mean of slice percentiles is reported; per-slice values are kept)."""
    total = sum(r["requests"] for r in rs)
    dur = sum(r["duration_us"] for r in rs)
    m = {"requests": total, "duration_us": dur, "rps": total / (dur / 1e6) if dur else 0.0, "statuses": {}, "errors": {}}
    for k in ("p50", "p90", "p99", "p999", "mean"):
        m[k] = sum(r[k] * r["requests"] for r in rs) / total if total else 0.0
    for r in rs:
        for code, n in r["statuses"].items():
            m["statuses"][code] = m["statuses"].get(code, 0) + n
        for k, n in r["errors"].items():
            m["errors"][k] = m["errors"].get(k, 0) + n
    return m


def metrics_text(url):
    """ikd's /metrics (Prometheus text), or None when it does not answer."""
    import urllib.request
    try:
        return urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
    except OSError:
        return None


def status_counts(url, path):
    """ikd's own count of answers on `path` by status code (ikd_http_requests_total), or None."""
    import re
    text = metrics_text(url)
    if text is None:
        return None
    pat = re.compile(r'^ikd_http_requests_total\{route="([^"]*)",code="([^"]*)"\} (\d+)$', re.M)
    return {code: int(n) for route, code, n in pat.findall(text) if route == path}


def skeleton_solve_time(url):
    """(seconds, count) of ikd's skeleton solves so far (ikd_solve_duration_seconds), or None."""
    import re
    text = metrics_text(url)
    if text is None:
        return None
    got = dict(re.findall(r'^ikd_solve_duration_seconds_(sum|count)\{solver="skeleton"\} (\S+)$', text, re.M))
    return (float(got["sum"]), float(got["count"])) if len(got) == 2 else None


def cpu_s(pid):
    """User and system CPU seconds of a process started here (None when unknown)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, TypeError, IndexError, ValueError):
        return None


def rss_kb(pid):
    """Resident memory of a process started here, in kB (None when unknown)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, TypeError):
        pass
    return None


def run_slices(label, url, path, ctype, bfile, args, per_request, seconds, series, pid=None, before_each=None):
    """`seconds` of load as wrk runs of --slice seconds (a progress line and a point of the
    plot each); before_each(s), when given, runs first each time (the baseline's slice, so
    that both servers see the same moments of a shared machine)."""
    rs, rss = [], []
    slice_s = max(1, args.slice)
    cpu0, solve0 = cpu_s(pid) if pid else None, skeleton_solve_time(url) if pid and label != "baseline" else None
    for s in range(max(1, -(-seconds // slice_s))):
        if before_each:
            before_each(s)
        r = result(wrk(url, path, ctype, bfile, args.connections, args.threads, slice_s))
        r["rss_kb"] = rss_kb(pid) if pid else None
        rs.append(r)
        if r["rss_kb"]:
            rss.append(r["rss_kb"])
        # seconds since the start of this server's load: the baseline's own clock, and one
        # clock for ikd's phases (mixed mode: two-bone alone, then with the long solves)
        t = (len([x for x in series if (x["run"] == "baseline") == (label == "baseline")]) + 1) * slice_s
        series.append({"run": label, "t": t, "solves": r["rps"] * per_request, **r})
        bad = sum(n for c, n in r["statuses"].items() if not c[0] in "23")
        print(f"[{label} {t:3d}s] {r['rps']:10.0f} req/s {r['rps'] * per_request:12.0f} solves/s  "
              f"p50 {r['p50'] / 1000:6.2f} ms  p99 {r['p99'] / 1000:6.2f} ms  non-2xx {bad}"
              + (f"  RSS {r['rss_kb'] / 1024:.1f} MB" if r["rss_kb"] else ""), flush=True)
    m = merge(rs)
    if rss:  # memory of the daemon this script started: after the first second, at the end, highest
        m["rss_kb"] = {"first": rss[0], "last": rss[-1], "max": max(rss)}
    cpu1, solve1 = cpu_s(pid) if pid else None, skeleton_solve_time(url) if solve0 else None
    if cpu0 is not None and cpu1 is not None and m["requests"]:  # the daemon's CPU per answered request
        m["cpu_us_per_request"] = (cpu1 - cpu0) * 1e6 / m["requests"]
    if solve0 and solve1 and solve1[1] > solve0[1]:  # skeleton solves' mean time (wall, on its thread)
        m["skeleton_solve_us"] = (solve1[0] - solve0[0]) * 1e6 / (solve1[1] - solve0[1])
    return m


# ---- main ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="target a running ikd instead of starting one")
    ap.add_argument("--mode", choices=["single", "batch", "mixed", "clip", "skeleton"], default="single")
    ap.add_argument("--ref", action="store_true", help="skeleton mode: register the skeleton once (POST /v1/skeletons) "
                                                        "and send its id in every request")
    ap.add_argument("--frames", type=int, default=240, help="clip mode: frames per request (the chain)")
    ap.add_argument("--clip", choices=["chain", "humanoid"], default="chain",
                    help="clip mode: an 8-joint hinge chain, or the bench's humanoid with 6-DoF goals (240 frames)")
    ap.add_argument("--stream", action="store_true", help="clip mode: stream the frames (NDJSON, or MessagePack with "
                                                         "--encoding msgpack)")
    ap.add_argument("--encoding", choices=["json", "msgpack"], default="json")
    ap.add_argument("--problems", choices=["two_bone", "chain", "constrained"], default="two_bone")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2, help="wrk threads")
    ap.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    ap.add_argument("--slice", type=int, default=1,
                    help="seconds per wrk run within it (one progress line and plot point each); every wrk "
                         "run starts with no request in flight and ends with its in-flight requests uncounted, "
                         "so with long requests (batches) a longer slice loses less of the server's time")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "load"))
    ap.add_argument("--ikd", default=os.path.join(ROOT, "build", "ikd"))
    ap.add_argument("--baseline", default=os.path.join(ROOT, "build", "baseline"))
    ap.add_argument("--no-baseline", action="store_true", help="skip the HTTP ceiling run")
    ap.add_argument("--ikd-args", default="", help="extra flags for the started ikd")
    ap.add_argument("--server-cpus", default="", help="CPU list (taskset -c) for the started ikd and baseline")
    ap.add_argument("--wrk-cpus", default="", help="CPU list (taskset -c) for wrk, e.g. to keep it off the "
                                                    "servers' cores on a larger machine")
    args = ap.parse_args()
    global SERVER_PREFIX, WRK_PREFIX, ACCEPT
    if (args.server_cpus or args.wrk_cpus) and not shutil.which("taskset"):
        sys.exit("load: taskset not found (apt-get install util-linux)")
    SERVER_PREFIX = ["taskset", "-c", args.server_cpus] if args.server_cpus else []
    WRK_PREFIX = ["taskset", "-c", args.wrk_cpus] if args.wrk_cpus else []
    if not shutil.which("wrk"):
        sys.exit("load: wrk not found (apt-get install wrk)")
    os.makedirs(args.out, exist_ok=True)
    ctype = "application/msgpack" if args.encoding == "msgpack" else "application/json"
    batch = args.batch_size if args.mode == "batch" else 0
    path = "/v1/solve/clip" if args.mode == "clip" else "/v1/solve/batch" if batch else \
        "/v1/solve/skeleton" if args.mode == "skeleton" else "/v1/solve"
    if args.mode == "clip" and args.clip == "humanoid":
        args.frames = 240
    per_request = args.frames if args.mode == "clip" else batch or 1
    kind = ("clip-humanoid" if args.clip == "humanoid" else "clip") if args.mode == "clip" else \
        "skeleton" if args.mode == "skeleton" else args.problems if args.mode != "mixed" else "two_bone"
    if args.mode == "clip" and args.stream:
        ACCEPT = "application/x-msgpack-stream" if args.encoding == "msgpack" else "application/x-ndjson"
    bfile = os.path.join(args.out, "bodies.bin")
    write_bodies(bfile, bodies(args.seed, kind, args.encoding, batch, frames=args.frames))

    procs, series, report = [], [], {"args": vars(args), "machine": os.uname().nodename, "cpus": os.cpu_count()}
    try:
        # The baseline and ikd run side by side, one second each in turn (an idle server
        # costs nothing): the machine is shared and its speed drifts, so the ratio of the
        # two rates is taken over the same stretch of time.
        base, base_slices, interleave = None, [], None
        if not args.no_baseline:
            bp, burl = start([args.baseline, "--listen", "127.0.0.1:0"], "baseline listening")
            procs.append(bp)
            base_series = []

            def interleave(_s):
                base_slices.append(run_slices("baseline", burl, path, ctype, bfile, args, 1, args.slice, base_series))
        url, ikd_pid = args.url, None
        if not url:
            ip, url = start([args.ikd, "--listen", "127.0.0.1:0"] + args.ikd_args.split(), "ikd listening")
            procs.append(ip)
            ikd_pid = ip.pid
        if args.mode == "skeleton" and args.ref:  # register, then every body names the skeleton by its id
            import urllib.request
            sk = humanoid_problems(args.seed, 1)[0]["skeleton"]
            req = urllib.request.Request(url + "/v1/skeletons", data=json.dumps({"skeleton": sk}).encode(),
                                         headers={"Content-Type": "application/json"})
            sid = json.loads(urllib.request.urlopen(req, timeout=10).read())["id"]
            write_bodies(bfile, bodies(args.seed, kind, args.encoding, batch, skeleton_id=sid))
        if args.mode == "mixed":
            if interleave:  # the long solves would load the machine under the baseline too: it runs first, alone
                base = run_slices("baseline", burl, path, ctype, bfile, args, 1, args.duration, series)
            # phase 1: two-bone alone on 90% of the connections
            c90 = max(1, round(args.connections * 0.9))
            alone_args = argparse.Namespace(**{**vars(args), "connections": c90})
            alone = run_slices("two_bone", url, path, ctype, bfile, alone_args, 1, args.duration, series, ikd_pid)
            # phase 2: the same, with 32-joint jacobian solves on the other 10%
            lfile = os.path.join(args.out, "bodies_long.bin")
            write_bodies(lfile, bodies(args.seed + 1, "jacobian32", args.encoding, 0))
            long_proc = wrk(url, path, ctype, lfile, max(1, args.connections - c90), 1, args.duration)
            mixed = run_slices("mixed", url, path, ctype, bfile, alone_args, 1, args.duration, series, ikd_pid)
            long = result(long_proc)
            report.update(two_bone_alone=alone, two_bone_mixed=mixed, long_solves=long,
                          p99_ratio=mixed["p99"] / alone["p99"] if alone["p99"] else None)
            ikd = mixed
        else:
            before = status_counts(url, path)
            ikd = run_slices("ikd", url, path, ctype, bfile, args, per_request, args.duration, series, ikd_pid,
                             interleave)
            after = status_counts(url, path)
            if before is not None and after:  # exact codes, from ikd itself (auth may hide /metrics: then wrk's)
                ikd["statuses"] = {c: n - before.get(c, 0) for c, n in after.items() if n - before.get(c, 0)}
        if base_slices:
            base = merge(base_slices)
            series.extend(base_series)
        report.update(ikd=ikd, baseline=base, solves_per_s=ikd["rps"] * per_request,
                      fraction_of_baseline=ikd["rps"] / base["rps"] if base else None)
    finally:
        for p in procs:
            p.terminate()
            p.wait()

    # ---- report ----
    rows = [("baseline (HTTP ceiling)", report["baseline"], 1)] if report["baseline"] else []
    if args.mode == "mixed":
        rows += [("ikd two-bone alone", report["two_bone_alone"], 1), ("ikd two-bone + 10% long", report["two_bone_mixed"], 1),
                 ("ikd long solves (jacobian 32)", report["long_solves"], 1)]
    else:
        rows += [("ikd", report["ikd"], per_request)]
    lines = [f"mode {args.mode}, {args.encoding}, problems {kind}" + (f", batch {batch}" if batch else "") +
             (f", {args.frames} frames" + (" streamed" if args.stream else "") if args.mode == "clip" else "") +
             f", {args.connections} connections, {args.threads} wrk threads, {args.duration} s per run "
             f"in {args.slice} s slices, seed {args.seed}",
             "", "| run | req/s | solves/s | p50 ms | p90 ms | p99 ms | p99.9 ms | errors by status |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r, k in rows:
        st = ", ".join(f"{c}: {n}" for c, n in sorted(r["statuses"].items()))
        errs = {e: n for e, n in r["errors"].items() if n and e != "status"}
        lines.append(f"| {name} | {r['rps']:.0f} | {r['rps'] * k:.0f} | {r['p50'] / 1000:.2f} | {r['p90'] / 1000:.2f} | "
                     f"{r['p99'] / 1000:.2f} | {r['p999'] / 1000:.2f} | {st}{'; socket errors ' + str(errs) if errs else ''} |")
    if report.get("fraction_of_baseline") is not None:
        lines += ["", f"ikd request rate = {100 * report['fraction_of_baseline']:.1f}% of the baseline's in this run"]
    mem = report["ikd"].get("rss_kb")
    if mem:
        lines += [f"ikd RSS: {mem['first'] / 1024:.1f} MB after the first second, {mem['last'] / 1024:.1f} MB at the end, "
                  f"{mem['max'] / 1024:.1f} MB at most (sampled each second)"]
    cpu, sol = report["ikd"].get("cpu_us_per_request"), report["ikd"].get("skeleton_solve_us")
    if cpu:
        lines += [f"ikd CPU per request: {cpu:.1f} us (user + system, from /proc)" +
                  (f"; skeleton solve mean {sol:.1f} us, {sol / cpu:.2f} of the CPU per request" if sol else "")]
    if args.mode == "mixed" and report.get("p99_ratio"):
        lines += [f"two-bone p99 with long solves / without = {report['p99_ratio']:.2f}"]
    text = "\n".join(lines)
    print("\n" + text)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({**report, "series": series}, f, indent=1)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("# ikd load test\n\n" + text + "\n\n![throughput and latency](plot.png)\n")
    plot(args.out, series)
    print(f"\nwrote {args.out}/results.json, summary.md, plot.png")


def plot(out, series):
    if not shutil.which("gnuplot"):
        print("load: gnuplot not found (apt-get install gnuplot-nox): no plot")
        return
    dat = os.path.join(out, "series.dat")
    runs = []
    with open(dat, "w") as f:
        for r in series:
            if r["run"] not in runs:
                if runs:
                    f.write("\n\n")
                runs.append(r["run"])
            f.write(f"{r['t']} {r['solves']:.0f} {r['p50'] / 1000:.3f} {r['p90'] / 1000:.3f} {r['p99'] / 1000:.3f} "
                    f"{r['p999'] / 1000:.3f}\n")
    thr = ", ".join(f"'{dat}' index {i} using 1:2 with linespoints title '{n} solves/s'" for i, n in enumerate(runs))
    lat = ", ".join(f"'{dat}' index {i} using 1:{c} with lines title '{n} {p}'"
                    for i, n in enumerate(runs) for c, p in ((3, "p50"), (5, "p99"), (6, "p99.9")))
    script = f"""set terminal pngcairo size 1000,700 noenhanced
set output '{out}/plot.png'
set multiplot layout 2,1 title 'ikd load test'
set ylabel 'solves/s'
set key outside right
set grid
plot {thr}
set ylabel 'latency (ms)'
set xlabel 'second'
set logscale y
plot {lat}
unset multiplot
"""
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode:
        print("load: gnuplot failed: " + r.stderr)


if __name__ == "__main__":
    main()
