"""mocap.py - real motion solved back: six-point tracking and IK layered on the recording (issue 42's measures).

    python3 tests/bench/mocap.py IKD_BIN FILE...   (make bench runs it on Debian's BVH clips and ../shared/samples' GLBs)

Each humanoid file is imported at 30 fps (POST /v1/import?fps=30, limits as given by --limits:
`humanoid`, the default preset; `none`; `recording`: euler limits that every frame of the file
keeps, plus 10 degrees, in the order whose middle angle varies least; `recording-channels`: the
same in each joint's own BVH channel order; `take`: the importer's own /v1/import?limits=recording,
boxes in the tightest order, neutral_deg the frame nearest the take's mean), and each clip is solved through /v1/solve/clip by the
skeleton's id with the root free:
- tracking: the hips, head, hands and feet given position and rotation from the recording's own
  forward kinematics, each frame from the last (ikd's clip rule);
- tracking, equal: the same with options.stiffness "equal" (a clip's default is "range": joints with
  narrow limits move least);
- layered: the same goals with frames[k].preferred = the recording (the animation back);
- lifted: the feet's goals 4 cm higher (on a 1.7 m figure), preferred = the recording: how far the
  joints above the hips move.
Reported per file and mode: frames reached, flips (a joint turning over 30 degrees in one frame
where the recording turns it under 10), mean and worst joint position error against the recording
in mm on a 1.7 m figure (lifted: the largest move of a joint above the hips), median and p99 solve
time per frame (the replies' solve_us). `tracking*`: a clip whose joint offsets are animated (a hips
bone translating under a ground-level root): frames without `preferred` keep the request pose's
translations (frame 0's), so the recording is not a solution of the later frames there.

--dump=DIR: each clip request is also written into DIR, the skeleton by value, for the solves
alone in process (`build/bench REPS clip FILE`).

MOCAP_FLIPS=1 in the environment: each flip's clip, mode, frame and joint on stderr.

--family=DIR: each BVH file is also written on six other rigs (tests/bench/bvhvar.py: channels
in XYZ order; bones along each joint's x axis with a Z-up root; joint frames turned by up to 30 and
90 degrees; the root alone turned; channels in ZXY order, MotionBuilder's and Boxing_Toes' own,
where a knee's bend about x is the middle angle), the same world motion, into DIR, and all are measured; a summary
of the tracking rows follows the table (frames not reached, flips, mean error, rows that meet
issue 42's targets: every frame reached, no flip, mean <= 25 mm, median <= 50 us, p99 <= 500 us).
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import pyharness  # noqa: E402
from rom import euler, qconj, qmul, qrot  # noqa: E402

DUMP = None  # --dump=DIR
SIX = ["hips", "head", "hand_l", "hand_r", "foot_l", "foot_r"]


def fk(js, parent, rest_off, pose):
    """World positions and rotations of every joint for a pose (root, rotations, translations)."""
    n = len(js)
    wp, wq = [None] * n, [None] * n
    trans = pose.get("translations")
    for i in range(n):
        q = pose["rotations"][i]
        p = parent[i]
        if p < 0:
            wp[i], wq[i] = list(pose["root"]), q
            continue
        off = trans[i] if trans and trans[i] is not None else rest_off[i]
        wp[i] = [a + b for a, b in zip(wp[p], qrot(wq[p], off))]
        wq[i] = qmul(wq[p], q)
    return wp, wq


def angle_between(a, b):
    d = abs(sum(x * y for x, y in zip(a, b)))
    return 2 * math.degrees(math.acos(min(1.0, d)))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def run_clip(d, ref, body_extra, frames, timeout=600):
    body = dict(body_extra, skeleton=ref, root="free", frames=frames)
    c = d.conn(timeout)
    c.request("POST", "/v1/solve/clip", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = json.loads(r.read())
    c.close()
    if r.status != 200:
        raise RuntimeError("clip: %d %s" % (r.status, data))
    return data["frames"]


def bvh_orders(path):
    """Each joint's rotation channel order in a BVH file ("zyx" for Zrotation Yrotation Xrotation)."""
    orders, name = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            t = line.split()
            if t and t[0] in ("ROOT", "JOINT"):
                name = t[1]
            elif t and t[0] == "CHANNELS" and name:
                orders[name] = "".join(c[0].lower() for c in t[2:] if c.lower().endswith("rotation"))
            elif t and t[0] == "MOTION":
                break
    return orders


