#!/usr/bin/env python3
"""seeds.py - the fuzzers' seed corpus, from the request fixtures: every fixture body as a
solve request and inside a batch, in JSON (selector bytes 0 and 4), skeleton requests alone (8) and as batch items (4), clips of them (16), plus byte strings for the
solver fuzzer, skeleton inputs for the skeleton fuzzer and number strings for the strtod fuzzer; usage: seeds.py OUTDIR"""
import json
import os
import sys

out = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
cases = json.load(open(os.path.join(here, "..", "fixtures", "solve.json")))["cases"]
api = os.path.join(out, "api")
solvers = os.path.join(out, "solvers")
os.makedirs(api, exist_ok=True)
os.makedirs(solvers, exist_ok=True)
for i, c in enumerate(cases):
    body = c["raw"].encode() if "raw" in c else json.dumps(c["body"], separators=(",", ":")).encode()
    with open(os.path.join(api, f"solve-{i:03d}"), "wb") as f:
        f.write(b"\x00" + body)
    if "body" in c:
        with open(os.path.join(api, f"batch-{i:03d}"), "wb") as f:
            f.write(b"\x04" + json.dumps({"problems": [c["body"], c["body"]]}, separators=(",", ":")).encode())
# skeleton requests (selector byte 8): legs with limits and every kind of goal
legs = {"skeleton": {"joints": [
    {"name": "pelvis", "position": [0, 1, 0]},
    {"name": "hip_l", "position": [0.1, 0.95, 0], "constraint": {"type": "ball", "max_deg": 90, "twist_min_deg": -30}},
    {"name": "knee_l", "parent": "hip_l", "position": [0.1, 0.5, 0.02],
     "constraint": {"type": "hinge", "axis": [1, 0, 0], "min_deg": 0, "max_deg": 150}},
    {"name": "foot_l", "position": [0.1, 0.05, 0],
     "constraint": {"type": "euler", "order": "zxy", "min_deg": [-20, -30, -10], "max_deg": [20, 30, 10],
                    "frame": [0, 0, 0.3826834323650898, 0.9238795325112867]}},
    {"name": "hip_r", "parent": "pelvis", "position": [-0.1, 0.95, 0]},
    {"name": "knee_r", "position": [-0.1, 0.5, 0.02], "constraint": {"type": "fixed"}},
    [-0.1, 0.05, 0]]}}
goal_sets = [
    [{"joint": "foot_l", "position": [0.15, 0.2, 0.3]}],
    [{"joint": "foot_l", "ground": {"point": [0, 0.1, 0], "normal": [0, 1, 0.2]}}, {"joint": 6, "position": [0, 0, 0]}],
    [{"joint": "knee_l", "aim": {"axis": [0, -1, 0], "at": [1, 0, 1]}, "weight": 2},
     {"joint": "foot_l", "rotation": [0, 0.38, 0, 0.92], "pole": [0, 0.5, 1]}],
]
for i, goals in enumerate(goal_sets):
    for root in ("fixed", "free"):
        with open(os.path.join(api, f"skeleton-{i}-{root}"), "wb") as f:
            f.write(b"\x08" + json.dumps(dict(legs, goals=goals, root=root), separators=(",", ":")).encode())
    # the same as a batch item beside a chain item (selector byte 4)
    with open(os.path.join(api, f"batch-skeleton-{i}"), "wb") as f:
        batch = {"problems": [dict(legs, goals=goals), cases[0]["body"] if "body" in cases[0] else 1]}
        f.write(b"\x04" + json.dumps(batch, separators=(",", ":")).encode())
# the two-bone options and the pull's bound on a free root (foot placement's anchor, soft rows)
for i, opts in enumerate([{"soften": 0.9, "stretch": 1.2}, {"soften": 0.5}, {"stretch": 2, "pull_max_deg": 3}]):
    with open(os.path.join(api, f"skeleton-options-{i}"), "wb") as f:
        f.write(b"\x08" + json.dumps(dict(legs, goals=goal_sets[i % 2], root="free", options=opts),
                                     separators=(",", ":")).encode())
