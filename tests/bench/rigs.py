"""rigs.py - single solves on real humanoid rigs: random reachable goal sets inside the importer's humanoid limits, solved from rest (issue 42's "humanoids of any proportions").

    python3 tests/bench/rigs.py IKD_BIN FILE...   (make bench runs it on Debian's BVH clips and ../shared/samples' GLBs)

Each file is imported (POST /v1/import?limits=humanoid&scale=S: BVH in metres with S 0.01, glTF as
it is) and N problems (default 300, --count) are drawn with a fixed seed: every limited joint at
a uniform value within 0.8 of its range about the range's middle (euler angles, a hinge's angle,
a ball's twist and swing; a joint without a limit, which the preset gives no role, at rest), the
hands' and feet's position and rotation and the head's rotation from that pose (DESIGN.md's
forward kinematics), posted to /v1/solve/skeleton by the skeleton's id with the root fixed and no
start pose (rest). The pose the goals come from is a witness: every problem has a solution.
Reported per file: joints, goals met, median and p99 solve time (the replies' solve_us), mean and
median iterations.

--dump=DIR: each file's requests are also written into DIR/NAME.jsonl, one body a line with the
skeleton by value, for the solves alone in process (`build/bench REPS requests FILE`).
"""
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
sys.path.insert(0, os.path.dirname(__file__))
import pyharness  # noqa: E402
from mocap import fk, pct  # noqa: E402
from rom import qconj, qmul, qrot  # noqa: E402


def qaxis(axis, deg):
    n = math.sqrt(sum(a * a for a in axis))
    h = math.radians(deg) / 2
    return [axis[0] / n * math.sin(h), axis[1] / n * math.sin(h), axis[2] / n * math.sin(h), math.cos(h)]


def euler_quat(order, angles):
    q = [0, 0, 0, 1]
    for ch, a in zip(order, angles):
        q = qmul(q, qaxis({"x": [1, 0, 0], "y": [0, 1, 0], "z": [0, 0, 1]}[ch], a))
    return q


def within(rng, lo, hi, share):
    m = (lo + hi) / 2
    return m + share * rng.uniform(lo - m, hi - m)


def deviation(c, world_rot, rng, share=0.8):
    """A turn from rest inside constraint c (share of each range about its middle), in the joint's rest frame."""
    kind = c.get("type") if c else "none"
    if kind == "euler":
        e = euler_quat(c["order"], [within(rng, lo, hi, share) for lo, hi in zip(c["min_deg"], c["max_deg"])])
        if "frame" in c:  # angles about the frame's axes: F e F^-1, F the frame in the joint's rest frame
            f = qmul(qconj(world_rot), c["frame"])
            e = qmul(qmul(f, e), qconj(f))
        return e
    if kind == "hinge":
        return qaxis(qrot(qconj(world_rot), c["axis"]), within(rng, c.get("min_deg", -180), c.get("max_deg", 180), share))
    if kind == "ball" and "axis" in c:
        ax = qrot(qconj(world_rot), c["axis"])
        twist = qaxis(ax, within(rng, c.get("twist_min_deg", -180), c.get("twist_max_deg", 180), share))
        v = [rng.gauss(0, 1) for _ in range(3)]
        d = sum(x * y for x, y in zip(v, ax))
        v = [x - d * y for x, y in zip(v, ax)]
        return qmul(qaxis(v, share * rng.uniform(0, c.get("max_deg", 180))), twist)
    return [0, 0, 0, 1]  # fixed, or no limit: a joint the preset gives no role (CMU's LHipJoint) stays at rest


DUMP = None  # --dump=DIR


def measure(d, path, count):
    query = "limits=humanoid" + ("&scale=0.01" if path.lower().endswith(".bvh") else "")
    with open(path, "rb") as f:
        s, imp = d.post("/v1/import?" + query, f.read())
    if s != 200 or not imp.get("humanoid"):
        return None
    js = imp["skeleton"]["joints"]
    index = {j["name"]: i for i, j in enumerate(js)}
    parent = [index[j["parent"]] if "parent" in j else -1 for j in js]
    world = [j.get("rotation", [0, 0, 0, 1]) for j in js]
    rest_off = [None if parent[i] < 0 else qrot(qconj(world[parent[i]]), [a - b for a, b in zip(j["position"], js[parent[i]]["position"])])
                for i, j in enumerate(js)]
    rest_local = [world[i] if parent[i] < 0 else qmul(qconj(world[parent[i]]), world[i]) for i in range(len(js))]
    roles = imp["humanoid"]
    ends = [index[roles[r]] for r in ("hand_l", "hand_r", "foot_l", "foot_r") if r in roles]
    head = index[roles["head"]] if "head" in roles else None
    rng = random.Random(5)
    met, us, its = 0, [], []
    dump = open(os.path.join(DUMP, os.path.basename(path) + ".jsonl"), "w") if DUMP else None
    for _ in range(count):
        rots = [rest_local[i] if parent[i] < 0 else qmul(rest_local[i], deviation(js[i].get("constraint"), world[i], rng))
                for i in range(len(js))]
        wp, wq = fk(js, parent, rest_off, {"root": js[0]["position"], "rotations": rots})
        goals = [{"joint": js[e]["name"], "position": wp[e], "rotation": wq[e]} for e in ends]
        if head is not None:
            goals.append({"joint": js[head]["name"], "rotation": wq[head]})
        if dump:
            dump.write(json.dumps({"skeleton": imp["skeleton"], "goals": goals}) + "\n")
        s, r = d.post("/v1/solve/skeleton", json.dumps({"skeleton": imp["id"], "goals": goals}), "application/json")
        if s != 200:
            raise SystemExit("%s: %s" % (path, r))
        met += r["status"] == "reached"
        us.append(r["solve_us"])
        its.append(r["iterations"])
    if dump:
        dump.close()
    return len(js), met, pct(us, 0.5), pct(us, 0.99), sum(its) / len(its), pct(its, 0.5)


def main():
    args = sys.argv[1:]
    count = 300
    global DUMP
    while args and args[0].startswith("--"):
        if args[0] == "--count":
            count, args = int(args[1]), args[2:]
        elif args[0].startswith("--dump="):
            DUMP, args = args[0].split("=", 1)[1], args[1:]
            os.makedirs(DUMP, exist_ok=True)
        else:
            raise SystemExit("unknown option " + args[0])
    d = pyharness.Daemon(args[0], "--max-import-body", "67108864")
    try:
        print("| file | joints | met | median us | p99 us | iterations (mean / median) |")
        print("|---|---|---|---|---|---|")
        for path in args[1:]:
            r = measure(d, path, count)
            if r is None:
                print("| %s | not a humanoid | | | | |" % os.path.basename(path))
                continue
            print("| %s | %d | %d of %d | %.1f | %.1f | %.1f / %d |" % (os.path.basename(path), r[0], r[1], count, r[2], r[3], r[4], r[5]))
            sys.stdout.flush()
    finally:
        d.stop()


if __name__ == "__main__":
    main()
