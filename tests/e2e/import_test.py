#!/usr/bin/env python3
"""import_test.py - POST /v1/import against a real daemon, on files this test writes itself.

A BVH writer here makes the quirks of real files (per-joint rotation orders, six channels on
any joint, CRLF, a Frames: line that disagrees with the data, zero-length bones, End Sites, a
ground-level root whose child carries the motion, odd spacing). Each file is imported and every
frame's pose is put through forward kinematics as DESIGN.md defines it (world rotation =
parent's world rotation x local; position = parent's + parent's world rotation x the offset or
translation); the joints must land where the file's own kinematics (computed here with
rotation matrices, independently of ikd) put them, within 1e-9 of the skeleton's size. Bad
files get 400 naming the line.

usage: import_test.py IKD_BIN   (prints "N passed, N failed"; exit 1 on a failure)
"""
import http.client
import json
import math
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyharness  # noqa: E402

IKD = sys.argv[1]
VERBOSE = bool(os.environ.get("IKD_TEST_VERBOSE"))


class Daemon(pyharness.Daemon):
    def __init__(self, *flags):
        super().__init__(IKD, *flags)


# ---- a BVH writer with the quirks of real files -------------------------------------------

AXES = "XYZ"


def random_skeleton(rng):
    """Joints (name, parent, offset, channels, end_site): a root, a tree of 4-24 joints, End Sites on the leaves."""
    joints = []
    ground = rng.random() < 0.3  # a ground-level root without motion; its child carries it
    joints.append(["Root" if ground else "Hips", -1, [rng.uniform(-1, 1), 0 if ground else rng.uniform(0, 90), 0],
                   [] if ground else ["Xposition", "Yposition", "Zposition"] + rot_order(rng), False])
    if ground:
        joints.append(["Hips", 0, [0, rng.uniform(80, 100), 0], ["Xposition", "Yposition", "Zposition"] + rot_order(rng),
                       False])
    n = rng.randint(4, 24)
    for i in range(n):
        parent = rng.randrange(len(joints))
        zero = rng.random() < 0.1
        off = [0, 0, 0] if zero else [rng.uniform(-20, 20), rng.uniform(-20, 20), rng.uniform(-20, 20)]
        chans = rot_order(rng)
        if rng.random() < 0.15:  # six channels on an inner joint (IK control bones, stretchy rigs)
            chans = ["Xposition", "Yposition", "Zposition"] + chans
            rng.shuffle(chans) if rng.random() < 0.3 else None
        name = "J%d" % i if rng.random() < 0.8 else "Bip01 L J%d" % i  # 3ds Max Biped names hold spaces
        joints.append([name, parent, off, chans, False])
    has_child = {j[1] for j in joints}
    for i, j in enumerate(list(joints)):
        if i not in has_child:
            joints.append([j[0] + "_End", i, [rng.uniform(-5, 5), rng.uniform(1, 10), 0], [], True])
    # the file's order: depth first, children in the order they were made
    order, children = [], {}
    for i, j in enumerate(joints):
        children.setdefault(j[1], []).append(i)

    def visit(i):
        order.append(i)
        for c in children.get(i, []):
            visit(c)

    visit(0)
    where = {old: new for new, old in enumerate(order)}
    return [[joints[i][0], where[joints[i][1]] if joints[i][1] >= 0 else -1] + joints[i][2:] for i in order]


def rot_order(rng):
    o = ["Xrotation", "Yrotation", "Zrotation"]
    rng.shuffle(o)
    return o


def write_bvh(rng, joints, frames, frame_time, crlf, lie):
    nl = "\r\n" if crlf else "\n"
    children = {}
    for i, j in enumerate(joints):
        children.setdefault(j[1], []).append(i)
    out = ["HIERARCHY"]

    def block(i, depth):
        name, parent, off, chans, end = joints[i]
        pad = "\t" * depth if rng.random() < 0.5 else "  " * depth
        if end:
            out.append(pad + "End Site")
        else:
            out.append(pad + ("ROOT " if parent < 0 else "JOINT ") + name)
        if rng.random() < 0.2:  # the brace on the name's line
            out[-1] += " {"
        else:
            out.append(pad + "{")
        out.append(pad + "  OFFSET %r %r %r" % tuple(off))
        if not end:
            out.append(pad + "  CHANNELS %d %s" % (len(chans), " ".join(chans)))
        for c in children.get(i, []):
            block(c, depth + 1)
        out.append(pad + "}")

    block(0, 0)
    out.append("MOTION")
    out.append("Frames: %d" % (len(frames) + (1 if lie else 0)))
    out.append("Frame Time: %r" % frame_time)
    for f in frames:
        out.append(" ".join(repr(v) for v in f))
    return (nl.join(out) + nl).encode()


def random_frames(rng, joints, n):
    """Smooth channel values: positions in units, rotations up to 170 degrees."""
    chans = [(i, c) for i, j in enumerate(joints) for c in j[3]]
    phase = [(rng.uniform(0, 6.28), rng.uniform(0.02, 0.2), rng.uniform(5, 170)) for _ in chans]
    frames = []
    for k in range(n):
        row = []
        for (i, c), (p, w, a) in zip(chans, phase):
            if c.endswith("position"):
                row.append(round(a / 10 * math.sin(p + w * k), 6))
            else:
                row.append(round(a * math.sin(p + w * k), 6))
        frames.append(row)
    return frames


# ---- the file's own kinematics (rotation matrices) ----------------------------------------