def recording_limits(js, poses, orders=None):
    """Euler limits every pose keeps, plus 10 degrees: per joint but the root, the order whose middle
    angle varies least (with `orders`, a BVH's: each joint's own channel order, its middle angle's
    range cut to +-89.9 degrees), each angle's range over the recording widened by 10 (whole turns
    where an angle wraps)."""
    index = {j["name"]: i for i, j in enumerate(js)}
    world = [j.get("rotation", [0, 0, 0, 1]) for j in js]
    rest_local = [world[i] if "parent" not in j else qmul(qconj(world[index[j["parent"]]]), world[i]) for i, j in enumerate(js)]
    for i, j in enumerate(js):
        if "parent" not in j:
            continue
        devs = [qmul(qconj(rest_local[i]), p["rotations"][i]) for p in poses]
        best = None
        own = orders.get(j["name"]) if orders is not None else None
        for order in [own] if own and len(own) == 3 else ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx"):
            e = [euler(q, order) for q in devs]
            lo = [min(a[t] for a in e) - 10 for t in range(3)]
            hi = [max(a[t] for a in e) + 10 for t in range(3)]
            if own:
                lo[1], hi[1] = max(lo[1], -89.9), min(hi[1], 89.9)
            elif hi[1] >= 89 or lo[1] <= -89:
                continue
            if best is None or hi[1] - lo[1] < best[0]:
                best = (hi[1] - lo[1], order, lo, hi)
        if best is None:
            continue
        _, order, lo, hi = best
        for t in (0, 2):
            if hi[t] - lo[t] > 300:  # wraps: the whole turn
                lo[t], hi[t] = -180, 180
            lo[t], hi[t] = max(lo[t], -180), min(hi[t], 180)
        j["constraint"] = {"type": "euler", "order": order, "min_deg": lo, "max_deg": hi}


def measure(d, path, limits):
    with open(path, "rb") as f:
        query = "none" if limits.startswith("recording") else "recording" if limits == "take" else limits
        s, imp = d.post("/v1/import?fps=30&limits=" + query, f.read())
    if s != 200 or not imp["humanoid"]:
        return None
    sk = imp["skeleton"]
    js = sk["joints"]
    if limits.startswith("recording"):
        orders = bvh_orders(path) if limits == "recording-channels" and path.lower().endswith(".bvh") else None
        recording_limits(js, [p for c in imp["clips"] for p in c["poses"]], orders)
        s, reg = d.post("/v1/skeletons", json.dumps({"skeleton": sk}), "application/json")
        if s != 200:
            raise RuntimeError("register: %s" % reg)
        imp["id"] = reg["id"]
    index = {j["name"]: i for i, j in enumerate(js)}
    parent = [index[j["parent"]] if "parent" in j else -1 for j in js]
    world = [j.get("rotation", [0, 0, 0, 1]) for j in js]
    rest_off = [None if parent[i] < 0 else qrot(qconj(world[parent[i]]), [a - b for a, b in zip(j["position"], js[parent[i]]["position"])])
                for i, j in enumerate(js)]
    ps = [j["position"] for j in js]
    roles = imp["humanoid"]
    hips, head = index[roles["hips"]], index[roles["head"]]
    stature = math.dist(ps[hips], ps[head]) * 1.7 / 0.75 or 1.0  # hips to head is about 0.75 of 1.7 m
    mm = 1700.0 / stature
    six = [index[roles[r]] for r in SIX if r in roles]
    legs = {index[roles[r]] for r in roles if r.endswith(("leg_l", "leg_r", "foot_l", "foot_r", "toes_l", "toes_r"))}
    above = [i for i in range(len(js)) if i not in legs and i != hips and any(
        parent[k] == hips or k == hips for k in _ancestors(parent, i)) and not _below_legs(parent, legs, i)]
    rows = []
    for clip in imp["clips"]:
        poses = clip["poses"]
        if len(poses) < 2:
            continue
        rec = [fk(js, parent, rest_off, p) for p in poses]
        up = [0, 1, 0]
        lift = 0.04 * stature / 1.7
        for mode in ("tracking", "tracking, equal", "layered", "lifted"):
            frames = []
            for k, pose in enumerate(poses):
                wp, wq = rec[k]
                goals = []
                for j in six:
                    pos = wp[j]
                    if mode == "lifted" and j in legs:
                        pos = [a + lift * u for a, u in zip(pos, up)]
                    goals.append({"joint": j, "position": pos, "rotation": wq[j]})
                fr = {"goals": goals}
                if not mode.startswith("tracking"):
                    fr["preferred"] = {"root": pose["root"], "rotations": pose["rotations"]}
                    if pose.get("translations"):
                        fr["preferred"]["translations"] = pose["translations"]
                frames.append(fr)
            extra = {"pose": {"root": poses[0]["root"], "rotations": poses[0]["rotations"]}}
            if any(p.get("translations") for p in poses):
                extra["pose"]["translations"] = poses[0].get("translations")
            if mode == "tracking, equal":
                extra["options"] = {"stiffness": "equal"}
            if DUMP:  # the request with the skeleton by value, for `build/bench REPS clip FILE`
                name = "%s_%s_%s.json" % (os.path.basename(path).rsplit(".", 1)[0], clip["name"], mode.replace(", ", "_"))
                with open(os.path.join(DUMP, name.replace("/", "_")), "w") as f:
                    json.dump(dict(extra, skeleton=sk, root="free", frames=frames), f)
            out = run_clip(d, imp["id"], extra, frames)
            reached = sum(f["status"] == "reached" for f in out)
            flips, errs, worst, us = 0, [], 0.0, []
            for k, f in enumerate(out):
                got_p, _ = fk(js, parent, rest_off, dict(f["pose"], translations=poses[k].get("translations")))
                if mode == "lifted":
                    e = max(math.dist(got_p[i], rec[k][0][i]) for i in above) * mm if above else 0
                    errs.append(e)
                else:
                    es = [math.dist(a, b) * mm for a, b in zip(got_p, rec[k][0])]
                    errs.append(sum(es) / len(es))
                    worst = max(worst, max(es))
                us.append(f["solve_us"])
                if k:
                    for i in range(len(js)):
                        if angle_between(f["pose"]["rotations"][i], out[k - 1]["pose"]["rotations"][i]) > 30 and \
                                angle_between(poses[k]["rotations"][i], poses[k - 1]["rotations"][i]) < 10:
                            flips += 1
                            if os.environ.get("MOCAP_FLIPS"):  # where each flip is, on stderr
                                sys.stderr.write("flip: %s %s %s frame %d joint %s: %.1f deg (recording %.1f)\n" % (
                                    os.path.basename(path), clip["name"], mode, k, js[i]["name"],
                                    angle_between(f["pose"]["rotations"][i], out[k - 1]["pose"]["rotations"][i]),
                                    angle_between(poses[k]["rotations"][i], poses[k - 1]["rotations"][i])))
            moving = any(p.get("translations") != poses[0].get("translations") for p in poses)
            label = mode + ("*" if mode.startswith("tracking") and moving else "")
            rows.append((os.path.basename(path), clip["name"], label, len(out), reached, flips,
                         sum(errs) / len(errs), max(errs) if mode == "lifted" else worst, pct(us, 0.5), pct(us, 0.99)))
    return rows


