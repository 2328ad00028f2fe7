"""rom.py - how much of real motion stays inside the humanoid limits preset (POST /v1/import?limits=humanoid).

    python3 tests/bench/rom.py IKD_BIN FILE...    (make bench runs it on Debian's BVH clips and ../shared/samples' GLBs)

For every file it imports with the default options (a recognised humanoid gets limits=humanoid),
then for every frame of every clip and every joint with a limit, takes the joint's deviation from
rest (DESIGN.md: D = rest_local^-1 local) and checks it against the limit's rule computed here,
independently of the solver: a hinge's angle about its axis within its range (the rest of the
deviation, off the hinge's axis, is reported apart: its median); a ball's swing and twist; an euler limit's three
angles in its order. Prints, per file and role kind, the share of joint-frames inside.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import pyharness  # noqa: E402


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz]


def qconj(q):
    return [-q[0], -q[1], -q[2], q[3]]


def qrot(q, v):
    return qmul(qmul(q, [v[0], v[1], v[2], 0]), qconj(q))[:3]


def norm(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def twist_angle(d, axis):
    """The signed angle of d's twist about the unit axis, degrees in (-180, 180]."""
    p = d[0] * axis[0] + d[1] * axis[1] + d[2] * axis[2]
    a = 2 * math.degrees(math.atan2(p, d[3]))
    return a - 360 if a > 180 else a + 360 if a <= -180 else a


def angle(q):
    return 2 * math.degrees(math.acos(min(1.0, abs(q[3]))))


def matrix(q):
    x, y, z, w = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def euler(q, order):
    """Intrinsic angles (degrees) of R = R_o1(a) R_o2(b) R_o3(c)."""
    i, j, k = ("xyz".index(c) for c in order)
    s = 1 if order in ("xyz", "yzx", "zxy") else -1
    r = matrix(q)
    b = math.asin(max(-1.0, min(1.0, s * r[i][k])))
    a = math.atan2(-s * r[j][k], r[k][k])
    c = math.atan2(-s * r[i][j], r[i][i])
    return [math.degrees(a), math.degrees(b), math.degrees(c)]


def inside(c, d, rest_rot, tol=1e-6, offs=None):
    if c["type"] == "hinge":  # its angle; what a hinge cannot hold (off its axis) is counted apart
        axis = norm(qrot(qconj(rest_rot), c["axis"]))
        t = twist_angle(d, axis)
        h = math.radians(t) / 2
        if offs is not None:
            offs.append(angle(qmul(d, qconj([axis[0] * math.sin(h), axis[1] * math.sin(h), axis[2] * math.sin(h), math.cos(h)]))))
        return c["min_deg"] - tol <= t <= c["max_deg"] + tol
    if c["type"] == "ball":
        axis = norm(qrot(qconj(rest_rot), c["axis"]))
        t = twist_angle(d, axis)
        moved = qrot(d, axis)
        swing = math.degrees(math.acos(max(-1.0, min(1.0, sum(a * b for a, b in zip(moved, axis))))))
        return swing <= c["max_deg"] + tol and c["twist_min_deg"] - tol <= t <= c["twist_max_deg"] + tol
    if c["type"] == "euler":
        if "frame" in c:  # the box's axes: the frame's, in the joint's rest frame F; it bounds F^-1 d F
            f = qmul(qconj(rest_rot), c["frame"])
            d = qmul(qmul(qconj(f), d), f)
        e = euler(d, c["order"])
        return all(lo - tol <= a <= hi + tol for a, lo, hi in zip(e, c["min_deg"], c["max_deg"]))
    return True


def measure(d, path):
    with open(path, "rb") as f:
        body = f.read()
    s, r = d.post("/v1/import", body)
    if s != 200:
        return None
    js = r["skeleton"]["joints"]
    index = {j["name"]: i for i, j in enumerate(js)}
    world = [j.get("rotation", [0, 0, 0, 1]) for j in js]
    rest_local = [world[i] if "parent" not in j else qmul(qconj(world[index[j["parent"]]]), world[i]) for i, j in enumerate(js)]
    roles = {v: k for k, v in (r["humanoid"] or {}).items()}
    count, ins, by_kind, offs = 0, 0, {}, []
    for clip in r["clips"]:
        for pose in clip["poses"]:
            for i, j in enumerate(js):
                c = j.get("constraint")
                if not c or c["type"] == "none":
                    continue
                dev = qmul(qconj(rest_local[i]), pose["rotations"][i])
                ok = inside(c, dev, world[i], offs=offs)
                kind = roles.get(j["name"], "?")
                kind = kind[:-2] if kind.endswith(("_l", "_r")) else kind
                k = by_kind.setdefault(kind, [0, 0])
                k[0] += 1
                k[1] += ok
                count += 1
                ins += ok
    offs.sort()
    return r, count, ins, by_kind, offs[len(offs) // 2] if offs else 0


def main():
    d = pyharness.Daemon(sys.argv[1], "--max-import-body", "67108864", "--memory-budget", "1073741824")
    try:
        print("| file | frames | joint-frames limited | inside | worst roles (share inside) | hinges off axis, median |")
        print("|---|---|---|---|---|---|")
        for path in sys.argv[2:]:
            m = measure(d, path)
            if m is None or not m[0]["humanoid"]:
                print("| %s | - | not a humanoid | - | - | - |" % os.path.basename(path))
                continue
            r, count, ins, by_kind, off = m
            frames = sum(len(c["poses"]) for c in r["clips"])
            worst = sorted(by_kind.items(), key=lambda kv: kv[1][1] / kv[1][0])[:3]
            print("| %s | %d | %d | %.1f%% | %s | %.0f deg |" % (os.path.basename(path), frames, count, 100.0 * ins / max(count, 1),
                  ", ".join("%s %.0f%%" % (k, 100.0 * v[1] / v[0]) for k, v in worst), off))
    finally:
        d.stop()


if __name__ == "__main__":
    main()