# clips (selector byte 16): the goal sets as frames of the legs, and a three-joint chain
with open(os.path.join(api, "clip-legs"), "wb") as f:
    f.write(b"\x10" + json.dumps(dict(legs, frames=[{"goals": g} for g in goal_sets[:2]]), separators=(",", ":")).encode())
with open(os.path.join(api, "clip-chain"), "wb") as f:
    frames = [{"goals": [{"joint": 2, "position": [1, 1 + 0.1 * k, 0]}]} for k in range(4)]
    f.write(b"\x10" + json.dumps({"skeleton": {"joints": [[0, 0, 0], [0, 1, 0], [0, 2, 0]]}, "frames": frames},
                                 separators=(",", ":")).encode())
with open(os.path.join(api, "clip-chain-bounded"), "wb") as f:  # options.pull_max_deg: the pull spent mid-frame
    f.write(b"\x10" + json.dumps({"skeleton": {"joints": [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]]},
                                  "frames": frames, "options": {"pull_max_deg": 0.5, "rest_pull": 1}},
                                 separators=(",", ":")).encode())
# a few byte strings that decode to small valid chains for the solver fuzzer
for i in range(16):
    with open(os.path.join(solvers, f"seed-{i:02d}"), "wb") as f:
        f.write(bytes([(i * 37 + k * 11) % 256 for k in range(400)]))
# skeleton solver inputs (fuzz_skeleton.c's byte format): small valid legs and chains with every
# constraint and goal kind, so mutations start from skeletons that validate and solve
sk = os.path.join(out, "skeleton")
os.makedirs(sk, exist_ok=True)


def num(v):  # a small coordinate: v * 16 as a signed byte
    return [0, int(round(v * 16)) & 0xFF]


def vec(*v):
    return sum((num(x) for x in v), [])


def deg(d):  # degrees / 1.5 as a signed byte
    return [0, int(round(d / 1.5)) & 0xFF]


def joint(parent, pos, lim):
    return [parent] + vec(*pos) + [0] + lim


hinge = [2, 1] + vec(1, 0, 0) + deg(0) + deg(150)
ball = [3, 0, 1] + deg(90) + [1] + deg(-30) + deg(30)
euler = [4, 0, 4] + deg(-20) + deg(20) + deg(-30) + deg(30) + deg(-10) + deg(10) + [0]  # no frame
legs = ([5] + joint(0, (0, 1, 0), [0, 0]) + joint(0, (0.1, 0.95, 0), ball) + joint(1, (0.1, 0.5, 0.02), hinge)
        + joint(2, (0.1, 0.05, 0), euler) + joint(0, (-0.1, 0.95, 0), ball) + joint(4, (-0.1, 0.5, 0.02), hinge))
goal_pos = [3, 1] + vec(0.15, 0.2, 0.3)
goal_rot = [3, 2] + [0] * 2 + [0] * 2 + [0] * 2 + num(1)
goal_aim = [2, 4] + vec(0, -1, 0) + vec(1, 0, 1)
goal_ground = [5, 8] + vec(0, 0.1, 0) + vec(0, 1, 0.2) + [0]
goal_pole = [3, 17] + vec(0.1, 0.3, 0.4) + vec(0, 0.5, 1)
# f byte, then: root (bit 2), max_iterations, soften and stretch (bit 64), pull_max_deg (bit 128)
options = [[0, 100], [1, 100], [3 | 64] + vec(0, 0.9, 0) + [100, 230, 32], [1 | 128, 100, 6]]
for i, goals in enumerate([[goal_pos], [goal_rot], [goal_aim, goal_pos], [goal_ground, goal_pole]]):
    for o, opt in enumerate(options):
        with open(os.path.join(sk, f"legs-{i}-{o}"), "wb") as f:
            f.write(bytes(legs + [len(goals) - 1] + sum(goals, []) + opt))
chain = [2] + joint(0, (0, 0, 0), [0, 0]) + joint(0, (0, 1, 0), hinge) + joint(1, (0, 2, 0), [0, 0])
with open(os.path.join(sk, "chain"), "wb") as f:
    f.write(bytes(chain + [0, 2, 1] + vec(1, 1, 0) + [0, 100]))
