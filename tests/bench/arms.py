"""arms.py - real robot arms: 6-DoF goals on URDF arms' flanges, from random joint values inside the limits (issue 42's measure).

    python3 tests/bench/arms.py [--bench BENCH] IKD_BIN FILE.urdf...   (make bench runs it on ../shared/samples' URDFs)

Each URDF is imported (POST /v1/import), and 1000 problems per arm are drawn with a fixed seed:
every revolute joint at a uniform value inside its limits (continuous joints: a full turn), the
end effector's position and rotation by ikd's own forward kinematics (DESIGN.md's pose), posted
to /v1/solve/skeleton by the skeleton's id with no start pose (the zero configuration). Reported
per arm: the effector (of the import's effectors, the one with the most hinges above it), its
hinges, goals met (status reached), median and p99 solve time (the replies' solve_us).
With --bench (make bench's build/bench), the same requests (the skeleton by value) are
also solved in process, `BENCH 3 requests FILE`: the solve alone, each problem's fastest
of three rounds, without the HTTP path's cold caches between sequential requests.
"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import pyharness  # noqa: E402
from rom import qconj, qmul, qrot  # noqa: E402


def qaxis(axis, deg):
    n = math.sqrt(sum(a * a for a in axis))
    h = math.radians(deg) / 2
    return [axis[0] / n * math.sin(h), axis[1] / n * math.sin(h), axis[2] / n * math.sin(h), math.cos(h)]


def problem(js, parent, rng):
    """Random hinge angles inside the limits; the local rotations and the world poses they give."""
    rest = [j.get("rotation", [0, 0, 0, 1]) for j in js]
    local, wq, wp = [], [], []
    for i, j in enumerate(js):
        p = parent[i]
        q = rest[i] if p < 0 else qmul(qconj(rest[p]), rest[i])
        c = j.get("constraint")
        if c and c["type"] == "hinge":
            q = qmul(q, qaxis(qrot(qconj(rest[i]), c["axis"]), rng.uniform(c.get("min_deg", -180), c.get("max_deg", 180))))
        local.append(q)
        if p < 0:
            wp.append(list(j["position"]))
            wq.append(q)
            continue
        off = qrot(qconj(rest[p]), [a - b for a, b in zip(j["position"], js[p]["position"])])
        wp.append([a + b for a, b in zip(wp[p], qrot(wq[p], off))])
        wq.append(qmul(wq[p], q))
    return wp, wq


def measure(d, path, count=1000):
    with open(path, "rb") as f:
        s, imp = d.post("/v1/import?format=urdf", f.read(), "application/octet-stream")
    if s != 200:
        return None, None
    js = imp["skeleton"]["joints"]
    index = {j["name"]: i for i, j in enumerate(js)}
    parent = [index[j["parent"]] if "parent" in j else -1 for j in js]
    def hinges_above(i):  # the hinges a goal on joint i can turn
        n = 0
        while i >= 0:
            n += (js[i].get("constraint") or {}).get("type") == "hinge"
            i = parent[i]
        return n
    # the arm's flange: the effector with the most hinges above it (a URDF also has leaves at the base)
    eff = max(imp["effectors"], key=lambda e: hinges_above(index[e]))
    hinges = hinges_above(index[eff])
    rng = random.Random(42)
    met, us, lines = 0, [], []
    for _ in range(count):
        wp, wq = problem(js, parent, rng)
        e = index[eff]
        goals = [{"joint": eff, "position": wp[e], "rotation": wq[e]}]
        s, r = d.post("/v1/solve/skeleton", json.dumps({"skeleton": imp["id"], "goals": goals}), "application/json")
        met += s == 200 and r["goals"][0]["status"] == "reached"
        us.append(r.get("solve_us", 0) if s == 200 else 0)
        lines.append(json.dumps({"skeleton": imp["skeleton"], "goals": goals}))
    us.sort()
    return (os.path.basename(path), eff, hinges, count, met, us[count // 2], us[int(count * 0.99)]), lines


def main():
    args = sys.argv[1:]
    bench = None
    if args[:1] == ["--bench"]:
        bench, args = args[1], args[2:]
    d = pyharness.Daemon(args[0])
    try:
        print("| file | effector | hinges | goals | met | median us | p99 us |")
        print("|---|---|---|---|---|---|---|")
        inproc = []
        for path in args[1:]:
            r, lines = measure(d, path)
            if r is None:
                print("| %s | not imported | | | | | |" % os.path.basename(path))
                continue
            print("| %s | %s | %d | %d | %d (%.1f%%) | %.1f | %.1f |" % (r[:5] + (100.0 * r[4] / r[3],) + r[5:]))
            sys.stdout.flush()
            if bench:
                with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
                    f.write("\n".join(lines) + "\n")
                out = subprocess.run([bench, "3", "requests", f.name], capture_output=True, text=True)
                os.unlink(f.name)
                inproc.append("%s: %s" % (r[0], (out.stdout or out.stderr).strip().split(": ", 1)[-1]))
        for line in inproc:
            print(line)
    finally:
        d.stop()


if __name__ == "__main__":
    main()