def mat_axis(axis, deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    if axis == "X":
        return [[1, 0, 0], [0, c, -s], [0, s, c]]
    if axis == "Y":
        return [[c, 0, s], [0, 1, 0], [-s, 0, c]]
    return [[c, -s, 0], [s, c, 0], [0, 0, 1]]


def mm(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def mv(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


def bvh_fk(joints, frame, scale):
    """World positions of every joint: M = T(offset + position channels) R(c1) R(c2) R(c3)."""
    at, world_r, world_p = 0, [], []
    for name, parent, off, chans, end in joints:
        r = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        t = [o * scale for o in off]
        for c in chans:
            v = frame[at]
            at += 1
            if c.endswith("rotation"):
                r = mm(r, mat_axis(c[0], v))
            else:
                t[AXES.index(c[0])] += v * scale
        if parent < 0:
            world_r.append(r)
            world_p.append(t)
        else:
            world_p.append([a + b for a, b in zip(world_p[parent], mv(world_r[parent], t))])
            world_r.append(mm(world_r[parent], r))
    return world_p


# ---- ikd's forward kinematics, as DESIGN.md defines a pose ---------------------------------

def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz]


def qrot(q, v):
    x, y, z, w = q
    p = qmul(qmul(q, [v[0], v[1], v[2], 0]), [-x, -y, -z, w])
    return p[:3]


def ikd_fk(skeleton, pose):
    js = skeleton["joints"]
    index = {j["name"]: i for i, j in enumerate(js)}
    world_q, world_p = [], []
    trans = pose.get("translations")
    for i, j in enumerate(js):
        local = pose["rotations"][i]
        if "parent" not in j:
            world_p.append(list(pose["root"]))
            world_q.append(local)
            continue
        p = index[j["parent"]]
        rp = js[p].get("rotation", [0, 0, 0, 1])  # the rest offset, in the parent's rest frame
        rest = qrot([-rp[0], -rp[1], -rp[2], rp[3]], [a - b for a, b in zip(j["position"], js[p]["position"])])
        off = trans[i] if trans and trans[i] is not None else rest
        world_p.append([a + b for a, b in zip(world_p[p], qrot(world_q[p], off))])
        world_q.append(qmul(world_q[p], local))
    return world_p


# ---- the checks -------------------------------------------------------------------------

def test_generated_bvh_round_trip():
    d = Daemon()
    try:
        rng = random.Random(7)
        frames_checked, worst = 0, 0.0
        for case in range(40):
            joints = random_skeleton(rng)
            n = rng.randint(1, 120)
            frames = random_frames(rng, joints, n)
            scale = rng.choice([1, 0.01, 2.5])
            crlf, lie = case % 3 == 0, case % 4 == 1
            body = write_bvh(rng, joints, frames, 1 / 30, crlf, lie)
            path = "/v1/import" + ("?scale=%r" % scale if scale != 1 else "")
            s, r = d.post(path, body, "application/x-bvh" if case % 2 else None)
            assert s == 200, (case, r)
            assert r["format"] == "bvh" and len(r["skeleton"]["joints"]) == len(joints), case
            names = [j["name"] for j in r["skeleton"]["joints"]]
            assert names == [j[0] for j in joints], (case, names)
            assert r["effectors"] == [j["name"] for j in r["skeleton"]["joints"]
                                      if not any(k.get("parent") == j["name"] for k in r["skeleton"]["joints"])]
            assert any(w["code"] == "frame_count" for w in r["warnings"]) == lie, (case, r["warnings"])
            clip = r["clips"][0]
            assert abs(clip["fps"] - 30) < 1e-9 and len(clip["poses"]) == n, (case, clip["fps"], len(clip["poses"]))
            sk = r["skeleton"]
            ps = [j["position"] for j in sk["joints"]]
            size = max(max(abs(a - b) for a, b in zip(p, ps[0])) for p in ps) or 1.0
            for k in range(n):
                want = bvh_fk(joints, frames[k], scale)
                got = ikd_fk(sk, clip["poses"][k])
                err = max(math.dist(a, b) for a, b in zip(want, got)) / size
                worst = max(worst, err)
                assert err < 1e-9, "case %d frame %d: joints %.3g of the size off" % (case, k, err)
                frames_checked += 1
        # the server's own validation takes the skeleton: a solve on it works
        s, r2 = d.post("/v1/solve/skeleton", json.dumps({
            "skeleton": sk, "goals": [{"joint": r["effectors"][0], "position": ps[names.index(r["effectors"][0])]}]}),
            "application/json")
        assert s == 200, r2
        if VERBOSE:
            print("bvh round trip: %d frames, worst %.2g of the size" % (frames_checked, worst), file=sys.stderr)
        assert frames_checked > 1000
    finally:
        d.stop()


def test_bvh_several_roots():
    """A BVH with two ROOT hierarchies (a performer and a prop, or two performers) imports under a
    root made at the origin, with a bvh_roots warning, and every frame of both puts each joint where
    the file's own kinematics do."""
    d = Daemon()
    try:
        rng = random.Random(29)
        for case in range(6):
            parts = [random_skeleton(rng) for _ in range(2)]
            n = rng.randint(2, 40)
            frames = [random_frames(rng, j, n) for j in parts]
            bodies = [write_bvh(rng, j, f, 1 / 30, False, False).decode() for j, f in zip(parts, frames)]
            if case == 1:  # the first performer's root named as the made one would be
                bodies[0] = bodies[0].replace("ROOT Hips", "ROOT root").replace("ROOT Root", "ROOT root")
            heads = [b.split("MOTION")[0] for b in bodies]
            text = heads[0] + heads[1].replace("HIERARCHY\n", "") + "MOTION\nFrames: %d\nFrame Time: %r\n" % (n, 1 / 30)
            text += "".join(" ".join(repr(v) for v in a + b) + "\n" for a, b in zip(*frames))
            s, r = d.post("/v1/import", text.encode())
            assert s == 200, (case, r)
            sk = r["skeleton"]
            assert len(sk["joints"]) == 1 + len(parts[0]) + len(parts[1]), case
            assert "parent" not in sk["joints"][0] and sk["joints"][0]["position"] == [0, 0, 0], sk["joints"][0]
            names = [j["name"] for j in sk["joints"]]
            assert len(set(names)) == len(names), names
            assert any(w["code"] == "bvh_roots" for w in r["warnings"]), r["warnings"]
            ps = [j["position"] for j in sk["joints"]]
            size = max(max(abs(a - b) for a, b in zip(p, ps[0])) for p in ps) or 1.0
            for k, pose in enumerate(r["clips"][0]["poses"]):
                want = [[0, 0, 0]] + bvh_fk(parts[0], frames[0][k], 1) + bvh_fk(parts[1], frames[1][k], 1)
                got = ikd_fk(sk, pose)
                err = max(math.dist(a, b) for a, b in zip(want, got)) / size
                assert err < 1e-9, (case, k, err)
    finally:
        d.stop()


def test_bvh_untidy_header():
    """Header quirks of real writers import to the tidy file's clip: `Frames:12` and `Time:0.03`
    written together with their numbers, an End Site with `CHANNELS 0`; a Frame Time of 0 or less
    is taken as 1/30 s with a frame_time warning on its line; a file that ends after its hierarchy
    imports its skeleton with no clips and a no_motion warning; a joint without a CHANNELS line
    is read as CHANNELS 0."""
    d = Daemon()
    try:
        rng = random.Random(31)
        tried = 0
        for case in range(8):
            joints = random_skeleton(rng)
            frames = random_frames(rng, joints, rng.randint(2, 30))
            tidy = write_bvh(rng, joints, frames, 1 / 30, False, False).decode()
            s, want = d.post("/v1/import", tidy.encode())
            assert s == 200 and "links" not in want, want  # links: URDF's alone
            head, motion = tidy.split("MOTION")
            lines = motion.split("\n")
            variants = [
                head + "MOTION" + motion.replace("Frames: ", "Frames:").replace("Time: ", "Time:"),
                head.replace("}", "CHANNELS 0\n}", 1) + "MOTION" + motion
                if "End Site" in head.split("}")[0] else None,
            ]
            for v in variants:
                if v is None:
                    continue
                s, r = d.post("/v1/import", v.encode())
                assert s == 200 and r["clips"] == want["clips"] and r["warnings"] == want["warnings"], (case, r)
                tried += 1
            # a rig exported without motion: its skeleton, no clips, a no_motion warning
            s, r = d.post("/v1/import", head.encode())
            assert s == 200 and r["skeleton"] == want["skeleton"] and r["clips"] == [], (case, r)
            assert [(w["code"], w["field"]) for w in r["warnings"]] == [("no_motion", "MOTION")], r["warnings"]
            ft_line = next(i for i, l in enumerate(lines) if l.startswith("Frame Time"))
            for zero in ("0", "-0.1", "0.0e0"):
                text = head + "MOTION" + "\n".join(lines[:ft_line] + ["Frame Time: " + zero] + lines[ft_line + 1:])
                s, r = d.post("/v1/import", text.encode())
                line = tidy.count("\n", 0, tidy.index("Frame Time")) + 1
                assert s == 200 and r["clips"][0]["poses"] == want["clips"][0]["poses"], (case, zero, r)
                assert ("frame_time", "line %d" % line) in [(w["code"], w["field"]) for w in r["warnings"]], r["warnings"]
        assert tried > 10, tried  # the End Site variant ran too
        # a joint left without a CHANNELS line (a fixed one) is read as CHANNELS 0
        fixed = ("HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
                 "JOINT Fixed\n{\nOFFSET 0 5 0\nCHANNELS 0\nJOINT Chest\n{\nOFFSET 0 10 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
                 "End Site\n{\nOFFSET 0 10 0\n}\n}\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.04\n0 90 0 0 0 0 10 0 0\n0 91 0 5 0 0 12 0 0\n")
        s, want = d.post("/v1/import", fixed.encode())
        assert s == 200 and len(want["skeleton"]["joints"]) == 4, want
        s, r = d.post("/v1/import", fixed.replace("CHANNELS 0\n", "").encode())
        assert s == 200 and r == want, r
        s, r = d.post("/v1/import", fixed.replace("CHANNELS 0\n", "ROTATION 0\n").encode())
        assert s == 400 and r["error"]["field"] == "line 9", r
        # an End Site keeps no channels but 0
        bad = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 1 0\nCHANNELS 3\n}\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0\n"
        s, r = d.post("/v1/import?format=bvh", bad.encode())
        assert s == 400 and r["error"]["field"] == "line 9", r
        s, r = d.post("/v1/import?format=bvh", bad.replace("Frame Time: 0.1", "Frame Time:x").replace("CHANNELS 3\n}", "}").encode())
        assert s == 400 and r["error"]["field"] == "line 13" and "'x'" in r["error"]["message"], r
    finally:
        d.stop()


def test_resampled_clip():
    d = Daemon()
    try:
        rng = random.Random(3)
        joints = random_skeleton(rng)
        frames = random_frames(rng, joints, 61)
        body = write_bvh(rng, joints, frames, 1 / 30, False, False)
        s, r = d.post("/v1/import?fps=60", body)
        assert s == 200, r
        clip = r["clips"][0]
        assert clip["fps"] == 60 and len(clip["poses"]) == 121, (clip["fps"], len(clip["poses"]))
        sk = r["skeleton"]
        ps = [j["position"] for j in sk["joints"]]
        size = max(math.dist(p, ps[0]) for p in ps) or 1.0
        for k in range(0, 121, 2):  # every other frame is one of the file's
            want = bvh_fk(joints, frames[k // 2], 1)
            got = ikd_fk(sk, clip["poses"][k])
            assert max(math.dist(a, b) for a, b in zip(want, got)) / size < 1e-9, k
    finally:
        d.stop()


def test_bad_files_name_the_line():
    d = Daemon("--max-joints", "64")
    try:
        good = b"HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n" \
               b" End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.0333\n0 0 0\n"
        s, r = d.post("/v1/import", good)
        assert s == 200, r
        cases = [
            (good.replace(b"Yrotation", b"Wrotation"), 400, "line 5"),
            (good.replace(b"OFFSET 0 1 0", b"OFFSET 0 one 0"), 400, "line 8"),
            (good[:40], 400, None),
            (good.replace(b"0.0333\n0 0 0\n", b"0.0333\n0 0 x\n"), 400, "line 14"),
            (good.replace(b"Frame Time: 0.0333", b"Frame Time: zero"), 400, "line 13"),
            (b"HIERARCHY\r\nROOT A\r\n{\r\n OFFSET 0 0 0\r\n CHANNELS 7 Xrotation\r\n", 400, "line 5"),
            (good.replace(b"ROOT Hips", b"ROOT " + b"Bip01 " * 43), 400, "line 2"),  # a name with blanks, 257 bytes
            (good.replace(b"MOTION", b"ROOT Prop\n{\n OFFSET 0 oops 0\nMOTION"), 400, "line 13"),  # a second ROOT, broken
        ]
        for body, status, field in cases:
            s, r = d.post("/v1/import", body, "application/x-bvh")
            assert s == status, (body[:60], s, r)
            assert r["error"]["code"] == "invalid_request", r
            if field:
                assert r["error"]["field"] == field, (r["error"], field)
        deep = b"HIERARCHY\nROOT J\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n" + \
               b"".join(b"JOINT J%d\n{\n OFFSET 0 1 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n" % i for i in range(70))
        s, r = d.post("/v1/import", deep)
        assert s == 413 and r["error"]["code"] == "payload_too_large", r

        def two_roots(k):  # two ROOT chains of k joints and an End Site each: 2 (k + 1) joints and the made root
            part = lambda name: (b"ROOT %s\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n" % name +
                                 b"".join(b"JOINT %s%d\n{\n OFFSET 0 1 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n" % (name, i)
                                          for i in range(k - 1)) + b" End Site\n {\n  OFFSET 0 1 0\n }\n" + b"}\n" * k)
            return b"HIERARCHY\n" + part(b"A") + part(b"B") + b"MOTION\nFrames: 1\nFrame Time: 0.0333\n" + \
                b" ".join([b"0"] * (6 * k)) + b"\n"
        s, r = d.post("/v1/import", two_roots(30))  # 63 joints of --max-joints 64
        assert s == 200 and len(r["skeleton"]["joints"]) == 63, r
        s, r = d.post("/v1/import", two_roots(31))  # the made root is the 65th
        assert s == 413 and r["error"]["code"] == "payload_too_large", r
        s, r = d.post("/v1/import", b"not a file at all")
        assert s == 415 and r["error"]["field"] == "format", r
        s, r = d.post("/v1/import?format=gltf", b'{"asset": {"version": "2.0"}}')
        assert s == 400 and r["error"]["field"] == "nodes", r
        s, r = d.post("/v1/import?scale=-1", good)
        assert s == 400 and r["error"]["field"] == "query.scale", r
        s, r = d.post("/v1/import", good, "image/png")
        assert s == 415, r
    finally:
        d.stop()



def arm(n, bend):
    return {"joints": [{"name": "j%d" % i, "position": [0, i * 0.3, bend * i * i * 0.01],
                        "constraint": {"type": "hinge", "axis": [1, 0, 0], "min_deg": -120, "max_deg": 120}}
                       for i in range(n)]}


def test_skeletons_by_reference():
    a, b = Daemon(), Daemon()
    try:
        sk = arm(6, 1)
        s, r = a.post("/v1/skeletons", json.dumps({"skeleton": sk}), "application/json")
        assert s == 200 and re.fullmatch(r"sk_[0-9a-f]{32}", r["id"]) and r["joints"] == 6, r
        sid = r["id"]
        # the same skeleton written otherwise (spacing, key order, -0) has the same id on another instance
        other = {"joints": [{"constraint": j["constraint"], "position": [(-0.0 if v == 0 else v) for v in j["position"]],
                             "name": j["name"]} for j in sk["joints"]]}
        s, r = b.post("/v1/skeletons", json.dumps({"skeleton": other}, indent=3), "application/json")
        assert s == 200 and r["id"] == sid, (r, sid)
        s, r = b.post("/v1/skeletons", json.dumps({"skeleton": arm(6, 2)}), "application/json")
        assert r["id"] != sid, "another skeleton, another id"
        goals = [{"joint": "j5", "position": [0, 1.0, 0.6]}]
        s, by_ref = a.post("/v1/solve/skeleton", json.dumps({"skeleton": sid, "goals": goals}), "application/json")
        s2, whole = a.post("/v1/solve/skeleton", json.dumps({"skeleton": sk, "goals": goals}), "application/json")
        assert s == 200 and s2 == 200 and by_ref["pose"] == whole["pose"], (by_ref, whole)
        # a kept skeleton is not validated again (its derived fields and size are kept with it): the same
        # poses by id as by value, for clips too, and with pose.translations (which move its rest)
        frames = [{"goals": [{"joint": "j5", "position": [0, 1.0 - 0.02 * k, 0.6]}]} for k in range(5)]
        for extra in ({}, {"pose": {"root": [0, 0, 0], "rotations": [[0, 0, 0, 1]] * 6,
                                    "translations": [None, [0, 0.3, 0], None, None, None, None]}}):
            s, by_ref = a.post("/v1/solve/clip", json.dumps(dict(extra, skeleton=sid, frames=frames)), "application/json")
            s2, whole = a.post("/v1/solve/clip", json.dumps(dict(extra, skeleton=sk, frames=frames)), "application/json")
            assert s == 200 and s2 == 200, (by_ref, whole)
            assert [f["pose"] for f in by_ref["frames"]] == [f["pose"] for f in whole["frames"]], (by_ref, whole)
        # an instance that does not hold it: 409 on the field; batch items get theirs in their slot
        c = Daemon()
        try:
            s, r = c.post("/v1/solve/skeleton", json.dumps({"skeleton": sid, "goals": goals}), "application/json")
            assert s == 409 and r["error"]["code"] == "unknown_skeleton" and r["error"]["field"] == "skeleton", r
            s, r = c.post("/v1/solve/clip", json.dumps({"skeleton": sid, "frames": [{"goals": goals}]}), "application/json")
            assert s == 409 and r["error"]["field"] == "skeleton", r
            s, r = c.post("/v1/solve/batch", json.dumps({"problems": [
                {"skeleton": sk, "goals": goals}, {"skeleton": sid, "goals": goals}]}), "application/json")
            assert s == 200 and "pose" in r["results"][0], r
            assert r["results"][1]["error"]["code"] == "unknown_skeleton", r
            assert r["results"][1]["error"]["field"] == "problems[1].skeleton", r
            s, r = c.post("/v1/skeletons", json.dumps({"skeleton": sk}), "application/json")
            s, r = c.post("/v1/solve/skeleton", json.dumps({"skeleton": sid, "goals": goals}), "application/json")
            assert s == 200, r
            s, r = c.post("/v1/skeletons", json.dumps({"skeleton": sid}), "application/json")
            assert s == 400 and r["error"]["field"] == "skeleton", r
            s, r = c.post("/v1/skeletons", json.dumps({"skeleton": {"joints": [[0, 0, 0], [0, "x", 0]]}}), "application/json")
            assert s == 400 and r["error"]["field"] == "skeleton.joints[1]", r
        finally:
            c.stop()
    finally:
        a.stop()
        b.stop()


def test_small_cache_evicts_oldest():
    d = Daemon("--skeleton-cache", "20000")
    try:
        base = d.metric("ikd_memory_held_bytes")
        ids = []
        for k in range(40):
            s, r = d.post("/v1/skeletons", json.dumps({"skeleton": arm(3, k + 1)}), "application/json")
            assert s == 200, r
            ids.append(r["id"])
        # a reply is charged until libmicrohttpd's completion callback, which may run after the client
        # has read it: wait (2 s at most) for the last request's charge to go
        end = time.time() + 2
        while True:
            held = d.metric("ikd_memory_held_bytes") - base
            if 0 < held <= 20000 or time.time() > end:
                break
            time.sleep(0.05)
        assert 0 < held <= 20000, held
        assert 0 < d.metric("ikd_skeleton_cache_bytes") <= 20000 and d.metric("ikd_skeletons_kept") < 40
        goals = [{"joint": "j2", "position": [0, 0.5, 0.2]}]
        s, r = d.post("/v1/solve/skeleton", json.dumps({"skeleton": ids[-1], "goals": goals}), "application/json")
        assert s == 200, r
        s, r = d.post("/v1/solve/skeleton", json.dumps({"skeleton": ids[0], "goals": goals}), "application/json")
        assert s == 409, r
        # a used skeleton stays: touch ids[-10] then add more; it survives
        kept = ids[-10]
        d.post("/v1/solve/skeleton", json.dumps({"skeleton": kept, "goals": goals}), "application/json")
        for k in range(8):
            d.post("/v1/skeletons", json.dumps({"skeleton": arm(3, 100 + k)}), "application/json")
        s, r = d.post("/v1/solve/skeleton", json.dumps({"skeleton": kept, "goals": goals}), "application/json")
        assert s == 200, r
    finally:
        d.stop()
    d = Daemon("--skeleton-cache", "0")
    try:
        s, r = d.post("/v1/skeletons", json.dumps({"skeleton": arm(3, 1)}), "application/json")
        assert s == 200, r
        s, r = d.post("/v1/solve/skeleton", json.dumps({"skeleton": r["id"], "goals": [{"joint": 2, "position": [0, 0.5, 0]}]}),
                      "application/json")
        assert s == 409, r
    finally:
        d.stop()


def test_imported_skeleton_by_reference():
    a, b = Daemon(), Daemon()
    try:
        rng = random.Random(11)
        joints = random_skeleton(rng)
        body = write_bvh(rng, joints, random_frames(rng, joints, 5), 1 / 30, False, False)
        s, r = a.post("/v1/import?scale=0.01", body)
        s2, r2 = b.post("/v1/import?scale=0.01", body)
        assert s == 200 and s2 == 200 and r["id"] and r["id"] == r2["id"], (r["id"], r2["id"])
        pose = r["clips"][0]["poses"][3]
        goal = {"joint": r["effectors"][0], "position": [0.0, 0.5, 0.1]}
        s, out = a.post("/v1/solve/skeleton", json.dumps({"skeleton": r["id"], "pose": {"root": pose["root"],
                        "rotations": pose["rotations"]}, "goals": [goal]}), "application/json")
        assert s == 200, out
    finally:
        a.stop()
        b.stop()


def quat_axis(axis, deg):
    n = math.sqrt(sum(a * a for a in axis))
    h = math.radians(deg) / 2
    return [axis[0] / n * math.sin(h), axis[1] / n * math.sin(h), axis[2] / n * math.sin(h), math.cos(h)]


def rest_fk(skeleton, pose):
    """ikd's forward kinematics with rest rotations: offsets in the parent's rest frame."""
    js = skeleton["joints"]
    index = {j["name"]: i for i, j in enumerate(js)}
    wq, wp = [], []
    for i, j in enumerate(js):
        local = pose["rotations"][i]
        if "parent" not in j:
            wp.append(list(pose["root"]))
            wq.append(local)
            continue
        p = index[j["parent"]]
        rp = js[p].get("rotation", [0, 0, 0, 1])
        inv = [-rp[0], -rp[1], -rp[2], rp[3]]
        off = qrot(inv, [a - b for a, b in zip(j["position"], js[p]["position"])])
        wp.append([a + b for a, b in zip(wp[p], qrot(wq[p], off))])
        wq.append(qmul(wq[p], local))
    return {j["name"]: wp[i] for i, j in enumerate(js)}


def test_clip_as_bvh_round_trip():
    d = Daemon()
    try:
        rng = random.Random(5)
        # a branching skeleton with rest rotations that are not identity, named joints
        joints = [{"name": "pelvis", "position": [0, 1, 0], "rotation": quat_axis([0, 1, 0], 30)}]
        for side, x in (("l", 0.2), ("r", -0.2)):
            joints += [{"name": "hip_" + side, "parent": "pelvis", "position": [x, 0.9, 0],
                        "rotation": quat_axis([1, 0.2, 0], 20 * x * 5)},
                       {"name": "knee_" + side, "parent": "hip_" + side, "position": [x, 0.5, 0.05]},
                       {"name": "foot_" + side, "parent": "knee_" + side, "position": [x, 0.1, 0],
                        "rotation": quat_axis([0, 0, 1], -40)}]
        joints += [{"name": "chest", "parent": "pelvis", "position": [0, 1.4, 0]},
                   {"name": "head", "parent": "chest", "position": [0, 1.7, 0.02]},
                   # a leaf named as the importer names an End Site: written back as head's End Site
                   {"name": "head_End", "parent": "head", "position": [0, 1.85, 0.05]}]
        sk = {"joints": joints}
        frames = []
        for k in range(120):
            a = 2 * math.pi * k / 120
            frames.append({"goals": [
                {"joint": "foot_l", "position": [0.2 + 0.1 * math.sin(a), 0.15 + 0.1 * math.cos(a), 0.1 * math.sin(a)]},
                {"joint": "foot_r", "position": [-0.2, 0.12 + 0.05 * math.sin(a), 0.05]},
                {"joint": "head", "position": [0.05 * math.sin(a), 1.68, 0.05]}]})
        body = {"skeleton": sk, "root": "free", "frames": frames, "fps": 60}
        c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
        c.request("POST", "/v1/solve/clip", body=json.dumps(body),
                  headers={"Content-Type": "application/json", "Accept": "application/x-bvh"})
        r = c.getresponse()
        bvh = r.read()
        assert r.status == 200 and r.getheader("Content-Type") == "application/x-bvh", (r.status, bvh[:200])
        assert b"Frame Time: 0.016666666666666666" in bvh, bvh[:800]
        s, solved = d.post("/v1/solve/clip", json.dumps(body), "application/json")
        assert s == 200, solved
        s, back = d.post("/v1/import", bvh)
        assert s == 200 and len(back["clips"][0]["poses"]) == 120, back
        names = [j["name"] for j in back["skeleton"]["joints"]]
        assert "head_End" in names and "head_End_End" not in names and bvh.count(b"JOINT head_End") == 0, names
        # written again, the imported skeleton's file has the same joints: End Sites stay End Sites
        again = {"skeleton": back["skeleton"], "root": "free", "frames": frames[:3], "fps": 60}
        c.request("POST", "/v1/solve/clip", body=json.dumps(again),
                  headers={"Content-Type": "application/json", "Accept": "application/x-bvh"})
        r = c.getresponse()
        bvh2 = r.read()
        s, back2 = d.post("/v1/import", bvh2)
        assert r.status == 200 and s == 200 and [j["name"] for j in back2["skeleton"]["joints"]] == names, back2
        size = max(math.dist(j["position"], joints[0]["position"]) for j in joints)
        worst = 0
        for k in range(120):
            want = rest_fk(sk, solved["frames"][k]["pose"])
            got = ikd_fk(back["skeleton"], back["clips"][0]["poses"][k])
            names = [j["name"] for j in back["skeleton"]["joints"]]
            for name, p in want.items():
                worst = max(worst, math.dist(p, got[names.index(name)]) / size)
        if VERBOSE:
            print("clip as BVH: worst %.2g of the size" % worst, file=sys.stderr)
        assert worst < 1e-9, worst
    finally:
        d.stop()


# ---- URDF --------------------------------------------------------------------------------

def rpy_matrix(r, p, y):
    return mm(mat_axis("Z", math.degrees(y)), mm(mat_axis("Y", math.degrees(p)), mat_axis("X", math.degrees(r))))


def random_robot(rng, arms=2):
    """A torso with `arms` 6R arms (revolute with limits, some excluding zero, some one-sided, some
    written upper first; continuous joints that still carry <limit>), a fixed flange, a prismatic
    gripper finger with a mimic twin, meshes that are absent."""
    links, joints = ["torso"], []
    for a in range(arms):
        parent = "torso"
        for k in range(6):
            name = "arm%d_j%d" % (a, k)
            child = "arm%d_l%d" % (a, k)
            links.append(child)
            kind = "continuous" if k == 5 else "revolute"
            lo, hi = sorted([rng.uniform(-3, 3), rng.uniform(-3, 3)])
            if k == 2:  # past +-180 degrees, under a whole turn (Kinova JACO's joint 2: [47, 313] degrees)
                lo = rng.uniform(-2.5, 2.5)
                hi = lo + rng.uniform(3.5, 6.2)
                lo, hi = (lo, hi) if hi > math.pi else (lo + (math.pi + 0.1 - hi), math.pi + 0.1)
            if k == 3:
                lo, hi = -3.07, -0.07  # excludes the zero configuration (the Panda's joint 4)
            limit = ' <limit lower="%r" upper="%r" effort="10" velocity="1"/>' % (lo, hi)
            if k == 1:
                limit = ' <limit upper="%r" effort="10" velocity="1"/>' % hi  # one-sided: lower is 0
            if k == 4:
                limit = ' <limit lower="%r" upper="%r" effort="10" velocity="1"/>' % (hi, lo)  # the wrong way round
            joints.append(dict(name=name, type=kind, parent=parent, child=child,
                               xyz=[rng.uniform(-0.3, 0.3) for _ in range(3)], rpy=[rng.uniform(-3, 3) for _ in range(3)],
                               axis=[rng.uniform(-1, 1) for _ in range(3)], limit=limit, lo=lo, hi=hi))
            parent = child
        links.append("arm%d_flange" % a)
        joints.append(dict(name="arm%d_flange_joint" % a, type="fixed", parent=parent, child="arm%d_flange" % a,
                           xyz=[0, 0, 0.1], rpy=[0, 0, 0], axis=None, limit=""))
        links += ["arm%d_finger_l" % a, "arm%d_finger_r" % a]
        joints.append(dict(name="arm%d_finger_l_joint" % a, type="prismatic", parent="arm%d_flange" % a,
                           child="arm%d_finger_l" % a, xyz=[0, 0.02, 0.05], rpy=[0, 0, 0], axis=[0, 1, 0],
                           limit=' <limit lower="0" upper="0.04" effort="1" velocity="1"/>'))
        joints.append(dict(name="arm%d_finger_r_joint" % a, type="prismatic", parent="arm%d_flange" % a,
                           child="arm%d_finger_r" % a, xyz=[0, -0.02, 0.05], rpy=[0, 0, 0], axis=[0, -1, 0],
                           limit=' <limit lower="0" upper="0.04" effort="1" velocity="1"/>',
                           mimic=' <mimic joint="arm%d_finger_l_joint"/>' % a))
    return links, joints


def write_urdf(links, joints):
    out = ['<?xml version="1.0"?>', '<robot name="two_arms">']
    for l in links:
        out.append('  <link name="%s"><visual><geometry><mesh filename="package://absent/%s.dae"/></geometry>'
                   '</visual></link>' % (l, l))
    for j in joints:
        out.append('  <joint name="%s" type="%s">' % (j["name"], j["type"]))
        out.append('    <parent link="%s"/><child link="%s"/>' % (j["parent"], j["child"]))
        out.append('    <origin xyz="%r %r %r" rpy="%r %r %r"/>' % tuple(j["xyz"] + j["rpy"]))
        if j["axis"]:
            out.append('    <axis xyz="%r %r %r"/>' % tuple(j["axis"]))
        out.append("   " + j["limit"] + j.get("mimic", ""))
        out.append('  </joint>')
    out.append('</robot>')
    return "\n".join(out).encode()


def axis_matrix(axis, rad):
    """The turn by rad about axis (Rodrigues)."""
    n = math.sqrt(sum(v * v for v in axis))
    x, y, z = (v / n for v in axis)
    c, s, t = math.cos(rad), math.sin(rad), 1 - math.cos(rad)
    return [[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c]]


def matrix_quat(m):
    """[x, y, z, w] of a rotation matrix."""
    tr = m[0][0] + m[1][1] + m[2][2]
    if tr > 0:
        s = 2 * math.sqrt(tr + 1)
        return [(m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s, s / 4]
    i = max(range(3), key=lambda k: m[k][k])
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2 * math.sqrt(1 + m[i][i] - m[j][j] - m[k][k])
    q = [0, 0, 0, (m[k][j] - m[j][k]) / s]
    q[i], q[j], q[k] = s / 4, (m[j][i] + m[i][j]) / s, (m[k][i] + m[i][k]) / s
    return q


def whole_turns(j):
    """The whole turns (radians) a revolute joint's range is moved by on import: its middle put
    within +-180 degrees (a range past +-180 is kept, and a hinge's bounds lie within +-360)."""
    if j["type"] != "revolute" or "lower" not in j["limit"]:
        return 0.0
    lo, hi = sorted([j["lo"], j["hi"]])
    return 2 * math.pi * round((lo + hi) / 2 / (2 * math.pi)) if hi - lo < 2 * math.pi else 0.0


def urdf_frames(links, joints, values=None):
    """World frame (rotation matrix, origin) of every joint, by the URDF's own rule: at the joint
    values `values` (name -> radians; revolute and continuous joints), else at the zero
    configuration (ikd's rest)."""
    frame = {"torso": ([[1, 0, 0], [0, 1, 0], [0, 0, 1]], [0, 0, 0])}
    out = {}
    pending = list(joints)
    while pending:
        for j in list(pending):
            if j["parent"] in frame:
                r, p = frame[j["parent"]]
                q = 0.0 if values is None else values.get(j["name"], 0.0)
                wr = mm(r, rpy_matrix(*j["rpy"]))
                if q:
                    wr = mm(wr, axis_matrix(j["axis"], q))
                wp = [a + b for a, b in zip(p, mv(r, j["xyz"]))]
                frame[j["child"]] = (wr, wp)
                out[j["name"]] = (wr, wp)
                pending.remove(j)
    return out


def quat_matrix(q):
    x, y, z, w = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


def test_generated_urdf():
    d = Daemon()
    try:
        rng = random.Random(21)
        for case in range(20):
            links, joints = random_robot(rng, arms=1 + case % 3)
            body = write_urdf(links, joints)
            s, r = d.post("/v1/import", body, "application/xml" if case % 2 else None)
            assert s == 200, (case, r)
            assert r["format"] == "urdf" and r["id"] and r["clips"] == [], r
            # each link names the joint whose frame it is: the joint it is the child of, the root link joint 0
            assert r["links"] == dict({"torso": "torso"}, **{j["child"]: j["name"] for j in joints}), r["links"]
            sk = {j["name"]: j for j in r["skeleton"]["joints"]}
            assert len(sk) == len(joints) + 1 and r["skeleton"]["joints"][0]["name"] == "torso"
            # the root link is the robot's base, bolted down: fixed (it was free, and every solve turned it)
            assert r["skeleton"]["joints"][0]["constraint"] == {"type": "fixed"}, r["skeleton"]["joints"][0]
            frames = urdf_frames(links, joints)
            for j in joints:
                got = sk[j["name"]]
                wr, wp = frames[j["name"]]
                assert math.dist(got["position"], wp) < 1e-12, (j["name"], got["position"], wp)
                gr = quat_matrix(got["rotation"])
                assert max(abs(gr[a][b] - wr[a][b]) for a in range(3) for b in range(3)) < 1e-12, j["name"]
                c = got["constraint"]
                if j["type"] in ("revolute", "continuous"):
                    n = math.sqrt(sum(v * v for v in j["axis"]))
                    want = mv(wr, [v / n for v in j["axis"]])
                    assert c["type"] == "hinge" and math.dist(c["axis"], want) < 1e-12, (j["name"], c)
                    if j["type"] == "continuous":
                        assert (c.get("min_deg", -180), c.get("max_deg", 180)) == (-180, 180), c
                    elif "lower" not in j["limit"]:  # one-sided: the lower side is 0 (the URDF default), in order
                        lo, hi = sorted([0, j["hi"]])
                        assert abs(c["min_deg"] - math.degrees(lo)) < 1e-9 and \
                            abs(c["max_deg"] - math.degrees(hi)) < 1e-9, (c, j["hi"])
                    else:  # as written, past +-180 too (by whole turns where its middle is)
                        t = whole_turns(j)
                        assert abs(c["min_deg"] - math.degrees(j["lo"] - t)) < 1e-9 and \
                            abs(c["max_deg"] - math.degrees(j["hi"] - t)) < 1e-9, (c, j["lo"], j["hi"])
                else:
                    assert c["type"] == "fixed", c
            codes = [(w["code"], w["field"]) for w in r["warnings"]]
            assert ("joint_fixed", "robot.joint[arm0_finger_l_joint]") in codes, codes
            assert ("mimic", "robot.joint[arm0_finger_r_joint]") in codes, codes
            assert ("limit_missing", "robot.joint[arm0_j1].limit") in codes, codes
            assert ("limit_swapped", "robot.joint[arm0_j4].limit") in codes, codes  # written upper first
            one_sided = next(j for j in joints if j["name"] == "arm0_j1")
            assert (("limit_swapped", "robot.joint[arm0_j1].limit") in codes) == (one_sided["hi"] < 0), codes
            assert set(r["effectors"]) >= {"arm0_finger_l_joint", "arm0_finger_r_joint"}, r["effectors"]
            # joint values anywhere inside the file's limits are poses inside ikd's: the local rotations
            # they give, as a start pose, already meet the flange's 6-DoF goal and are returned unchanged
            for trial in range(3):
                values = {j["name"]: rng.uniform(-math.pi, math.pi) if j["type"] == "continuous" else
                          rng.uniform(*sorted([0, j["hi"]] if "lower" not in j["limit"] else [j["lo"], j["hi"]]))
                          for j in joints if j["type"] in ("revolute", "continuous")}
                at = urdf_frames(links, joints, values)
                world = {"torso": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}
                world.update({j["name"]: at[j["name"]][0] for j in joints})
                parent_of = {j["child"]: j["name"] for j in joints}
                rots = []
                for jj in r["skeleton"]["joints"]:
                    pr = world[parent_of.get(next((j["parent"] for j in joints if j["name"] == jj["name"]), None), "torso")] \
                        if jj["name"] != "torso" else [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
                    rots.append(matrix_quat(mm([list(x) for x in zip(*pr)], world[jj["name"]])))
                fr, fp = at["arm0_flange_joint"]
                goal = {"joint": "arm0_flange_joint", "position": fp, "rotation": matrix_quat(fr)}
                s, out = d.post("/v1/solve/skeleton", json.dumps({"skeleton": r["id"], "goals": [goal],
                                                                 "pose": {"rotations": rots}}), "application/json")
                assert s == 200 and out["status"] == "reached", (case, trial, out)
                for a, b, jj in zip(out["pose"]["rotations"], rots, r["skeleton"]["joints"]):
                    if jj["name"].startswith("arm0_j"):  # the goal's path (the other arms' joints go to rest)
                        assert min(math.dist(a, b), math.dist(a, [-v for v in b])) < 1e-9, (case, trial, jj, values)
        # the imported arm solves: a 6-DoF flange goal from the rest pose (reachable: the rest flange itself)
        flange = sk["arm0_flange_joint"]
        goal = {"joint": "arm0_flange_joint", "position": [v + 0.01 for v in flange["position"]],
                "rotation": flange["rotation"]}
        s, out = d.post("/v1/solve/skeleton", json.dumps({"skeleton": r["id"], "goals": [goal]}), "application/json")
        assert s == 200, out
        assert out["pose"]["rotations"][0] == [0, 0, 0, 1], out["pose"]["rotations"][0]  # the base stays
        # limits=none frees every joint, the base too
        s, r = d.post("/v1/import?limits=none", body, "application/xml")
        assert s == 200 and r["skeleton"]["joints"][0]["constraint"] == {"type": "none"}, r["skeleton"]["joints"][0]
    finally:
        d.stop()


def test_bad_urdf():
    d = Daemon()
    try:
        arm = ('<robot name="a"><link name="base"/><link name="l1"/>'
               '<joint name="elbow" type="revolute"><parent link="base"/><child link="l1"/>'
               '<axis xyz="0 0 1"/><limit lower="-1" upper="1"/></joint></robot>')
        s, r = d.post("/v1/import", arm.encode())
        assert s == 200 and r["format"] == "urdf", r
        # lower above upper is untidy, not bad: swapped, with a warning naming the limit
        s, r = d.post("/v1/import", arm.replace('lower="-1"', 'lower="2"').encode())
        c = r["skeleton"]["joints"][1]["constraint"]
        assert s == 200 and (round(c["min_deg"], 9), round(c["max_deg"], 9)) == (round(math.degrees(1), 9), round(math.degrees(2), 9)), r
        assert [(w["code"], w["field"]) for w in r["warnings"]] == [("limit_swapped", "robot.joint[elbow].limit")], r
        # lower equal to upper (SolidWorks' exporter, for "no limits") is kept, locked, and said
        s, r = d.post("/v1/import", arm.replace('lower="-1" upper="1"', 'lower="0" upper="0"').encode())
        c = r["skeleton"]["joints"][1]["constraint"]
        assert s == 200 and (c["min_deg"], c["max_deg"]) == (0, 0), r
        assert [(w["code"], w["field"]) for w in r["warnings"]] == [("limit_empty", "robot.joint[elbow].limit")], r
        cases = [
            (arm.replace('upper="1"', 'upper="one"'), "robot.joint[elbow].limit"),
            (arm.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>'), "robot.joint[elbow].axis"),
            (arm.replace('type="revolute"', 'type="screw"'), "robot.joint[elbow]"),
            (arm.replace('<child link="l1"/>', '<child link="base"/>'), "robot.joint[elbow].parent"),
            (arm.replace("</robot>", ""), None),
            (arm.replace('<parent link="base"/>', ''), "robot.joint[elbow]"),
        ]
        for body, field in cases:
            s, r = d.post("/v1/import?format=urdf", body.encode())
            assert s == 400 and r["error"]["code"] == "invalid_request", (body, r)
            if field:
                assert r["error"]["field"] == field, (r["error"], field)
        # an entity bomb is refused at once; an external entity is never read
        bomb = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa">' +
                "".join('<!ENTITY %s "%s">' % (chr(98 + i), ("&%s;" % chr(97 + i)) * 10) for i in range(9)) +
                ']><robot name="&j;"/>')
        t = time.time()
        s, r = d.post("/v1/import", bomb.encode(), "application/xml")
        assert s == 400 and time.time() - t < 1 and "entit" in r["error"]["message"], r
        ext = '<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]><robot name="&x;"/>'
        s, r = d.post("/v1/import", ext.encode(), "text/xml")
        assert s == 400 and "root:" not in json.dumps(r), r
    finally:
        d.stop()


# ---- humanoid roles: the naming conventions of real rigs ------------------------------------

def rig(spec):
    """'name parent role' lines ('-' for none) -> [(name, parent, role)]."""
    out = []
    for line in spec.strip().splitlines():
        name, parent, role = line.split()
        out.append((name, None if parent == "-" else parent, None if role == "-" else role))
    return out


def sided(lines, l, r):
    """Lines with {s} for the side's name part and {S} for the role suffix, for both sides."""
    return "\n".join(x.format(s=side, S=suf) for side, suf in ((l, "l"), (r, "r")) for x in lines)


RIGS = {
    "mixamo": rig("""
mixamorig:Hips - hips
mixamorig:Spine mixamorig:Hips spine
mixamorig:Spine1 mixamorig:Spine -
mixamorig:Spine2 mixamorig:Spine1 chest
mixamorig:Neck mixamorig:Spine2 neck
mixamorig:Head mixamorig:Neck head
mixamorig:HeadTop_End mixamorig:Head -
""" + sided(["mixamorig:{s}Shoulder mixamorig:Spine2 shoulder_{S}", "mixamorig:{s}Arm mixamorig:{s}Shoulder upper_arm_{S}",
             "mixamorig:{s}ForeArm mixamorig:{s}Arm lower_arm_{S}", "mixamorig:{s}Hand mixamorig:{s}ForeArm hand_{S}",
             "mixamorig:{s}HandIndex1 mixamorig:{s}Hand -", "mixamorig:{s}HandIndex2 mixamorig:{s}HandIndex1 -",
             "mixamorig:{s}UpLeg mixamorig:Hips upper_leg_{S}", "mixamorig:{s}Leg mixamorig:{s}UpLeg lower_leg_{S}",
             "mixamorig:{s}Foot mixamorig:{s}Leg foot_{S}", "mixamorig:{s}ToeBase mixamorig:{s}Foot toes_{S}"],
            "Left", "Right")),
    "unreal": rig("""
root - -
pelvis root hips
spine_01 pelvis spine
spine_02 spine_01 -
spine_03 spine_02 chest
neck_01 spine_03 neck
head neck_01 head
""" + sided(["clavicle_{S} spine_03 shoulder_{S}", "upperarm_{S} clavicle_{S} upper_arm_{S}",
             "lowerarm_{S} upperarm_{S} lower_arm_{S}", "lowerarm_twist_01_{S} lowerarm_{S} -", "hand_{S} lowerarm_{S} hand_{S}",
             "index_01_{S} hand_{S} -", "thigh_{S} pelvis upper_leg_{S}", "calf_{S} thigh_{S} lower_leg_{S}",
             "foot_{S} calf_{S} foot_{S}", "ball_{S} foot_{S} toes_{S}"], "l", "r")),
    "vrm": rig("""
J_Bip_C_Hips - hips
J_Bip_C_Spine J_Bip_C_Hips spine
J_Bip_C_Chest J_Bip_C_Spine -
J_Bip_C_UpperChest J_Bip_C_Chest chest
J_Bip_C_Neck J_Bip_C_UpperChest neck
J_Bip_C_Head J_Bip_C_Neck head
""" + sided(["J_Bip_{s}_Shoulder J_Bip_C_UpperChest shoulder_{S}", "J_Bip_{s}_UpperArm J_Bip_{s}_Shoulder upper_arm_{S}",
             "J_Bip_{s}_LowerArm J_Bip_{s}_UpperArm lower_arm_{S}", "J_Bip_{s}_Hand J_Bip_{s}_LowerArm hand_{S}",
             "J_Bip_{s}_UpperLeg J_Bip_C_Hips upper_leg_{S}", "J_Bip_{s}_LowerLeg J_Bip_{s}_UpperLeg lower_leg_{S}",
             "J_Bip_{s}_Foot J_Bip_{s}_LowerLeg foot_{S}", "J_Bip_{s}_ToeBase J_Bip_{s}_Foot toes_{S}"], "L", "R")),
    "cmu": rig("""
Hips - hips
LowerBack Hips spine
Spine LowerBack -
Spine1 Spine chest
Neck Spine1 neck
Neck1 Neck -
Head Neck1 head
""" + sided(["{s}HipJoint Hips -", "{s}UpLeg {s}HipJoint upper_leg_{S}", "{s}Leg {s}UpLeg lower_leg_{S}",
             "{s}Foot {s}Leg foot_{S}", "{s}ToeBase {s}Foot toes_{S}", "{s}Shoulder Spine1 shoulder_{S}",
             "{s}Arm {s}Shoulder upper_arm_{S}", "{s}ForeArm {s}Arm lower_arm_{S}", "{s}Hand {s}ForeArm hand_{S}",
             "{s}FingerBase {s}Hand -"], "Left", "Right").replace("LeftHipJoint", "LHipJoint").replace(
                 "RightHipJoint", "RHipJoint")),
    "biovision": rig("""
Hips - hips
Chest Hips chest
Neck Chest neck
Head Neck head
""" + sided(["{s}Collar Chest shoulder_{S}", "{s}Shoulder {s}Collar upper_arm_{S}", "{s}Elbow {s}Shoulder lower_arm_{S}",
             "{s}Wrist {s}Elbow hand_{S}", "{s}Hip Hips upper_leg_{S}", "{s}Knee {s}Hip lower_leg_{S}",
             "{s}Ankle {s}Knee foot_{S}"], "Left", "Right")),
    "rigify": rig("""
DEF-spine - hips
DEF-spine.001 DEF-spine spine
DEF-spine.002 DEF-spine.001 -
DEF-spine.003 DEF-spine.002 chest
DEF-spine.004 DEF-spine.003 neck
DEF-spine.005 DEF-spine.004 -
DEF-spine.006 DEF-spine.005 head
""" + sided(["DEF-shoulder.{s} DEF-spine.003 shoulder_{S}", "DEF-upper_arm.{s} DEF-shoulder.{s} upper_arm_{S}",
             "DEF-upper_arm.{s}.001 DEF-upper_arm.{s} -", "DEF-forearm.{s} DEF-upper_arm.{s}.001 lower_arm_{S}",
             "DEF-forearm.{s}.001 DEF-forearm.{s} -", "DEF-hand.{s} DEF-forearm.{s}.001 hand_{S}",
             "DEF-f_index.01.{s} DEF-hand.{s} -", "DEF-breast.{s} DEF-spine.003 -",
             "DEF-thigh.{s} DEF-spine upper_leg_{S}", "DEF-thigh.{s}.001 DEF-thigh.{s} -",
             "DEF-shin.{s} DEF-thigh.{s}.001 lower_leg_{S}", "DEF-shin.{s}.001 DEF-shin.{s} -",
             "DEF-foot.{s} DEF-shin.{s}.001 foot_{S}", "DEF-toe.{s} DEF-foot.{s} toes_{S}"], "L", "R")),
    "daz": rig("""
hip - hips
abdomenLower hip spine
abdomenUpper abdomenLower -
chestLower abdomenUpper -
chestUpper chestLower chest
neckLower chestUpper neck
neckUpper neckLower -
head neckUpper head
""" + sided(["{s}Collar chestUpper shoulder_{S}", "{s}ShldrBend {s}Collar upper_arm_{S}",
             "{s}ShldrTwist {s}ShldrBend -", "{s}ForearmBend {s}ShldrTwist lower_arm_{S}",
             "{s}ForearmTwist {s}ForearmBend -", "{s}Hand {s}ForearmTwist hand_{S}",
             "{s}ThighBend hip upper_leg_{S}", "{s}ThighTwist {s}ThighBend -", "{s}Shin {s}ThighTwist lower_leg_{S}",
             "{s}Foot {s}Shin foot_{S}", "{s}Toe {s}Foot toes_{S}"], "l", "r")),
    "blender": rig("""
Hips - hips
Spine Hips spine
Chest Spine chest
Neck Chest neck
Head Neck head
""" + sided(["Shoulder.{S} Chest shoulder_{S}", "UpperArm.{S} Shoulder.{S} upper_arm_{S}",
             "LowerArm.{S} UpperArm.{S} lower_arm_{S}", "Hand.{S} LowerArm.{S} hand_{S}", "UpperLeg_{s} Hips upper_leg_{S}",
             "LowerLeg_{s} UpperLeg_{s} lower_leg_{S}", "Foot_{s} LowerLeg_{s} foot_{S}", "Toes_{s} Foot_{s} toes_{S}"],
            "L", "R").replace(".l ", ".L ").replace(".r ", ".R ").replace(".l\n", ".L\n").replace(".r\n", ".R\n")),
    # a rig's own prefix on every name (MotionBuilder's characterised skeletons)
    "motionbuilder": rig("""
Character1_Reference - -
Character1_Hips Character1_Reference hips
Character1_Spine Character1_Hips spine
Character1_Spine1 Character1_Spine chest
Character1_Neck Character1_Spine1 neck
Character1_Head Character1_Neck head
""" + sided(["Character1_{s}Shoulder Character1_Spine1 shoulder_{S}", "Character1_{s}Arm Character1_{s}Shoulder upper_arm_{S}",
             "Character1_{s}ForeArm Character1_{s}Arm lower_arm_{S}", "Character1_{s}Hand Character1_{s}ForeArm hand_{S}",
             "Character1_{s}UpLeg Character1_Hips upper_leg_{S}", "Character1_{s}Leg Character1_{s}UpLeg lower_leg_{S}",
             "Character1_{s}Foot Character1_{s}Leg foot_{S}", "Character1_{s}ToeBase Character1_{s}Foot toes_{S}"],
            "Left", "Right")),
    # joints named by where they sit (SMPL: L_Shoulder turns the upper arm, L_Foot is the toes)
    "smpl": rig("""
Pelvis - hips
Spine1 Pelvis spine
Spine2 Spine1 -
Spine3 Spine2 chest
Neck Spine3 neck
Head Neck head
""" + sided(["{s}_Collar Spine3 shoulder_{S}", "{s}_Shoulder {s}_Collar upper_arm_{S}", "{s}_Elbow {s}_Shoulder lower_arm_{S}",
             "{s}_Wrist {s}_Elbow hand_{S}", "{s}_Hand {s}_Wrist -", "{s}_Hip Pelvis upper_leg_{S}",
             "{s}_Knee {s}_Hip lower_leg_{S}", "{s}_Ankle {s}_Knee foot_{S}", "{s}_Foot {s}_Ankle toes_{S}"], "L", "R")),
    # a prefix of its own, and the legs on a pelvis beside the spine (Reallusion Character Creator)
    "reallusion": rig("""
CC_Base_BoneRoot - -
CC_Base_Hip CC_Base_BoneRoot hips
CC_Base_Pelvis CC_Base_Hip -
CC_Base_Waist CC_Base_Hip spine
CC_Base_Spine01 CC_Base_Waist -
CC_Base_Spine02 CC_Base_Spine01 chest
CC_Base_NeckTwist01 CC_Base_Spine02 neck
CC_Base_NeckTwist02 CC_Base_NeckTwist01 -
CC_Base_Head CC_Base_NeckTwist02 head
""" + sided(["CC_Base_{s}_Clavicle CC_Base_Spine02 shoulder_{S}", "CC_Base_{s}_Upperarm CC_Base_{s}_Clavicle upper_arm_{S}",
             "CC_Base_{s}_Forearm CC_Base_{s}_Upperarm lower_arm_{S}", "CC_Base_{s}_Hand CC_Base_{s}_Forearm hand_{S}",
             "CC_Base_{s}_Thigh CC_Base_Pelvis upper_leg_{S}", "CC_Base_{s}_Calf CC_Base_{s}_Thigh lower_leg_{S}",
             "CC_Base_{s}_Foot CC_Base_{s}_Calf foot_{S}", "CC_Base_{s}_ToeBase CC_Base_{s}_Foot toes_{S}"], "L", "R")),
}


# the segments of limbs cut in parts (joints between two roles) and the twist each may turn (0: none)
SEGMENTS = {"rigify": {"DEF-upper_arm.L.001": 90, "DEF-forearm.R.001": 80, "DEF-thigh.L.001": 45, "DEF-shin.R.001": 0},
            "daz": {"lShldrTwist": 90, "rForearmTwist": 80, "lThighTwist": 45}}


def rig_bvh(rng, joints):
    """A BVH of the rig (parents before children, each parent's children shuffled) with random offsets."""
    children = {}
    for name, parent, _ in joints:
        children.setdefault(parent, []).append(name)
    for c in children.values():
        rng.shuffle(c)
    out = ["HIERARCHY"]

    def block(name, depth):
        pad = "  " * depth
        out.append(pad + ("ROOT " if depth == 0 else "JOINT ") + name)
        out.append(pad + "{")
        off = [rng.uniform(-20, 20) for _ in range(3)] if depth else [0, 90, 0]
        out.append(pad + "  OFFSET %r %r %r" % tuple(off))
        out.append(pad + "  CHANNELS %s" % ("6 Xposition Yposition Zposition Zrotation Xrotation Yrotation" if depth == 0
                                             else "3 Zrotation Xrotation Yrotation"))
        for c in children.get(name, []):
            block(c, depth + 1)
        if not children.get(name):
            out.append(pad + "  End Site")
            out.append(pad + "  {")
            out.append(pad + "    OFFSET 0 5 0")
            out.append(pad + "  }")
        out.append(pad + "}")

    block(children[None][0], 0)
    count = sum(1 for line in out if "CHANNELS" in line)
    out += ["MOTION", "Frames: 1", "Frame Time: 0.0333333", " ".join(["0"] * (3 + 3 * count))]
    return ("\n".join(out) + "\n").encode()


def test_humanoid_roles():
    """Each naming convention's roles, whatever the offsets (rest pose) and the order of siblings; no
    humanoid without a foot or with ?humanoid=off; a random skeleton is none."""
    d = Daemon()
    try:
        rng = random.Random(11)
        for conv, joints in RIGS.items():
            want = {role: name for name, _, role in joints if role}
            for case in range(6):
                s, r = d.post("/v1/import", rig_bvh(rng, joints), "application/x-bvh")
                assert s == 200, (conv, r)
                assert r["humanoid"] == want, (conv, case, r["humanoid"], want)
                assert r["effectors"] == [want["hand_l"], want["hand_r"], want["foot_l"], want["foot_r"], want["head"]]
            s, r = d.post("/v1/import?humanoid=off", rig_bvh(rng, joints), "application/x-bvh")
            assert s == 200 and r["humanoid"] is None, (conv, r["humanoid"])
            footless = [j for j in joints if j[2] not in ("foot_l", "toes_l")]  # the toes' parent is the foot
            s, r = d.post("/v1/import", rig_bvh(rng, footless), "application/x-bvh")
            assert s == 200 and r["humanoid"] is None, (conv, "footless", r["humanoid"])
        for case in range(20):
            joints = random_skeleton(rng)
            s, r = d.post("/v1/import", write_bvh(rng, joints, random_frames(rng, joints, 2), 1 / 30, False, False))
            assert s == 200 and r["humanoid"] is None, r["humanoid"]
    finally:
        d.stop()


VRM_BONES = {"hips": "hips", "spine": "spine", "chest": "upperChest", "neck": "neck", "head": "head"}
for _s, _side in (("l", "left"), ("r", "right")):
    for _role, _bone in (("shoulder", "Shoulder"), ("upper_arm", "UpperArm"), ("lower_arm", "LowerArm"), ("hand", "Hand"),
                         ("upper_leg", "UpperLeg"), ("lower_leg", "LowerLeg"), ("foot", "Foot"), ("toes", "Toes")):
        VRM_BONES["%s_%s" % (_role, _s)] = _side + _bone


def vrm_gltf(joints, world, version, bones=None):
    """A .gltf of the rig: a node per joint where `world` puts it, a skin of them all, no animation,
    the joints renamed "骨0", "骨1", ... (names that say nothing, as MMD-converted avatars' do)
    and the VRM humanoid extension naming their roles (VRM_BONES; the "vrm" rig's J_Bip_C_Chest
    is VRM's chest): version 0 (extensions.VRM, an array) or 1 (VRMC_vrm, an object). bones
    overrides the mapping (VRM bone name -> joint name)."""
    names = [n for n, _, _ in joints]
    index = {n: i for i, n in enumerate(names)}
    nodes = []
    for n, p, _ in joints:
        off = world[n] if p is None else [a - b for a, b in zip(world[n], world[p])]
        nodes.append({"name": "骨%d" % index[n], "translation": off,
                      "children": [index[c] for c, q, _ in joints if q == n]})
    for nd in nodes:
        if not nd["children"]:
            del nd["children"]
    if bones is None:
        bones = {VRM_BONES[r]: n for n, _, r in joints if r}
        bones.update({"chest": n for n, _, r in joints if n == "J_Bip_C_Chest"})
    if version == 1:
        ext = {"VRMC_vrm": {"specVersion": "1.0", "humanoid": {"humanBones": {b: {"node": index[n]} for b, n in bones.items()}}}}
    else:
        ext = {"VRM": {"humanoid": {"humanBones": [{"bone": b, "node": index[n], "useDefaultValues": True}
                                                   for b, n in bones.items()]}}}
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": nodes,
           "skins": [{"joints": list(range(len(nodes)))}], "extensionsUsed": list(ext), "extensions": ext}
    return json.dumps(doc, ensure_ascii=False).encode()


def test_vrm_humanoid_extension():
    """A glTF whose joint names say nothing gets its roles from the VRM humanoid extension (VRM 0.x
    and 1.0), in A and T poses, with the humanoid limits; without the extension it is no humanoid; an
    extension whose bones do not make a humanoid is warned of and left for the names."""
    d = Daemon()
    try:
        rng = random.Random(17)
        joints = RIGS["vrm"]
        for case in range(8):
            world = human_positions(rng, joints, case % 2 == 1)
            want = {role: "骨%d" % i for i, (_, _, role) in enumerate(joints) if role}
            s, r = d.post("/v1/import", vrm_gltf(joints, world, case % 4 // 2))
            assert s == 200, r
            assert r["humanoid"] == want, (case, r["humanoid"], want)
            assert r["effectors"] == [want["hand_l"], want["hand_r"], want["foot_l"], want["foot_r"], want["head"]]
            by_name = {j["name"]: j for j in r["skeleton"]["joints"]}
            assert by_name[want["lower_leg_l"]]["constraint"]["type"] == "hinge", by_name[want["lower_leg_l"]]
            assert not any(w["code"] == "vrm_humanoid" for w in r["warnings"]), r["warnings"]
        world = human_positions(rng, joints, False)
        plain = json.loads(vrm_gltf(joints, world, 1))
        del plain["extensions"], plain["extensionsUsed"]
        s, r = d.post("/v1/import", json.dumps(plain).encode())
        assert s == 200 and r["humanoid"] is None, r["humanoid"]
        bad = {VRM_BONES[r]: n for n, _, r in joints if r}
        bad["head"], bad["leftFoot"] = bad["leftFoot"], bad["head"]  # a head below the hips
        for version in (0, 1):
            s, r = d.post("/v1/import", vrm_gltf(joints, world, version, bad))
            assert s == 200 and r["humanoid"] is None, r["humanoid"]
            assert any(w["code"] == "vrm_humanoid" and w["field"] == "extensions" for w in r["warnings"]), r["warnings"]
        # the joints' own names win nothing over the extension: a VRoid-named rig maps the same either way
        s, r = d.post("/v1/import", rig_bvh_at(joints, world, [0, 0, 0, 1]), "application/x-bvh")
        assert s == 200 and r["humanoid"] == {role: n for n, _, role in joints if role}, r["humanoid"]
    finally:
        d.stop()


def test_skins_of_one_armature_are_joined():
    """A character converted from FBX skins each mesh to the bones that move it: skin 0 (the face)
    holds the head and its end alone, skin 1 (the body) the rest, a prop's skin (skin 3) a bone
    under the hand. Without ?skin= the skins of skin 0's joint tree are one skeleton (warning
    skins_joined) and the humanoid is found; a second character's skin, under the same scene root
    (as Sketchfab's exports wrap everything), is another tree and stays out; ?skin=N takes that
    skin alone."""
    d = Daemon()
    try:
        rng = random.Random(23)
        joints = RIGS["mixamo"]
        world = human_positions(rng, joints, False)
        names = [n for n, _, _ in joints]
        index = {n: i + 1 for i, n in enumerate(names)}  # node 0 is the Armature
        nodes = [{"name": "Armature", "rotation": [-0.7071067811865475, 0, 0, 0.7071067811865476], "children": [1]}]
        for n, p, _ in joints:
            off = world[n] if p is None else [a - b for a, b in zip(world[n], world[p])]
            nd = {"name": n, "translation": off}
            kids = [index[c] for c, q, _ in joints if q == n]
            if kids:
                nd["children"] = kids
            nodes.append(nd)
        other = len(nodes)  # a second character: a chain of three under its own top node
        nodes += [{"name": "Other", "children": [other + 1]}, {"name": "o1", "translation": [2, 0, 0], "children": [other + 2]},
                  {"name": "o2", "translation": [0, 1, 0]}]
        sword = len(nodes)  # a prop held in the left hand, through a socket node that is no bone
        nodes += [{"name": "socket", "children": [sword + 1]}, {"name": "sword", "translation": [0, 0.1, 0]}]
        nodes[index["mixamorig:LeftHand"]]["children"] = nodes[index["mixamorig:LeftHand"]].get("children", []) + [sword]
        nodes.append({"name": "Sketchfab_model", "children": [0, other]})
        face = [index["mixamorig:Head"], index["mixamorig:HeadTop_End"]]
        body = [index[n] for n in names if index[n] not in face]
        rng.shuffle(body)
        doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [len(nodes) - 1]}], "nodes": nodes,
               "skins": [{"joints": face}, {"joints": body}, {"joints": [other + 1, other + 2]}, {"joints": [sword + 1]}]}
        s, r = d.post("/v1/import?format=gltf", json.dumps(doc).encode())
        assert s == 200, r
        got = [j["name"] for j in r["skeleton"]["joints"]]
        assert sorted(got) == sorted(names + ["sword"]), got
        assert r["humanoid"] == {role: n for n, _, role in joints if role}, r["humanoid"]
        assert [w["field"] for w in r["warnings"] if w["code"] == "skins_joined"] == ["skins"], r["warnings"]
        for k, want in ((0, ["mixamorig:Head", "mixamorig:HeadTop_End"]), (1, [n for n in names if index[n] not in face]),
                        (2, ["o1", "o2"])):
            s, r = d.post("/v1/import?format=gltf&skin=%d" % k, json.dumps(doc).encode())
            assert s == 200 and sorted(j["name"] for j in r["skeleton"]["joints"]) == sorted(want), (k, r)
            assert not any(w["code"] == "skins_joined" for w in r["warnings"]), r["warnings"]
        doc["skins"][1]["joints"][3] = "x"  # a skin joined is read as strictly as the one asked for
        s, r = d.post("/v1/import?format=gltf", json.dumps(doc).encode())
        assert s == 400 and r["error"]["field"] == "skins[1].joints[3]", r
    finally:
        d.stop()


def human_positions(rng, joints, pose_a):
    """World rest positions for a rig of RIGS, shaped like a person in the body frame (x left, y up,
    z forward): random proportions, knees a little bent forward, feet forward, arms out (T) or 45
    degrees down (A). Joints without a role sit between their parent and their child, or just past
    their parent."""
    h = rng.uniform(0.8, 1.1)  # hips height
    w, thigh, shin = rng.uniform(0.08, 0.12), rng.uniform(0.4, 0.5) * h, rng.uniform(0.4, 0.5) * h
    arm_down = math.radians(45 if pose_a else 0)
    sh, ua, la = rng.uniform(0.12, 0.2), rng.uniform(0.25, 0.32), rng.uniform(0.22, 0.28)
    chest_y = h + rng.uniform(0.35, 0.45)
    pos = {"hips": [0, h, 0], "spine": [0, h + 0.12, 0], "chest": [0, chest_y, 0], "neck": [0, chest_y + 0.15, 0],
           "head": [0, chest_y + 0.25, 0]}
    for side, sx in (("l", 1), ("r", -1)):
        knee = [sx * w, h - 0.05 - thigh, 0.03]
        pos["upper_leg_" + side] = [sx * w, h - 0.05, 0]
        pos["lower_leg_" + side] = knee
        pos["foot_" + side] = [sx * w, knee[1] - shin, 0]
        pos["toes_" + side] = [sx * w, knee[1] - shin - 0.12 * math.tan(math.radians(20)), 0.12]  # neutral: 20 down
        pos["shoulder_" + side] = [sx * 0.03, chest_y + 0.05, 0]
        d = [sx * math.cos(arm_down), -math.sin(arm_down), 0]
        pos["upper_arm_" + side] = [sx * sh, chest_y + 0.05, 0]
        pos["lower_arm_" + side] = [sx * sh + d[0] * ua, chest_y + 0.05 + d[1] * ua, 0]
        pos["hand_" + side] = [sx * sh + d[0] * (ua + la), chest_y + 0.05 + d[1] * (ua + la), 0]
    by_name = {}
    role_of = {n: r for n, _, r in joints}
    parent_of = {n: p for n, p, _ in joints}
    kids = {}
    for n, p, _ in joints:
        kids.setdefault(p, []).append(n)

    def first_role_below(n):
        for c in kids.get(n, []):
            if role_of[c]:
                return pos[role_of[c]]
            below = first_role_below(c)
            if below:
                return below
        return None

    for n, p, r in joints:
        if r:
            by_name[n] = pos[r]
        elif p is None:
            by_name[n] = [0, 0, 0]
        else:
            below = first_role_below(n)
            if below:
                by_name[n] = [(a + b) / 2 for a, b in zip(by_name[p], below)]
            else:
                gp = parent_of[p]
                d = [a - b for a, b in zip(by_name[p], by_name[gp])] if gp else [0, 1, 0]
                L = math.sqrt(sum(x * x for x in d)) or 1
                by_name[n] = [a + 0.04 * x / L for a, x in zip(by_name[p], d)]
    return by_name


def rig_bvh_at(joints, world, rot):
    """A BVH of the rig with each joint where `world` (body frame) turned by `rot` puts it."""
    wp = {n: qrot(rot, p) for n, p in world.items()}
    parent_of = {n: p for n, p, _ in joints}
    role_of = {n: r for n, _, r in joints}
    kids = {}
    for n, p, _ in joints:
        kids.setdefault(p, []).append(n)
    out = ["HIERARCHY"]

    def block(n, depth):
        pad = "  " * depth
        p = parent_of[n]
        off = wp[n] if p is None else [a - b for a, b in zip(wp[n], wp[p])]
        out.extend([pad + ("ROOT " if p is None else "JOINT ") + n, pad + "{", pad + "  OFFSET %r %r %r" % tuple(off),
                    pad + "  CHANNELS " + ("6 Xposition Yposition Zposition Zrotation Xrotation Yrotation" if p is None
                                           else "3 Zrotation Xrotation Yrotation")])
        for c in kids.get(n, []):
            block(c, depth + 1)
        if not kids.get(n):
            d = off if p is not None else [0, 1, 0]
            if (role_of[n] or "").startswith("foot"):  # a foot's end site: toward its toes
                d = qrot(rot, [0, -math.tan(math.radians(20)), 1])
            L = math.sqrt(sum(x * x for x in d)) or 1
            out.extend([pad + "  End Site", pad + "  {", pad + "    OFFSET %r %r %r" % tuple(0.05 * x / L for x in d),
                        pad + "  }"])
        out.append(pad + "}")

    block(kids[None][0], 0)
    count = sum(1 for line in out if "CHANNELS" in line)
    out += ["MOTION", "Frames: 1", "Frame Time: 0.0333333", " ".join(["0"] * (3 + 3 * count))]
    return ("\n".join(out) + "\n").encode()


def axis_angle(axis, deg):
    h = math.radians(deg) / 2
    n = math.sqrt(sum(a * a for a in axis))
    return [axis[0] / n * math.sin(h), axis[1] / n * math.sin(h), axis[2] / n * math.sin(h), math.cos(h)]


ORDERS = ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx")


def _in_frame(rom, f, q):
    """Deviation q read in frame f (both in the joint's rest frame): f^-1 q f."""
    return rom.qmul(rom.qmul(rom.qconj(f), q), f)


def _recording_box(es, margin=10.0, middle=89.9):
    """DESIGN's rule for limits=recording in one order, from the frames' angles es (degrees):
    (min_deg, max_deg, measure): each range widened by the margin, within [-180, 180], the middle
    one within +-89.9 (measure infinite where a frame passes that), an angle spanning over 300
    degrees the whole turn; the measure is the box's Haar measure (cos(middle) d1 d2 d3)."""
    lo = [min(e[t] for e in es) for t in range(3)]
    hi = [max(e[t] for e in es) for t in range(3)]
    kept = max(-lo[1], hi[1]) <= middle
    for t in range(3):
        bound = middle if t == 1 else 180.0
        if t != 1 and hi[t] - lo[t] > 300:
            lo[t], hi[t] = -180.0, 180.0
        lo[t], hi[t] = max(lo[t] - margin, -bound), min(hi[t] + margin, bound)
    m = math.radians(hi[0] - lo[0]) * math.radians(hi[2] - lo[2]) * (
        math.sin(math.radians(hi[1])) - math.sin(math.radians(lo[1])))
    return lo, hi, (m if kept else math.inf)


def test_recording_limits():
    """limits=recording on generated takes (random channel orders, rotations up to 170 degrees, a
    fifth of the joints with fewer rotation channels, some with none): every joint but the root and
    the End Sites gets an euler box that every frame of the take keeps, in the order (of the six)
    whose box by DESIGN.md's rule, computed here from the frames, covers the least of the rotation
    group (the joint's own channel order, axes without a channel after in x, y, z order, where no
    other covers less), and as neutral_deg the angles of the frame nearest the take's mean rotation;
    a joint without rotation channels is fixed. Generated glTF files (LINEAR, STEP, CUBICSPLINE
    rotations, at several fps): each joint's sampled rotations from its rest give the box the same
    way, every sampled frame inside, a joint no frame turns fixed. A URDF with limits=recording:
    400 on query.limits."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
    import rom
    d = Daemon()
    try:
        rng = random.Random(33)
        checked = fixed = other = framed = 0
        for case in range(20):
            joints = random_skeleton(rng)
            for j in joints[1:]:
                if not j[4] and rng.random() < 0.2:
                    keep = rng.randint(0, 2)
                    rots = [c for c in j[3] if c.endswith("rotation")][:keep]
                    j[3] = [c for c in j[3] if c.endswith("position")] + rots
            body = write_bvh(rng, joints, random_frames(rng, joints, 40), 1 / 30, False, False)
            s, r = d.post("/v1/import?limits=recording", body, "application/x-bvh")
            assert s == 200, (case, r)
            gen = {j[0]: j for j in joints}
            poses = r["clips"][0]["poses"]
            assert len(poses) == 40, len(poses)
            for i, j in enumerate(r["skeleton"]["joints"]):
                c = j.get("constraint", {"type": "none"})
                g = gen.get(j["name"])
                if g is None or g[4] or "parent" not in j:  # End Sites and the root: free
                    assert c["type"] == "none", (case, j["name"], c)
                    continue
                rots = [ch[0].lower() for ch in g[3] if ch.endswith("rotation")]
                if not rots:
                    assert c["type"] == "fixed", (case, j["name"], c)
                    fixed += 1
                    continue
                own = "".join(rots + [a for a in "xyz" if a not in rots])
                qs = [p["rotations"][i] for p in poses]
                boxes = {o: _recording_box([rom.euler(q, o) for q in qs]) for o in ORDERS}
                least = min(b[2] for b in boxes.values())
                assert c["type"] == "euler", (case, j["name"], c)
                if "frame" in c:  # the principal axes of its motion: a box of at most the least in its own axes
                    framed += 1
                    qs = [_in_frame(rom, c["frame"], q) for q in qs]
                    fboxes = {o: _recording_box([rom.euler(q, o) for q in qs]) for o in ORDERS}
                    assert fboxes[c["order"]][2] <= min(least, min(b[2] for b in fboxes.values())) * (1 + 1e-6), (c, fboxes, least)
                    boxes = fboxes
                else:
                    assert boxes[c["order"]][2] <= least * (1 + 1e-6), (case, j["name"], c, boxes)
                    if all(boxes[own][2] < b[2] * (1 - 1e-6) for o, b in boxes.items() if o != own):
                        assert c["order"] == own, (case, j["name"], g[3], c, boxes)  # its own order where it is the least
                    other += c["order"] != own
                lo, hi, _ = boxes[c["order"]]
                assert all(abs(a - b) <= 1e-6 for a, b in zip(lo + hi, c["min_deg"] + c["max_deg"])), (c, lo, hi)
                assert all(lo <= n <= hi for n, lo, hi in zip(c["neutral_deg"], c["min_deg"], c["max_deg"])), c
                # neutral: the frame nearest the chordal mean rotation, in the box's angles
                qs, mean = [p["rotations"][i] for p in poses], [0.0, 0.0, 0.0, 0.0]
                for q in qs:
                    sg = -1 if sum(a * b for a, b in zip(q, mean)) < 0 else 1
                    mean = [m + sg * a for m, a in zip(mean, q)]
                near = max(qs, key=lambda q: abs(sum(a * b for a, b in zip(q, mean))))
                if "frame" in c:
                    near = _in_frame(rom, c["frame"], near)
                assert all(abs(a - b) <= 1e-6 for a, b in zip(rom.euler(near, c["order"]), c["neutral_deg"])), (c, near)
                assert -89.9 - 1e-9 <= c["min_deg"][1] and c["max_deg"][1] <= 89.9 + 1e-9, c
                for k, p in enumerate(poses):
                    # kept, but where the middle angle passed +-89.9 (the box's own bound)
                    e = rom.euler(_in_frame(rom, c.get("frame", [0, 0, 0, 1]), p["rotations"][i]), c["order"])
                    if abs(e[1]) <= 89.9:
                        assert rom.inside(c, p["rotations"][i], [0, 0, 0, 1], 1e-6), (case, j["name"], k, e, c)
                        checked += 1
        assert checked > 5000 and fixed > 0 and other > 10 and framed > 10, (checked, fixed, other, framed)
        # glTF: every frame of every animation (sampled at fps), each joint's rotation from its rest
        gchecked = gfixed = 0
        for case in range(12):
            body, _, _ = make_gltf(rng, case % 2 == 0, True)
            s, r = d.post("/v1/import?limits=recording&fps=%d" % (20 + 7 * case), body,
                          "model/gltf-binary" if case % 2 == 0 else "model/gltf+json")
            assert s == 200, (case, r)
            js = r["skeleton"]["joints"]
            index = {j["name"]: i for i, j in enumerate(js)}
            world = [j.get("rotation", [0, 0, 0, 1]) for j in js]
            poses = [p for c in r["clips"] for p in c["poses"]]
            assert len(poses) > 10, len(poses)
            for i, j in enumerate(js):
                c = j.get("constraint", {"type": "none"})
                if "parent" not in j:
                    assert c["type"] == "none", (case, c)
                    continue
                rest = rom.qmul(rom.qconj(world[index[j["parent"]]]), world[i])
                devs = [rom.qmul(rom.qconj(rest), p["rotations"][i]) for p in poses]
                if all(abs(abs(q[3]) - 1) < 1e-12 for q in devs):  # no frame turns it
                    assert c["type"] == "fixed", (case, j["name"], c)
                    gfixed += 1
                    continue
                boxes = {o: _recording_box([rom.euler(q, o) for q in devs]) for o in ORDERS}
                least = min(b[2] for b in boxes.values())
                if "frame" in c:  # the frame is world: in the joint's rest frame, rest_world^-1 frame
                    f = rom.qmul(rom.qconj(world[i]), c["frame"])
                    boxes = {o: _recording_box([rom.euler(_in_frame(rom, f, q), o) for q in devs]) for o in ORDERS}
                assert c["type"] == "euler" and boxes[c["order"]][2] <= min(least, min(b[2] for b in boxes.values())) * (1 + 1e-6), \
                    (case, j["name"], c, boxes)
                lo, hi, _ = boxes[c["order"]]
                assert all(abs(a - b) <= 1e-6 for a, b in zip(lo + hi, c["min_deg"] + c["max_deg"])), (c, lo, hi)
                for q in devs:
                    if abs(rom.euler(_in_frame(rom, f, q) if "frame" in c else q, c["order"])[1]) <= 89.9:
                        assert rom.inside(c, q, world[i], 1e-6), (case, j["name"], q, c)
                        gchecked += 1
        assert gchecked > 300 and gfixed > 0, (gchecked, gfixed)
        # nothing to read: a take without frames, a glTF without animations: free joints, said
        still = write_bvh(rng, joints, [], 1 / 30, False, False)
        nodoc = json.loads(make_gltf(rng, False, True)[0])
        del nodoc["animations"]
        for b, ct in ((still, "application/x-bvh"), (json.dumps(nodoc).encode(), "model/gltf+json")):
            s, r = d.post("/v1/import?limits=recording", b, ct)
            assert s == 200 and all(j.get("constraint", {"type": "none"})["type"] == "none" for j in r["skeleton"]["joints"]), r
            assert [w["field"] for w in r["warnings"] if w["code"] == "limits_none"] == ["query.limits"], r["warnings"]
        links, rjoints = random_robot(rng, arms=1)
        s, e = d.post("/v1/import?limits=recording", write_urdf(links, rjoints), "application/xml")
        assert s == 400 and e["error"]["field"] == "query.limits", (s, e)
    finally:
        d.stop()


def test_humanoid_limits():
    """limits=humanoid on people of random proportions, T- and A-posed, turned anyhow (Z-up among
    them), in every naming convention: each role's limit lets the body's motions through and stops
    their opposites, checked by the rules of DESIGN.md computed here (tests/bench/rom.py): the spine
    bends forward 30 degrees but not back 30, knees and elbows flex 90 but not back 30, a hip swings
    100 but not 130, the head turns 30 but not 50, an ankle points 25 down but not 50 up (its 0: the foot square to the shin, so a rest foot 20 degrees
    down is plantarflexed 20 already); the limits
    move nothing at rest; ?limits=none sets none; limits=humanoid on a non-humanoid warns."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
    import rom
    d = Daemon()
    try:
        rng = random.Random(21)
        checked = 0
        for conv, joints in RIGS.items():
            for case in range(4):
                world = human_positions(rng, joints, case % 2 == 1)
                # turned: not, a quarter turn about up, Z-up, any heading (the joints' own axes are then not
                # the body's: euler roles get a `frame` in the body's axes, and no limit is approximate)
                turn = [axis_angle([0, 1, 0], 0), axis_angle([0, 1, 0], 90 * rng.randint(1, 3)), axis_angle([1, 0, 0], 90),
                        axis_angle([0, 1, 0], rng.uniform(20, 70))][case]
                s, r = d.post("/v1/import", rig_bvh_at(joints, world, turn), "application/x-bvh")
                assert s == 200 and r["humanoid"] and r["id"], (conv, case, r.get("warnings"))
                assert not any(w["code"] == "rest_not_standing" for w in r["warnings"]), (conv, case)
                js = {j["name"]: j for j in r["skeleton"]["joints"]}
                # the preset's euler boxes name their neutral: rest (its 0), not the middle of the range
                for c in (j.get("constraint", {}) for j in r["skeleton"]["joints"]):
                    if c.get("type") == "euler":
                        assert all(lo <= n <= hi and (n == 0) == (lo <= 0 <= hi) for n, lo, hi in
                                   zip(c["neutral_deg"], c["min_deg"], c["max_deg"])), (conv, case, c)
                if case == 0:  # the skeleton as imported, registered again: the same id
                    s2, reg = d.post("/v1/skeletons", json.dumps({"skeleton": r["skeleton"]}), "application/json")
                    assert s2 == 200 and reg["id"] == r["id"], (conv, reg, r["id"])
                up, fwd, left = (qrot(turn, v) for v in ([0, 1, 0], [0, 0, 1], [1, 0, 0]))
                roles = r["humanoid"]

                def ok(role, axis, deg):
                    j = js[roles[role]]
                    rest = j.get("rotation", [0, 0, 0, 1])
                    dev = qmul(qmul([-rest[0], -rest[1], -rest[2], rest[3]], axis_angle(axis, deg)), rest)
                    return rom.inside(j["constraint"], dev, rest)

                elbow = js[roles["lower_arm_l"]]["constraint"]["axis"]
                for role, axis, yes, no in [("spine", left, 30, -30), ("chest", left, 30, -30),
                                            ("lower_leg_l", left, 90, -30), ("lower_leg_r", left, 90, -30),
                                            ("lower_arm_l", elbow, 90, -30), ("upper_leg_l", left, 100, 130),
                                            ("head", up, 30, 50), ("foot_r", left, 25, -50), ("neck", left, 20, -40)]:
                    if role not in roles:
                        continue
                    assert ok(role, axis, 0), (conv, case, role, "rest")
                    assert ok(role, axis, yes), (conv, case, role, yes, js[roles[role]]["constraint"])
                    c = js[roles[role]]["constraint"]
                    if role in ("spine", "chest", "head", "neck", "foot_r"):
                        assert c["type"] == "euler" and ("frame" in c) == (case == 3), (conv, case, role, c)
                    assert not ok(role, axis, no), (conv, case, role, no, c)
                    checked += 1
                assert not any(w["code"] == "limit_approximate" for w in r["warnings"]), (conv, case, r["warnings"])
                # an elbow's flexion brings the hand forward of the arm
                el = js[roles["lower_arm_l"]]
                hand = [a - b for a, b in zip(js[roles["hand_l"]]["position"], el["position"])]
                bent = qrot(axis_angle(elbow, 90), hand)
                assert sum(a * b for a, b in zip(bent, fwd)) > 0.5 * math.sqrt(sum(a * a for a in hand)), (conv, case)
                # a limb's bone in segments turns only about itself, by the twist of its part (the shin's: none)
                for name, twist in SEGMENTS.get(conv, {}).items():
                    c = js[name]["constraint"]
                    if not twist:
                        assert c["type"] == "fixed", (conv, name, c)
                        continue
                    child = next(j for j in r["skeleton"]["joints"] if j.get("parent") == name)
                    bone = [a - b for a, b in zip(child["position"], js[name]["position"])]
                    cos = sum(a * b for a, b in zip(bone, c["axis"])) / math.sqrt(sum(a * a for a in bone) * sum(a * a for a in c["axis"]))
                    assert c["type"] == "hinge" and cos > 0.999 and (c["min_deg"], c["max_deg"]) == (-twist, twist), (conv, name, c)
                    checked += 1
            s, r = d.post("/v1/import?limits=none", rig_bvh_at(joints, human_positions(rng, joints, False),
                                                                 [0, 0, 0, 1]), "application/x-bvh")
            assert s == 200 and all("constraint" not in j for j in r["skeleton"]["joints"]), conv
        assert checked >= 150, checked
        # the same people said with each bone along its joint's x axis (tests/bench/bvhvar.py: the zero
        # pose a straight line, as LaFAN1's files have it): their limits are said not to fit
        import bvhvar
        for conv, joints in list(RIGS.items())[:4]:
            with tempfile.TemporaryDirectory() as tmp:
                src, dst = os.path.join(tmp, "a.bvh"), os.path.join(tmp, "b.bvh")
                with open(src, "wb") as f:
                    f.write(rig_bvh_at(joints, human_positions(rng, joints, False), [0, 0, 0, 1]))
                hier, ft, frames = bvhvar.read(src)
                bvhvar.write(dst, hier, ft, frames, {"order": "keep", "six": False, "alongx": True, "rootx": 0.0,
                                                     "turn": 0.0, "seed": 1})
                with open(dst, "rb") as f:
                    s, r = d.post("/v1/import?limits=humanoid", f.read(), "application/x-bvh")
            assert s == 200 and r["humanoid"], conv
            assert any(w["code"] == "rest_not_standing" and w["field"] == "hips" for w in r["warnings"]), (conv, r["warnings"])
        joints = random_skeleton(rng)
        s, r = d.post("/v1/import?limits=humanoid", write_bvh(rng, joints, random_frames(rng, joints, 2), 1 / 30, 0, 0))
        assert s == 200 and r["humanoid"] is None and any(w["code"] == "limits_none" for w in r["warnings"]), r["warnings"]
    finally:
        d.stop()


def test_layered_clip_returns_the_animation():
    """frames[k].preferred: an imported clip's poses as the animation (their translations per frame
    included), goals on its effectors taken from those poses: every frame comes back as the animation
    had it (joints within 1e-6 of the size), by JSON and by a skeleton id; such a clip is not written
    as BVH; bad priorities and preferred poses name their field."""
    d = Daemon()
    try:
        rng = random.Random(42)
        done, frames_checked, moved = 0, 0, 0
        for case in range(30):
            joints = random_skeleton(rng)  # inner joints with position channels: translations per frame
            n = rng.randint(5, 40)
            s, r = d.post("/v1/import", write_bvh(rng, joints, random_frames(rng, joints, n), 1 / 30, False, False))
            assert s == 200, r
            sk, poses = r["skeleton"], r["clips"][0]["poses"]
            names = [j["name"] for j in sk["joints"]]
            ps = [j["position"] for j in sk["joints"]]
            size = max(max(abs(a - b) for a, b in zip(p, ps[0])) for p in ps) or 1.0
            ends = r["effectors"][:4]
            frames = []
            for pose in poses:
                at = ikd_fk(sk, pose)
                pref = {"root": pose["root"], "rotations": pose["rotations"]}
                if pose.get("translations"):
                    pref["translations"] = pose["translations"]
                    moved += 1
                frames.append({"goals": [{"joint": e, "position": at[names.index(e)]} for e in ends], "preferred": pref})
            s, ref = d.post("/v1/skeletons", json.dumps({"skeleton": sk}), "application/json")
            assert s == 200, ref
            for skel in (sk, ref["id"]):
                s, out = d.post("/v1/solve/clip", json.dumps({"skeleton": skel, "root": "free", "frames": frames}),
                                "application/json")
                assert s == 200, (case, out)
                for k, f in enumerate(out["frames"]):
                    assert f["status"] == "reached", (case, k, f["goals"])
                    got, want = ikd_fk(sk, f["pose"]), ikd_fk(sk, poses[k])
                    err = max(math.dist(a, b) for a, b in zip(got, want)) / size
                    assert err < 1e-6, "case %d frame %d: %.3g of the size from the animation" % (case, k, err)
                    frames_checked += 1
            done += 1
        assert done == 30 and frames_checked > 1000 and moved > 100, (done, frames_checked, moved)
        # a clip with per-frame translations is not written as BVH (its offsets would be one set)
        c = d.conn()
        c.request("POST", "/v1/solve/clip", body=json.dumps({"skeleton": sk, "frames": frames}),
                  headers={"Content-Type": "application/json", "Accept": "application/x-bvh"})
        resp = c.getresponse()
        out = json.loads(resp.read())
        c.close()
        if any(f["preferred"].get("translations") for f in frames):
            assert resp.status == 400 and out["error"]["field"].endswith(".preferred.translations"), (resp.status, out)
        # bad values name their field
        goal = {"joint": 0, "position": [0, 0, 0]}
        for body, field in [
            ({"skeleton": sk, "goals": [dict(goal, priority=1.5)]}, "goals[0].priority"),
            ({"skeleton": sk, "goals": [dict(goal, priority=10 ** 7)]}, "goals[0].priority"),
            ({"skeleton": sk, "goals": [goal], "options": {"preferred": {"rotations": [[0, 0, 0, 1]]}}},
             "options.preferred.rotations"),
            ({"skeleton": sk, "goals": [goal], "options": {"preferred": {"rotations": [[0, 0, 0, 2]] * len(names)}}},
             "options.preferred.rotations[0]"),
            ({"skeleton": sk, "goals": [goal], "options": {"preferred": {"rotations": [[0, 0, 0, 1]] * len(names),
                                                                            "translations": [None] * len(names)}}},
             None),
            ({"skeleton": sk, "goals": [goal], "options": {"preferred": {"rotations": [[0, 0, 0, 1]] * len(names),
                                                                            "translations": [[0, 0, 0]] * len(names)}}},
             "options.preferred.translations[0]"),
            ({"skeleton": sk, "frames": [{"goals": [goal], "preferred": {"rotations": [[0, 0, 0, 1]] * len(names),
                                                                         "translations": [[0, 0, 0]] * len(names)}}]},
             "frames[0].preferred.translations[0]"),
            ({"skeleton": sk, "frames": [{"goals": [goal], "preferred": {"rotations": [[0, 0, 0, 1]] * len(names),
                                                                         "translations": [None, [0, "x", 0]] +
                                                                         [None] * (len(names) - 2)}}]},
             "frames[0].preferred.translations[1]"),
            ({"skeleton": sk, "frames": [{"goals": [goal], "preferred": {"root": [0, 0],
                                                                          "rotations": [[0, 0, 0, 1]] * len(names)}}]},
             "frames[0].preferred.root"),
        ]:
            path = "/v1/solve/clip" if "frames" in body else "/v1/solve/skeleton"
            s, out = d.post(path, json.dumps(body), "application/json")
            if field is None:
                assert s == 200, out
                continue
            assert s == 400 and out["error"]["field"] == field, (field, s, out)
    finally:
        d.stop()


def test_poses_with_translations():
    """A pose's translations (an inner joint with position channels) go into solves and come back."""
    d = Daemon()
    try:
        rng = random.Random(17)
        for case in range(30):
            joints = random_skeleton(rng)
            if not any(c.endswith("position") for j in joints[1:] for c in j[3]):
                continue
            frames = random_frames(rng, joints, 3)
            s, r = d.post("/v1/import", write_bvh(rng, joints, frames, 1 / 30, False, False))
            assert s == 200, r
            pose = r["clips"][0]["poses"][2]
            assert "translations" in pose
            sk = r["skeleton"]
            names = [j["name"] for j in sk["joints"]]
            world = ikd_fk(sk, pose)
            ends = r["effectors"][:3]
            goals = [{"joint": e, "position": world[names.index(e)]} for e in ends]
            for body_skeleton in (sk, r["id"]):
                s, out = d.post("/v1/solve/skeleton", json.dumps({"skeleton": body_skeleton, "pose": pose, "root": "free",
                                                                  "goals": goals}), "application/json")
                assert s == 200, out
                assert out["pose"]["translations"] == pose["translations"], "translations are echoed"
                got = ikd_fk(sk, out["pose"])
                for g in goals:
                    assert math.dist(got[names.index(g["joint"])], g["position"]) < 1e-4, (case, g, out["status"])
                for j, jt in zip(out["joints"], got):  # the reply's joints are the translated skeleton's
                    assert math.dist(j["position"], jt) < 1e-9, (j, jt)
            s, out = d.post("/v1/solve/clip", json.dumps({"skeleton": sk, "pose": pose, "root": "free",
                                                          "frames": [{"goals": goals}] * 3}), "application/json")
            assert s == 200 and all(f["pose"]["translations"] == pose["translations"] for f in out["frames"]), out
        bad = {"skeleton": {"joints": [[0, 0, 0], [0, 1, 0]]}, "goals": [{"joint": 1, "position": [0, 1, 0]}],
               "pose": {"translations": [[1, 0, 0], None]}}
        s, r = d.post("/v1/solve/skeleton", json.dumps(bad), "application/json")
        assert s == 400 and r["error"]["field"] == "pose.translations[0]", r
        bad["pose"] = {"translations": [None]}
        s, r = d.post("/v1/solve/skeleton", json.dumps(bad), "application/json")
        assert s == 400 and r["error"]["field"] == "pose.translations", r
    finally:
        d.stop()


# ---- glTF --------------------------------------------------------------------------------

import base64
import ctypes
import struct


def q_axis(axis, deg):
    n = math.sqrt(sum(a * a for a in axis))
    h = math.radians(deg) / 2
    return [axis[0] / n * math.sin(h), axis[1] / n * math.sin(h), axis[2] / n * math.sin(h), math.cos(h)]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


class GltfWriter:
    """Accessors over one binary buffer, in float32."""

    def __init__(self):
        self.bin, self.views, self.accessors = b"", [], []

    def accessor(self, values, kind):
        n = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[kind]
        data = struct.pack("<%df" % len(values), *values)
        while len(self.bin) % 4:
            self.bin += b"\0"
        self.views.append({"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)})
        self.bin += data
        self.accessors.append({"bufferView": len(self.views) - 1, "componentType": 5126, "count": len(values) // n,
                               "type": kind})
        return len(self.accessors) - 1


def make_gltf(rng, glb=True, skin=True):
    """A Z-up Armature over two joint trees (a leg chain and an IK control bone), joint scales of
    0.99999994, animations with LINEAR, STEP and CUBICSPLINE samplers on rotations and
    translations, and a leaf whose scale is animated. skin=False: no skins (an armature exported
    without its mesh), the mesh node a leaf with a mesh."""
    w = GltfWriter()
    nodes = [{"name": "Armature", "rotation": q_axis([1, 0, 0], -90), "children": [1, 5]},
             {"name": "hips", "translation": [0, 0, 1.0], "scale": [0.99999994] * 3, "children": [2]},
             {"name": "thigh", "translation": [0.1, 0, -0.05], "rotation": q_axis([0, 1, 0], 10), "children": [3]},
             {"name": "shin", "translation": [0, 0, -0.45], "children": [4]},
             {"name": "foot", "translation": [0, 0.05, -0.42], "rotation": q_axis([1, 0, 0], 20)},
             {"name": "foot_ik", "translation": [0.1, 0.1, 0.05]},
             {"name": "mesh"}]
    times = [0.0, 0.4, 0.9, 1.3]
    tin = w.accessor(times, "SCALAR")
    samplers, channels = [], []

    def chan(node, path, values, kind, interp):
        out = w.accessor(values, kind)
        samplers.append({"input": tin, "output": out, "interpolation": interp})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": path}})

    rot = lambda: sum((q_axis([rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)], rng.uniform(-60, 60))
                       for _ in times), [])
    chan(1, "rotation", rot(), "VEC4", "LINEAR")
    chan(1, "translation", sum(([0, rng.uniform(-0.1, 0.1), 1 + rng.uniform(-0.1, 0.1)] for _ in times), []), "VEC3", "LINEAR")
    chan(2, "rotation", rot(), "VEC4", "STEP")
    cubic = []
    for _ in times:  # in-tangent, value, out-tangent
        cubic += [rng.uniform(-0.5, 0.5) for _ in range(4)] + q_axis([1, 0.2, 0], rng.uniform(0, 90)) + \
                 [rng.uniform(-0.5, 0.5) for _ in range(4)]
    chan(3, "rotation", cubic, "VEC4", "CUBICSPLINE")
    chan(5, "translation", sum(([rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), rng.uniform(0, 0.2)] for _ in times), []),
         "VEC3", "LINEAR")  # an IK control bone that translates
    chan(4, "scale", sum(([1 + 0.1 * k] * 3 for k in range(4)), []), "VEC3", "LINEAR")  # a leaf's scale
    # channels without a node (ignored, as the spec says: here KHR_animation_pointer's) and on morph weights
    channels.append({"sampler": 0, "target": {"path": "pointer",
                                              "extensions": {"KHR_animation_pointer": {"pointer": "/nodes/1/rotation"}}}})
    channels.append({"sampler": 0, "target": {"path": "rotation"}})
    doc = {"asset": {"version": "2.0", "generator": "import_test.py"}, "scene": 0, "scenes": [{"nodes": [0, 6]}],
           "nodes": nodes, "skins": [{"joints": [1, 2, 3, 4, 5]}],
           "animations": [{"name": "walk", "channels": channels, "samplers": samplers}],
           "accessors": w.accessors, "bufferViews": w.views, "buffers": [{"byteLength": len(w.bin)}]}
    if not skin:
        del doc["skins"]
        nodes[6]["mesh"] = 0
        doc["meshes"] = [{"primitives": []}]
    if not glb:
        doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(w.bin).decode()
        # "asset" last, after 8 KB of an unused buffer (Khronos' simple_skin.gltf puts it last: the format
        # sniffer read only the first 4096 bytes and answered 415)
        doc["buffers"].append({"byteLength": 6000, "uri": "data:application/octet-stream;base64," +
                               base64.b64encode(bytes(6000)).decode()})
        doc["asset"] = doc.pop("asset")
        return json.dumps(doc).encode(), doc, w.bin
    return glb_file(doc, w.bin), doc, w.bin


def glb_file(doc, binary):
    """A .glb container of doc and its binary buffer (both chunks padded to 4 bytes)."""
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    binc = bytes(binary) + b"\0" * (-len(binary) % 4)
    return struct.pack("<4sII", b"glTF", 2, 12 + 8 + len(js) + 8 + len(binc)) + struct.pack("<II", len(js), 0x4E4F534A) + js + \
        struct.pack("<II", len(binc), 0x004E4942) + binc


def with_image(glb, size):
    """The GLB with a `size`-byte picture added to its binary chunk (as a character's textures are)."""
    at = 20 + struct.unpack_from("<I", glb, 12)[0]
    doc = json.loads(glb[20:at])
    binary = bytearray(glb[at + 8:at + 8 + struct.unpack_from("<I", glb, at)[0]])
    binary += bytes(-len(binary) % 4)
    doc["bufferViews"].append({"buffer": 0, "byteOffset": len(binary), "byteLength": size})
    doc["images"] = [{"bufferView": len(doc["bufferViews"]) - 1, "mimeType": "image/png"}]
    binary += bytes(range(256)) * (size // 256) + bytes(size % 256)
    doc["buffers"][0]["byteLength"] = len(binary)
    return glb_file(doc, binary)


def gltf_world(doc, binary, t):
    """The file's own world positions of every node at time t (matrices, glTF's rules)."""
    acc = doc["accessors"]

    def values(i):
        a, v = acc[i], doc["bufferViews"][acc[i]["bufferView"]]
        n = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[a["type"]]
        return list(struct.unpack_from("<%df" % (a["count"] * n), binary, v["byteOffset"])), n

    trs = [[list(n.get("translation", [0, 0, 0])), list(n.get("rotation", [0, 0, 0, 1])), list(n.get("scale", [1, 1, 1]))]
           for n in doc["nodes"]]
    for ch in doc["animations"][0]["channels"]:
        if "node" not in ch["target"]:
            continue
        sm = doc["animations"][0]["samplers"][ch["sampler"]]
        ts, _ = values(sm["input"])
        vs, n = values(sm["output"])
        cubic = sm["interpolation"] == "CUBICSPLINE"
        key = lambda k, part=1: vs[(k * 3 + part) * n:(k * 3 + part + 1) * n] if cubic else vs[k * n:(k + 1) * n]
        k = max([i for i in range(len(ts)) if ts[i] <= t] or [0])
        if t <= ts[0] or k == len(ts) - 1:
            v = key(0 if t <= ts[0] else len(ts) - 1)
        else:
            dt, s = ts[k + 1] - ts[k], (t - ts[k]) / (ts[k + 1] - ts[k])
            if sm["interpolation"] == "STEP":
                v = key(k)
            elif cubic:
                v = [(2 * s ** 3 - 3 * s ** 2 + 1) * a + (s ** 3 - 2 * s ** 2 + s) * dt * bo + (-2 * s ** 3 + 3 * s ** 2) * b +
                     (s ** 3 - s ** 2) * dt * ai for a, bo, b, ai in zip(key(k), key(k, 2), key(k + 1), key(k + 1, 0))]
            elif ch["target"]["path"] == "rotation":
                a, b = key(k), key(k + 1)
                d = sum(x * y for x, y in zip(a, b))
                if d < 0:
                    b, d = [-x for x in b], -d
                if d > 0.9995:
                    v = [x + s * (y - x) for x, y in zip(a, b)]
                else:
                    th = math.acos(d)
                    v = [(math.sin((1 - s) * th) * x + math.sin(s * th) * y) / math.sin(th) for x, y in zip(a, b)]
            else:
                v = [x + s * (y - x) for x, y in zip(key(k), key(k + 1))]
        if ch["target"]["path"] == "rotation":
            l = math.sqrt(sum(x * x for x in v))
            v = [x / l for x in v]
        trs[ch["target"]["node"]][["translation", "rotation", "scale"].index(ch["target"]["path"])] = v
    parent = {c: i for i, n in enumerate(doc["nodes"]) for c in n.get("children", [])}
    world = {}

    def w(i):
        if i in world:
            return world[i]
        t3, q, s = trs[i]
        r = quat_matrix(q)
        m = [[r[a][b] * s[b] for b in range(3)] for a in range(3)]
        if i in parent:
            pm, pp = w(parent[i])
            world[i] = (mm(pm, m), [x + y for x, y in zip(pp, mv(pm, t3))])
        else:
            world[i] = (m, list(t3))
        return world[i]

    return {doc["nodes"][i].get("name"): w(i)[1] for i in range(len(doc["nodes"]))}


def test_generated_gltf():
    d = Daemon()
    try:
        rng = random.Random(9)
        for case in range(16):
            glb, skin = case % 2 == 0, case < 12  # cases 12-15: no skins, the node tree is the skeleton
            body, doc, binary = make_gltf(rng, glb, skin)
            s, r = d.post("/v1/import" + ("?fps=24" if case % 3 == 0 else ""), body,
                          "model/gltf-binary" if glb and case % 4 == 0 else None)
            assert s == 200, (case, r)
            assert r["format"] == ("glb" if glb else "gltf") and r["id"], r
            # the skeleton as imported (rotations from float data, made unit), registered: the same id
            s, reg = d.post("/v1/skeletons", json.dumps({"skeleton": r["skeleton"]}), "application/json")
            assert s == 200 and reg["id"] == r["id"], (case, reg, r["id"])
            names = [j["name"] for j in r["skeleton"]["joints"]]
            assert names[0] == "Armature" and set(names) == {"Armature", "hips", "thigh", "shin", "foot", "foot_ik"}, names
            codes = {w["code"] for w in r["warnings"]}
            assert ("skin_trees" if skin else "no_skin") in codes and "scale_animated" in codes, r["warnings"]
            # a skin the file does not have (a skinless file's node tree is skin 0 only): 400 on query.skin
            s, e = d.post("/v1/import?skin=" + ("1" if skin else "2"), body)
            assert s == 400 and e["error"]["code"] == "invalid_request" and e["error"]["field"] == "query.skin", (s, e)
            clip = r["clips"][0]
            fps = 24 if case % 3 == 0 else 30
            assert clip["name"] == "walk" and clip["fps"] == fps and len(clip["poses"]) == int(f32(1.3) * fps + 1e-9) + 1, (len(clip["poses"]), fps)
            assert any(p.get("translations") and p["translations"][names.index("foot_ik")] for p in clip["poses"])
            size = 1.0
            for k, pose in enumerate(clip["poses"]):
                want = gltf_world(doc, binary, k / fps)
                got = ikd_fk(r["skeleton"], pose)
                for name in names:
                    assert math.dist(want[name], got[names.index(name)]) < 1e-6 * size, (case, k, name, want[name], got[names.index(name)])
    finally:
        d.stop()


def test_big_glb_charged_by_what_it_decodes():
    """A GLB is charged to --memory-budget as its body plus 6 times what its import decodes (its
    JSON and its skins' and animations' data), not 6 times its pictures: under a 16 MiB budget a
    GLB made 12 MiB bigger by a picture imports whole, with the reply of the file without it
    (plain, and with its animation compressed), while a 12 MiB BVH is refused (413 naming
    --memory-budget), up front when its type is declared; the memory held goes back after each."""
    d = Daemon("--memory-budget", str(16 << 20))
    try:
        small, doc, binary = make_gltf(random.Random(5), True)
        files = [small, meshopt_variant(meshopt_lib(), doc, binary, True)]
        for k, glb in enumerate(files):
            s, want = d.post("/v1/import", glb)
            assert s == 200, want
            held = held_settled(d)
            s, got = d.post("/v1/import", with_image(glb, 12 << 20))
            assert s == 200, (k, got)
            for key in ("skeleton", "id", "clips", "humanoid", "effectors", "warnings"):
                assert got.get(key) == want.get(key), (k, key)
            assert held_settled(d, held) == held, k

        s, r = d.post("/v1/import", b"HIERARCHY\n" + b" " * (12 << 20))  # read, then refused
        assert s == 413 and "--memory-budget" in r["error"]["message"], r
        # refused from the head alone: 12 MiB of BVH never fits, 17 MiB of anything neither
        for ctype, size in (("application/x-bvh", 12 << 20), ("application/x-bvh", 17 << 20), ("model/gltf-binary", 17 << 20)):
            s, r = head_only(d, "/v1/import", size, ctype)
            assert s == 413 and "--memory-budget" in r["error"]["message"], (ctype, size, r)
        assert held_settled(d, held) == held
        s, r = d.post("/v1/import", small)
        assert s == 200 and held_settled(d, held) == held, r
    finally:
        d.stop()


def held_settled(d, want=None):
    """ikd_memory_held_bytes once the last reply's charge has gone (it goes when the reply has been
    sent, a moment after the client has it): `want` when it comes back to it within 10 s, else the
    value it keeps for 0.2 s."""
    last, since, end = None, time.time(), time.time() + 10
    while time.time() < end:
        v = d.metric("ikd_memory_held_bytes")
        if v == want:
            return v
        if v != last:
            last, since = v, time.time()
        elif want is None and time.time() - since >= 0.2:
            return v
        time.sleep(0.02)
    return last


def head_only(d, path, length, ctype):
    """A POST's head declaring a `length`-byte body and no body: (status, the JSON reply)."""
    sock = socket.create_connection(("127.0.0.1", d.port), timeout=60)
    try:
        sock.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                      % (path, ctype, length)).encode())
        r = http.client.HTTPResponse(sock)
        r.begin()
        return r.status, json.loads(r.read())
    finally:
        sock.close()


def test_bad_gltf():
    d = Daemon()
    try:
        body, doc, binary = make_gltf(random.Random(1), True)
        cases = [(body[:-7], "glb.length"), (body[:12] + struct.pack("<II", 10 ** 6, 0x4E4F534A) + body[20:], "glb.chunks[0]")]
        for b, field in cases:
            s, r = d.post("/v1/import", b)
            assert s == 400 and r["error"]["field"] == field, (field, r)
        def variant(change):
            doc2 = json.loads(json.dumps(doc))
            change(doc2)
            doc2["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(binary).decode()
            return json.dumps(doc2).encode()
        bad = [
            (lambda x: x["nodes"][2].update(rotation=[0, "a", 0, 1]), "nodes[2].rotation"),
            (lambda x: x["accessors"][1].update(count=10 ** 6), "accessors[1]"),
            (lambda x: x["nodes"][3].update(children=[1]), "nodes[3].children"),
            (lambda x: x["buffers"][0].update(byteLength=10 ** 8), "buffers[0].byteLength"),
            (lambda x: x["skins"][0].update(joints=[1, 1]), "skins[0].joints[1]"),
        ]
        fallback = {"byteLength": 64, "extensions": {"EXT_meshopt_compression": {"fallback": True}}}
        bad += [(lambda x: x["animations"][0]["channels"][0].update(sampler=99), "animations[0].channels[0]"),
                (lambda x: x["animations"][0]["samplers"][0].update(interpolation="BOGUS"), "animations[0].channels[0]")]
        for change, field in bad:
            for query in ("", "&limits=recording"):  # (limits=recording samples the animations before the reply)
                s, r = d.post("/v1/import?format=gltf" + query, variant(change))
                assert s == 400 and r["error"]["field"] == field, (field, query, r)
        short = Daemon("--max-frames", "20")  # the animation's 1.3 s at 30 fps: 40 frames
        try:
            for query in ("", "?limits=recording"):
                s, r = short.post("/v1/import" + query, body)
                assert s == 413 and r["error"]["field"] == "animations[0]", (query, r)
        finally:
            short.stop()
        # a fallback buffer that no read view uses (meshes compressed, the animation plain) is no obstacle
        s, r = d.post("/v1/import?format=gltf", variant(lambda x: x["buffers"].append(fallback)))
        assert s == 200 and r["clips"], r
        # no skin and every node a mesh without children (a scene of props): no bone to read
        props = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0, 1]}],
                 "nodes": [{"name": "TopLeftObj", "mesh": 0}, {"name": "BackPlane", "mesh": 0, "translation": [0, 0, -1]}],
                 "meshes": [{"primitives": [{"attributes": {}}]}]}
        s, r = d.post("/v1/import", json.dumps(props).encode())
        assert s == 400 and r["error"]["field"] == "skins" and "no skeleton" in r["error"]["message"], r
        ext = json.loads(json.dumps(doc))
        ext["buffers"][0]["uri"] = "http://127.0.0.1:1/never.bin"
        s, r = d.post("/v1/import", json.dumps(ext).encode())
        assert s == 400 and r["error"]["field"] == "buffers[0].uri" and "fetched" in r["error"]["message"], r
    finally:
        d.stop()

