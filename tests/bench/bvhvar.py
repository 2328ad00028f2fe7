"""bvhvar.py - one BVH take re-expressed on other rigs: the same world motion, other joint frames, orders and rest poses.

    python3 tests/bench/bvhvar.py IN.bvh OUT.bvh [--order XYZ] [--six] [--alongx] [--rootx DEG]
                                                 [--turn DEG --seed N]

Every joint of OUT is where IN puts it at every frame (to the 6 decimals written); only how the
file says it changes, as it does between real exporters:
  --order XYZ  every joint's rotation channels in this order (default: each joint's own);
  --six        position channels on every joint (LaFAN1, some Blender exports);
  --alongx     each joint's frame turned so that its first child lies along its x axis (Maya's joint
               orientation baked into the offsets: the zero pose is a straight line, no standing pose);
  --rootx DEG  the root's frame turned DEG degrees about x (a Z-up root: the zero pose lies down);
  --turn DEG   each joint's frame turned by a random rotation of up to DEG degrees (--seed N).
A joint's frame turned by C: its children's offsets become C^-1 O, its local rotation
C_parent^-1 R C, so world positions stay. make bench writes such a family of Debian's clips and
tracks each with mocap.py (docs/performance.md, "Rigs whose zero pose is no standing pose").
"""
import math
import random
import sys

IDENTITY = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def axis_matrix(axis, deg):
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    if axis == "X":
        return [[1, 0, 0], [0, c, -s], [0, s, c]]
    if axis == "Y":
        return [[c, 0, s], [0, 1, 0], [-s, 0, c]]
    return [[c, -s, 0], [s, c, 0], [0, 0, 1]]