def _ancestors(parent, i):
    out = []
    while i >= 0:
        out.append(i)
        i = parent[i]
    return out


def _below_legs(parent, legs, i):
    return any(k in legs for k in _ancestors(parent, i))


FAMILY = [("xyz", {"order": "XYZ"}), ("alongx", {"alongx": True, "rootx": 90.0}), ("turn30", {"turn": 30.0, "seed": 9}),
          ("turn90", {"turn": 90.0, "seed": 5}), ("rootx", {"rootx": 90.0}), ("zxy", {"order": "ZXY"})]


def family(paths, out_dir):
    """paths, and each BVH among them written on FAMILY's rigs into out_dir."""
    import bvhvar
    os.makedirs(out_dir, exist_ok=True)
    out = []
    for path in paths:
        out.append(path)
        if not path.lower().endswith(".bvh"):
            continue
        joints, frame_time, frames = bvhvar.read(path)
        for name, opts in FAMILY:
            args = {"order": "keep", "six": False, "alongx": False, "rootx": 0.0, "turn": 0.0, "seed": 1}
            args.update(opts)
            dst = os.path.join(out_dir, os.path.basename(path)[:-4] + "_" + name + ".bvh")
            bvhvar.write(dst, [dict(j) for j in joints], frame_time, frames, args)
            out.append(dst)
    return out


def summary(rows):
    track = [r for r in rows if r[2] == "tracking"]
    if not track:
        return
    frames = sum(r[3] for r in track)
    good = sum(1 for r in track if r[4] == r[3] and r[5] == 0 and r[6] <= 25 and r[8] <= 50 and r[9] <= 500)
    print("summary: %d clips tracked, %d frames, %d not reached, %d flips, mean error %.1f mm (worst clip %.1f), "
          "median of the clips' medians %.0f us, worst p99 %.0f us; %d of %d clips meet every target"
          % (len(track), frames, frames - sum(r[4] for r in track), sum(r[5] for r in track),
             sum(r[6] for r in track) / len(track), max(r[6] for r in track),
             sorted(r[8] for r in track)[len(track) // 2], max(r[9] for r in track), good, len(track)))


def main():
    args = sys.argv[1:]
    limits = "humanoid"
    out_dir = None
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt.startswith("--limits="):
            limits = opt.split("=", 1)[1]
        elif opt.startswith("--family="):
            out_dir = opt.split("=", 1)[1]
        elif opt.startswith("--dump="):
            global DUMP
            DUMP = opt.split("=", 1)[1]
            os.makedirs(DUMP, exist_ok=True)
    d = pyharness.Daemon(args[0], "--max-import-body", "67108864", "--memory-budget", "1073741824",
                         "--max-clip-body", "268435456", "--deadline-ms", "600000", "--max-frames", "100000")
    try:
        paths = family(args[1:], out_dir) if out_dir else args[1:]
        every = []
        print("limits=%s" % limits)
        print("| file | clip | mode | frames | reached | flips | mean mm | worst mm | median us | p99 us |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for path in paths:
            rows = measure(d, path, limits)
            if rows is None:
                print("| %s | - | not a humanoid | | | | | | | |" % os.path.basename(path))
                continue
            for r in rows:
                print("| %s | %s | %s | %d | %d | %d | %.1f | %.1f | %.0f | %.0f |" % r)
            every += rows
            sys.stdout.flush()
        summary(every)
    finally:
        d.stop()


if __name__ == "__main__":
    main()