def sparse_variant(doc, binary, bad=None):
    """The .gltf of doc with its animation outputs written sparse (glTF 2.0, 3.6.2), the values the
    same: the first output with no bufferView (zeros) and every element in its sparse part (uint8
    indices), the others over a base of zeros with every second element in it (uint16, uint32).
    bad(doc, outputs, view) changes the result to make it invalid (view(bytes) adds a bufferView)."""
    doc = json.loads(json.dumps(doc))
    binary = bytearray(binary)

    def view(data):
        while len(binary) % 4:
            binary.append(0)
        doc["bufferViews"].append({"buffer": 0, "byteOffset": len(binary), "byteLength": len(data)})
        binary.extend(data)
        return len(doc["bufferViews"]) - 1

    outputs = sorted({sm["output"] for sm in doc["animations"][0]["samplers"]})
    for k, i in enumerate(outputs):
        a = doc["accessors"][i]
        n = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[a["type"]]
        vals = struct.unpack_from("<%df" % (a["count"] * n), binary, doc["bufferViews"][a["bufferView"]]["byteOffset"])
        idx = list(range(a["count"])) if k == 0 else list(range(k % 2, a["count"], 2))
        fmt, ct = [("B", 5121), ("H", 5123), ("I", 5125)][k % 3]
        base = [0.0] * len(vals)
        for e in range(a["count"]):
            if e not in idx:
                base[e * n:(e + 1) * n] = vals[e * n:(e + 1) * n]
        if k == 0:
            del a["bufferView"]
        else:
            a["bufferView"] = view(struct.pack("<%df" % len(base), *base))
        sparse_vals = [v for e in idx for v in vals[e * n:(e + 1) * n]]
        a["sparse"] = {"count": len(idx),
                       "indices": {"bufferView": view(struct.pack("<%d%s" % (len(idx), fmt), *idx)), "componentType": ct},
                       "values": {"bufferView": view(struct.pack("<%df" % len(sparse_vals), *sparse_vals))}}
    if bad:
        bad(doc, outputs, view)
    doc["buffers"] = [{"byteLength": len(binary),
                       "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(binary)).decode()}]
    return json.dumps(doc).encode()


def import_both(d, plain, variant):
    """The import replies of a plain file and its variant, both 200."""
    s, a = d.post("/v1/import", plain)
    assert s == 200, a
    s, b = d.post("/v1/import", variant)
    assert s == 200, b
    return a, b


def test_sparse_gltf_accessors():
    """Animation outputs written as sparse accessors (as gltf-transform's sparse() writes them)
    import to the same clip as the dense file; bad sparse parts are 400 on their field."""
    d = Daemon()
    try:
        for seed in range(4):
            body, doc, binary = make_gltf(random.Random(seed), False)
            dense, r = import_both(d, body, sparse_variant(doc, binary))
            assert r["clips"][0]["poses"] == dense["clips"][0]["poses"] and r["skeleton"] == dense["skeleton"], seed
        body, doc, binary = make_gltf(random.Random(9), False)

        def indices(order, count=4):  # the first output's sparse part: two indices, as given
            def bad(d2, o, view):
                a = d2["accessors"][o[0]]
                a["count"] = count
                a["sparse"] = {"count": 2, "indices": {"bufferView": view(bytes(order)), "componentType": 5121},
                               "values": {"bufferView": view(bytes(4 * 2 * {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[a["type"]]))}}
            return bad

        first = lambda change: lambda d2, o, view: change(d2["accessors"][o[0]])
        second = lambda change: lambda d2, o, view: change(d2["accessors"][o[1]])
        cases = [
            (second(lambda a: a["sparse"].update(count=0)), "accessors[%d].sparse.count", 1),
            (second(lambda a: a["sparse"].update(count=10 ** 6)), "accessors[%d].sparse.count", 1),
            (second(lambda a: a["sparse"]["indices"].update(componentType=5126)), "accessors[%d].sparse.indices.componentType", 1),
            (second(lambda a: a["sparse"]["indices"].update(byteOffset=10 ** 6)), "accessors[%d].sparse.indices", 1),
            (second(lambda a: a["sparse"]["values"].update(byteOffset=10 ** 6)), "accessors[%d].sparse.values", 1),
            (second(lambda a: a["sparse"]["values"].update(bufferView=999)), "accessors[%d].sparse.values.bufferView", 1),
            (second(lambda a: a["sparse"]["values"].pop("bufferView")), "accessors[%d].sparse.values.bufferView", 1),
            (first(lambda a: a.update(count=10 ** 9)), "accessors[%d].count", 0),
            (first(lambda a: a.update(sparse=[1])), "accessors[%d].sparse", 0),
            (first(lambda a: a.pop("sparse")), "accessors[%d].bufferView", 0),
            (indices([1, 0]), "accessors[%d].sparse.indices", 0),  # out of order
            (indices([2, 2]), "accessors[%d].sparse.indices", 0),  # repeated
            (indices([0, 4]), "accessors[%d].sparse.indices", 0),  # at the accessor's count
        ]
        outputs = sorted({sm["output"] for sm in doc["animations"][0]["samplers"]})
        for bad, field, which in cases:
            s, r = d.post("/v1/import?format=gltf", sparse_variant(doc, binary, bad))
            assert s == 400 and r["error"]["field"] == field % outputs[which], (field, r)
        s, r = d.post("/v1/import?format=gltf", sparse_variant(doc, binary, indices([0, 3])))
        assert s == 200, r  # the same two-index part, valid
    finally:
        d.stop()


def meshopt_lib():
    """Debian's libmeshoptimizer (the daemon links it), for its encoders."""
    lib = ctypes.CDLL("libmeshoptimizer.so.2d")
    lib.meshopt_encodeVertexBufferBound.restype = ctypes.c_size_t
    lib.meshopt_encodeVertexBufferBound.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    lib.meshopt_encodeVertexBuffer.restype = ctypes.c_size_t
    lib.meshopt_encodeVertexBuffer.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t]
    for f in ("meshopt_encodeFilterQuat", "meshopt_encodeFilterExp"):
        getattr(lib, f).restype = None
        getattr(lib, f).argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p]
    return lib


def meshopt_variant(lib, doc, binary, filters, bad=None):
    """A .glb of doc with every bufferView compressed by EXT_meshopt_compression (attributes mode,
    as gltfpack -c writes animations) and the plain data gone: the views point at a fallback buffer
    without data. filters: LINEAR and STEP rotations quantized with the QUATERNION filter (16 bits,
    as normalized shorts), translations with EXPONENTIAL (20-bit mantissas). bad(doc) breaks it."""
    doc = json.loads(json.dumps(doc))
    out, views, size = bytearray(), [], 0
    kinds = {}
    for sm, ch in zip(doc["animations"][0]["samplers"], [c for c in doc["animations"][0]["channels"] if "node" in c["target"]]):
        if sm["interpolation"] != "CUBICSPLINE":
            kinds[sm["output"]] = ch["target"]["path"]
    for i, a in enumerate(doc["accessors"]):
        n = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[a["type"]]
        v = doc["bufferViews"][a["bufferView"]]
        raw = bytes(binary[v["byteOffset"]:v["byteOffset"] + v["byteLength"]])
        stride, flt = 4 * n, "NONE"
        if filters and kinds.get(i) == "rotation":
            stride, flt = 8, "QUATERNION"
            enc = ctypes.create_string_buffer(a["count"] * 8)
            lib.meshopt_encodeFilterQuat(enc, a["count"], 8, 16, raw)
            raw = enc.raw
            a.update(componentType=5122, normalized=True)
        elif filters and kinds.get(i) == "translation":
            flt = "EXPONENTIAL"
            enc = ctypes.create_string_buffer(a["count"] * stride)
            lib.meshopt_encodeFilterExp(enc, a["count"], stride, 20, raw)
            raw = enc.raw
        cap = lib.meshopt_encodeVertexBufferBound(a["count"], stride)
        buf = ctypes.create_string_buffer(cap)
        k = lib.meshopt_encodeVertexBuffer(buf, cap, raw, a["count"], stride)
        assert k > 0
        ext = {"buffer": 0, "byteOffset": len(out), "byteLength": k, "byteStride": stride, "count": a["count"],
               "mode": "ATTRIBUTES"}
        if flt != "NONE":
            ext["filter"] = flt
        out += buf.raw[:k] + b"\0" * (-k % 4)
        views.append({"buffer": 1, "byteOffset": size, "byteLength": a["count"] * stride,
                      "extensions": {"EXT_meshopt_compression": ext}})
        size += a["count"] * stride
        a["bufferView"] = len(views) - 1
    doc["bufferViews"] = views
    doc["buffers"] = [{"byteLength": len(out)}, {"byteLength": size, "extensions": {"EXT_meshopt_compression": {"fallback": True}}}]
    doc["extensionsUsed"] = doc["extensionsRequired"] = ["EXT_meshopt_compression", "KHR_mesh_quantization"]
    if bad:
        bad(doc, out)
    return glb_file(doc, out)


def test_long_names():
    """Names as long as a skeleton takes (256 bytes) import from every format; a glTF node's longer
    name is cut there on a character's boundary (the reply stays UTF-8, and the cut names stay
    unique); a longer BVH or URDF name is a 400 naming its place. Names of 64-256 bytes were a
    400 (BVH) or cut at 63 bytes mid-character (glTF) until 2026-11-27."""
    d = Daemon()
    try:
        long_name = "Scene:Character:" + "\u00e9" * 100 + "_LeftUpLeg"  # 16 + 200 + 10 = 226 bytes
        assert len(long_name.encode()) == 226
        bvh = ("HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
               "JOINT %s\n{\nOFFSET 0 -1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 -1 0\n}\n}\n}\n"
               "MOTION\nFrames: 1\nFrame Time: 0.1\n0 1 0 0 0 0 10 0 0\n")
        s, r = d.post("/v1/import", (bvh % long_name).encode())
        names = [j["name"] for j in r["skeleton"]["joints"]]
        assert s == 200 and names[1] == long_name and names[2].endswith("_End"), (s, names)
        assert len(names[2].encode()) <= 54, names[2]  # the parent's name cut at 50 bytes, on a boundary
        s, r = d.post("/v1/import", (bvh % ("x" * 257)).encode())
        assert s == 400 and r["error"]["field"] == "line 6", r
        urdf = ('<robot name="a"><link name="base"/><link name="%s"/><joint name="%s" type="revolute">'
                '<parent link="base"/><child link="%s"/><axis xyz="0 0 1"/><limit lower="-1" upper="1"/></joint></robot>')
        s, r = d.post("/v1/import", (urdf % (long_name, long_name, long_name)).encode())
        assert s == 200 and r["skeleton"]["joints"][1]["name"] == long_name and r["links"][long_name] == long_name, r
        s, r = d.post("/v1/import", (urdf % ("l", "j" * 257, "l")).encode())
        assert s == 400 and r["error"]["field"].startswith("robot.joint"), r
        body, doc, binary = make_gltf(random.Random(5))
        doc["nodes"][2]["name"] = long_name
        doc["nodes"][3]["name"] = "\u65e5" * 120  # 360 bytes: cut to 85 characters (255 bytes)
        doc["nodes"][4]["name"] = "\u65e5" * 121
        s, r = d.post("/v1/import", glb_file(doc, binary))
        names = [j["name"] for j in r["skeleton"]["joints"]]
        assert s == 200 and long_name in names, names
        cut = [n for n in names if n.startswith("\u65e5")]
        assert cut == ["\u65e5" * 85, "\u65e5" * 83 + "_2"], cut  # the second cut name made unique
    finally:
        d.stop()


def test_meshopt_gltf():
    """GLBs whose animation data is compressed with EXT_meshopt_compression (gltfpack -c,
    gltf-transform's meshopt()) import to the clip of the plain file: exactly without filters,
    within the filters' quantization with them; bad extension objects are 400 on their field."""
    lib = meshopt_lib()
    d = Daemon()
    try:
        for seed in range(4):
            body, doc, binary = make_gltf(random.Random(seed), True)
            dense, r = import_both(d, body, meshopt_variant(lib, doc, binary, False))
            assert r["clips"][0]["poses"] == dense["clips"][0]["poses"] and r["skeleton"] == dense["skeleton"], seed
            s, r = d.post("/v1/import", meshopt_variant(lib, doc, binary, True))
            assert s == 200, r
            worst = 0.0
            for pa, pb in zip(dense["clips"][0]["poses"], r["clips"][0]["poses"]):
                for qa, qb in zip(pa["rotations"], pb["rotations"]):
                    worst = max(worst, min(max(abs(x - y) for x, y in zip(qa, qb)), max(abs(x + y) for x, y in zip(qa, qb))))
                for ta, tb in zip(pa.get("translations") or [], pb.get("translations") or []):
                    if ta and tb:
                        worst = max(worst, max(abs(x - y) for x, y in zip(ta, tb)))
            assert 0 < worst < 2e-4, (seed, worst)  # 16-bit quaternions, 20-bit mantissas: quantized, not garbage
        body, doc, binary = make_gltf(random.Random(5), True)
        ext = lambda i: lambda change: lambda d2, out: change(d2["bufferViews"][i]["extensions"]["EXT_meshopt_compression"], d2, out)
        first, second = ext(0), ext(1)

        def corrupt(e, d2, out):
            out[e["byteOffset"]] = 0  # the header byte (0xa0)

        cases = [  # the change, the view it breaks, the member named
            (second(lambda e, d2, out: e.update(mode="FOO")), 1, "mode"),
            (second(lambda e, d2, out: e.update(filter=7)), 1, "filter"),
            (first(lambda e, d2, out: e.update(mode="INDICES", filter="EXPONENTIAL")), 0, "filter"),
            (first(lambda e, d2, out: e.update(filter="QUATERNION")), 0, "byteStride"),  # the times: 4 bytes
            (second(lambda e, d2, out: e.update(mode="TRIANGLES", filter="NONE")), 1, "byteStride"),  # 8 bytes
            (second(lambda e, d2, out: e.update(count=e["count"] + 1)), 1, "count"),
            (second(lambda e, d2, out: e.update(byteLength=10 ** 7)), 1, "byteLength"),
            (second(lambda e, d2, out: e.update(buffer=1)), 1, "buffer"),  # the fallback: no data
            (second(lambda e, d2, out: e.pop("count")), 1, "count"),
            (second(corrupt), 1, ""),
            (second(lambda e, d2, out: e.update(byteLength=e["byteLength"] - 3)), 1, ""),  # truncated
            # 4-byte times, one element more than 4 times the file's buffer bytes decode to
            (first(lambda e, d2, out: (e.update(count=len(out) + 1), d2["bufferViews"][0].update(byteLength=4 * (len(out) + 1)))),
             0, "count"),
        ]
        for bad, view, member in cases:
            s, r = d.post("/v1/import", meshopt_variant(lib, doc, binary, True, bad))
            want = "bufferViews[%d].extensions.EXT_meshopt_compression%s" % (view, "." + member if member else "")
            assert s == 400 and r["error"]["field"] == want, (want, r)
    finally:
        d.stop()


def main():
    return pyharness.run_tests(globals(), "import")


if __name__ == "__main__":
    sys.exit(main())