def mul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def apply(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def rodrigues(u, c, s):
    """The rotation by the angle with cosine c and sine s about the unit axis u."""
    t = 1 - c
    x, y, z = u
    return [[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c]]


def euler(R, order):
    """Angles (degrees) of R = R_o1(a) R_o2(b) R_o3(c), the middle in [-90, 90]."""
    i, j, k = ("XYZ".index(order[0]), "XYZ".index(order[1]), "XYZ".index(order[2]))
    s = 1 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1
    b = math.asin(max(-1.0, min(1.0, s * R[i][k])))
    if abs(math.cos(b)) > 1e-9:
        a, c = math.atan2(-s * R[j][k], R[k][k]), math.atan2(-s * R[i][j], R[i][i])
    else:
        a, c = math.atan2(s * R[k][j], R[j][j]), 0.0
    return [math.degrees(a), math.degrees(b), math.degrees(c)]


def random_turn(rng, deg):
    while True:
        v = [rng.uniform(-1, 1) for _ in range(3)]
        n = math.sqrt(sum(x * x for x in v))
        if 0.1 < n <= 1:
            break
    a = math.radians(rng.uniform(0, deg))
    return rodrigues([x / n for x in v], math.cos(a), math.sin(a))


def turn_x_to(d):
    """The shortest turn taking +x to the unit direction d."""
    ax = [0.0, -d[2], d[1]]  # x cross d
    s = math.sqrt(ax[1] ** 2 + ax[2] ** 2)
    if s < 1e-12:
        return [row[:] for row in IDENTITY] if d[0] > 0 else [[-1, 0, 0], [0, -1, 0], [0, 0, 1]]
    return rodrigues([v / s for v in ax], d[0], s)


def read(path):
    """(joints, frame time, frames): each joint a dict of name, parent, end (an End Site), offset, channels."""
    lines = [ln.strip() for ln in open(path, encoding="latin-1").read().replace("\r", "\n").split("\n")]
    joints, stack, cur, i = [], [], -1, 0
    while i < len(lines):
        w = lines[i].split()
        i += 1
        if not w:
            continue
        if w[0] in ("ROOT", "JOINT"):
            joints.append({"name": " ".join(w[1:]), "parent": stack[-1] if stack else -1, "end": False, "chan": []})
            cur = len(joints) - 1
        elif w[0] == "End":
            joints.append({"name": joints[stack[-1]]["name"] + "_End", "parent": stack[-1], "end": True, "chan": []})
            cur = len(joints) - 1
        elif w[0] == "{":
            stack.append(cur)
        elif w[0] == "}":
            stack.pop()
        elif w[0] == "OFFSET":
            joints[cur]["off"] = [float(x) for x in w[1:4]]
        elif w[0] == "CHANNELS":
            joints[cur]["chan"] = w[2:]
        elif w[0] == "MOTION":
            break
    frame_time = float(lines[i + 1].split(":", 1)[1])
    values = [float(x) for x in " ".join(lines[i + 2:]).split()]
    n = sum(len(j["chan"]) for j in joints)
    return joints, frame_time, [values[f * n:(f + 1) * n] for f in range(len(values) // n)]


def locals_of(joints, frame):
    """Per joint its local rotation matrix and its offset from the parent (OFFSET plus position channels)."""
    out, c = [], 0
    for j in joints:
        R, t = [row[:] for row in IDENTITY], list(j["off"])
        for ch in j["chan"]:
            if ch.lower().endswith("position"):
                t["XYZ".index(ch[0].upper())] += frame[c]
            else:
                R = mul(R, axis_matrix(ch[0].upper(), frame[c]))
            c += 1
        out.append((R, t))
    return out


def frames_turned(joints, args, rng):
    """Each joint's frame turn C (End Sites: none)."""
    C = [random_turn(rng, args["turn"]) if args["turn"] > 0 and not j["end"] else [row[:] for row in IDENTITY] for j in joints]
    if args["alongx"]:
        for idx, j in enumerate(joints):
            kids = [c for c, k in enumerate(joints) if k["parent"] == idx]
            n = math.sqrt(sum(x * x for x in joints[kids[0]]["off"])) if kids else 0
            if idx and not j["end"] and n > 1e-9:
                C[idx] = turn_x_to([x / n for x in joints[kids[0]]["off"]])
    if args["rootx"]:
        C[0] = mul(C[0], axis_matrix("X", args["rootx"]))
    return C


def write(path, joints, frame_time, frames, args):
    C = frames_turned(joints, args, random.Random(args["seed"]))
    for j in joints:
        if j["end"]:
            continue
        own = "".join(ch[0].upper() for ch in j["chan"] if ch.lower().endswith("rotation")) or "ZXY"
        j["order"] = own if args["order"] == "keep" else args["order"]
        j["pos"] = args["six"] or any(ch.lower().endswith("position") for ch in j["chan"])
    offsets = [j["off"] if j["parent"] < 0 else apply(transpose(C[j["parent"]]), j["off"]) for j in joints]
    rows = []
    for frame in frames:
        row = []
        for idx, (R, t) in enumerate(locals_of(joints, frame)):
            j = joints[idx]
            if j["end"]:
                continue
            p = j["parent"]
            if p < 0:
                Rn, tn = mul(R, C[idx]), t
            else:
                Rn, tn = mul(mul(transpose(C[p]), R), C[idx]), apply(transpose(C[p]), t)
            if j["pos"]:
                row += tn if p < 0 else [tn[q] - offsets[idx][q] for q in range(3)]
            row += euler(Rn, j["order"])
        rows.append(row)
    out = ["HIERARCHY"]

    def emit(i, depth):
        j, ind = joints[i], "  " * depth
        out.append(ind + ("End Site" if j["end"] else ("ROOT " if j["parent"] < 0 else "JOINT ") + j["name"]))
        out.append(ind + "{")
        out.append(ind + "  OFFSET %.6f %.6f %.6f" % tuple([0.0, 0.0, 0.0] if j["parent"] < 0 else offsets[i]))
        if not j["end"]:
            chans = (["Xposition", "Yposition", "Zposition"] if j["pos"] else []) + [a + "rotation" for a in j["order"]]
            out.append(ind + "  CHANNELS %d %s" % (len(chans), " ".join(chans)))
        for c, k in enumerate(joints):
            if k["parent"] == i:
                emit(c, depth + 1)
        out.append(ind + "}")

    emit(0, 0)
    out += ["MOTION", "Frames: %d" % len(rows), "Frame Time: %.7f" % frame_time]
    out += [" ".join("%.6f" % v for v in r) for r in rows]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    a = sys.argv[1:]
    if len(a) < 2:
        sys.exit(__doc__)
    args = {"order": "keep", "six": False, "alongx": False, "rootx": 0.0, "turn": 0.0, "seed": 1}
    k = 2
    while k < len(a):
        key = a[k][2:]
        if key in ("six", "alongx"):
            args[key], k = True, k + 1
        else:
            args[key], k = type(args[key])(a[k + 1]), k + 2
    joints, frame_time, frames = read(a[0])
    write(a[1], joints, frame_time, frames, args)


if __name__ == "__main__":
    main()