# number strings for the strtod fuzzer: the shapes jansson passes, and corners around them
numbers = os.path.join(out, "strtod")
os.makedirs(numbers, exist_ok=True)
for i, t in enumerate(["0", "-0.0", "1.0691712523735522", "-0.30000000000000004", "2.5e-17", "1e22", "1e23",
                       "9007199254740993", "0.1234567890123456789", "123456789012345678901", "4.9e-324",
                       "1.7976931348623157e308", "12345678.87654321e-5", "0x1p3", "inf", " 1", "1e", "7.5e+027"]):
    with open(os.path.join(numbers, f"seed-{i:02d}"), "w") as f:
        f.write(t)
# files for the import fuzzer (selector byte, then the file): BVH with the quirks of real files
# (CRLF, six channels on a joint, End Sites, a Frames: line that disagrees) and URDF (two arms,
# continuous joints with limits, a prismatic finger, a mimic)
imp = os.path.join(out, "import")
os.makedirs(imp, exist_ok=True)
bvh = ("HIERARCHY\r\nROOT Hips\r\n{\r\n OFFSET 0 90 0\r\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\r\n"
       " JOINT Spine\r\n {\r\n  OFFSET 0 10 0\r\n  CHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation\r\n"
       "  End Site\r\n  {\r\n   OFFSET 0 20 0\r\n  }\r\n }\r\n JOINT Leg\r\n {\r\n  OFFSET 10 0 0\r\n"
       "  CHANNELS 3 Yrotation Xrotation Zrotation\r\n  End Site\r\n  {\r\n   OFFSET 0 -40 0\r\n  }\r\n }\r\n}\r\n"
       "MOTION\r\nFrames: 2\r\nFrame Time: 0.0333333\r\n" +
       "".join(" ".join(str((k * 7 + c) % 90 - 45) for c in range(15)) + "\r\n" for k in range(3)))
urdf = ('<?xml version="1.0"?><robot name="r"><link name="torso"/>' +
        "".join('<link name="l%d"/><joint name="j%d" type="%s"><parent link="%s"/><child link="l%d"/>'
                '<origin xyz="0 0.1 0.2" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/><limit lower="-1" upper="%s"/>%s</joint>'
                % (i, i, ["revolute", "continuous", "prismatic", "fixed"][i % 4], "torso" if i % 3 == 0 else "l%d" % (i - 1),
                   i, "2" if i % 2 else "-0.1", '<mimic joint="j0"/>' if i == 5 else "") for i in range(8)) + "</robot>")
import base64
import struct
binary = struct.pack("<4f", 0, 0.5, 1.0, 1.5) + struct.pack("<16f", *([0, 0, 0, 1, 0, 0.38268343, 0, 0.9238795, 0, 0.7071068, 0, 0.7071068, 0, 0, 0, 1]))
gdoc = {"asset": {"version": "2.0"}, "nodes": [{"name": "Armature", "rotation": [-0.7071068, 0, 0, 0.7071068], "children": [1, 3]},
                                             {"name": "hips", "translation": [0, 0, 1], "children": [2]},
                                             {"name": "leg", "translation": [0, 0, -0.5], "scale": [0.99999994] * 3},
                                             {"name": "ik", "translation": [0.1, 0, 0]}],
        "skins": [{"joints": [1, 2, 3]}],
        "animations": [{"channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}],
                        "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}]}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "SCALAR"},
                      {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC4"}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 16}, {"buffer": 0, "byteOffset": 16, "byteLength": 64}],
        "buffers": [{"byteLength": len(binary)}]}
def glb_file(doc, data):  # a .glb container (data: the BIN chunk, a multiple of 4 bytes)
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    return struct.pack("<4sII", b"glTF", 2, 12 + 8 + len(js) + 8 + len(data)) + struct.pack("<II", len(js), 0x4E4F534A) + js + \
        struct.pack("<II", len(data), 0x004E4942) + data


glb = glb_file(gdoc, binary)
gdoc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(binary).decode()
gltf = json.dumps(gdoc)
# the rotations as a sparse accessor over zeros: elements 1 and 2 from uint16 indices, 0 and 3 left zero
sdoc = json.loads(gltf)
sdoc["accessors"][1] = {"componentType": 5126, "count": 4, "type": "VEC4", "sparse": {
    "count": 2, "indices": {"bufferView": 2, "componentType": 5123}, "values": {"bufferView": 1, "byteOffset": 16}}}
sdoc["bufferViews"].append({"buffer": 1, "byteLength": 4})
sdoc["extensions"] = {"VRMC_vrm": {"humanoid": {"humanBones": {"hips": {"node": 1}, "leftFoot": {"node": 2}, "head": {"node": 3}}}},
                      "VRM": {"humanoid": {"humanBones": [{"bone": "hips", "node": 1}]}}}  # VRM 1.0 and 0.x roles
sdoc["buffers"].append({"byteLength": 4, "uri": "data:application/octet-stream;base64," +
                        base64.b64encode(struct.pack("<2H", 1, 2)).decode()})
# the same GLB with both views compressed by EXT_meshopt_compression (libmeshoptimizer's encoder, as
# gltfpack -c writes them: the times plain, the rotations through the QUATERNION filter as shorts)
import ctypes
mo = ctypes.CDLL("libmeshoptimizer.so.2d")
mo.meshopt_encodeVertexBuffer.restype = ctypes.c_size_t
mo.meshopt_encodeVertexBuffer.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t]
mo.meshopt_encodeFilterQuat.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p]
quat = ctypes.create_string_buffer(32)
mo.meshopt_encodeFilterQuat(quat, 4, 8, 16, binary[16:])
mdoc, mbin, views = json.loads(json.dumps(gdoc)), b"", []
for raw, stride, flt in [(binary[:16], 4, "NONE"), (quat.raw, 8, "QUATERNION")]:
    enc = ctypes.create_string_buffer(256)
    k = mo.meshopt_encodeVertexBuffer(enc, 256, raw, 4, stride)
    views.append({"buffer": 1, "byteOffset": 0, "byteLength": 4 * stride, "extensions": {"EXT_meshopt_compression": {
        "buffer": 0, "byteOffset": len(mbin), "byteLength": k, "byteStride": stride, "count": 4, "mode": "ATTRIBUTES", "filter": flt}}})
    mbin += enc.raw[:k] + b"\0" * (-k % 4)
mdoc["accessors"][1].update(componentType=5122, normalized=True)
mdoc.update(bufferViews=views, extensionsUsed=["EXT_meshopt_compression"],
            buffers=[{"byteLength": len(mbin)}, {"byteLength": 64, "extensions": {"EXT_meshopt_compression": {"fallback": True}}}])
mglb = glb_file(mdoc, mbin)
for sel, name, body in [(0, "glb", glb), (3 | 16, "gltf", gltf.encode()), (3, "gltf-sparse", json.dumps(sdoc).encode()),
                        (0, "glb-meshopt", mglb)]:
    with open(os.path.join(imp, "seed-" + name), "wb") as f:
        f.write(bytes([sel]) + body)
# a second ROOT (a prop with three position channels), joined under a made root
bvh2 = bvh.split("MOTION")[0] + ("ROOT Prop\r\n{\r\n OFFSET 0 0 0\r\n CHANNELS 3 Xposition Yposition Zposition\r\n"
                                  " End Site\r\n {\r\n  OFFSET 0 5 0\r\n }\r\n}\r\nMOTION\r\nFrames: 2\r\n"
                                  "Frame Time: 0.0333333\r\n") + \
    "".join(" ".join(str((k * 7 + c) % 90 - 45) for c in range(18)) + "\r\n" for k in range(2))
for sel, name, body in [(0, "bvh", bvh), (1 | 4 | 16, "bvh-scaled", bvh), (2, "urdf", urdf), (128 | 64, "urdf-nolimits", urdf),
                        (0, "bvh-roots", bvh2), (1 | 64 | 8, "bvh-recording", bvh)]:
    with open(os.path.join(imp, "seed-" + name), "wb") as f:
        f.write(bytes([sel]) + body.encode())
print(f"seeds: {len(os.listdir(api))} api inputs, {len(os.listdir(solvers))} solver inputs, {len(os.listdir(sk))} skeletons, "
      f"{len(os.listdir(numbers))} numbers in {out}")
