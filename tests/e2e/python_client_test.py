#!/usr/bin/env python3
"""python_client_test.py - the Python client (clients/python) installed as a user would, against a live daemon.

Makes a virtual environment in BUILD/pyclient, installs the package there with
`pip install --no-index ./clients/python` (no network), then runs this file's checks inside it:
every call, IkdError with the field, a streamed clip, import_file and `python -m ikd import`, a
GLB over --max-import-body for its pictures imported by import_file (slim_glb), the
automatic resend of a skeleton on 409, and the README's pipeline script (import a BVH, solve its
clip with feet goals, write the result as BVH).

usage: python_client_test.py IKD_BIN BUILD_DIR   (prints "N passed, N failed")
"""
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def bvh_file():
    """A small walking-leg BVH written here: hips with six channels, two legs, 60 frames."""
    lines = ["HIERARCHY", "ROOT Hips", "{", " OFFSET 0 90 0", " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"]
    for side, x in (("Left", 10), ("Right", -10)):
        lines += [" JOINT %sUpLeg" % side, " {", "  OFFSET %d 0 0" % x, "  CHANNELS 3 Zrotation Xrotation Yrotation",
                  "  JOINT %sLeg" % side, "  {", "   OFFSET 0 -42 2", "   CHANNELS 3 Zrotation Xrotation Yrotation",
                  "   JOINT %sFoot" % side, "   {", "    OFFSET 0 -40 -2", "    CHANNELS 3 Zrotation Xrotation Yrotation",
                  "    End Site", "    {", "     OFFSET 0 -5 12", "    }", "   }", "  }", " }"]
    lines += ["}", "MOTION", "Frames: 60", "Frame Time: 0.0333333"]
    for k in range(60):
        a = 2 * math.pi * k / 60
        row = [0, 90 + 2 * math.sin(2 * a), 30 * k / 60, 0, 0, 0]
        for sgn in (1, -1):
            row += [0, 25 * sgn * math.sin(a), 0, 0, 30 + 20 * math.cos(a + sgn), 0, 0, -10 * sgn * math.sin(a), 0]
        lines.append(" ".join("%.6f" % v for v in row))
    return "\n".join(lines) + "\n"


def inside(url, workdir):
    """The checks, run by the virtual environment's python (ikd importable only from there)."""
    import ikd
    assert "site-packages" in ikd.__file__ and not ikd.__file__.startswith(os.path.join(ROOT, "clients")), \
        "ikd must come from the installed package, not %s" % ikd.__file__
    c = ikd.Client(url)
    r = c.solve({"chain": {"joints": [[0, 0, 0], [0, 1, 0], [0, 2, 0]]}, "target": [1, 1, 0]})
    assert r["reached"], r
    r = c.batch({"problems": [{"chain": {"joints": [[0, 0, 0], [0, 1, 0], [0, 2, 0]]}, "target": [1, 1, 0]}]})
    assert len(r["results"]) == 1, r
    try:
        c.solve({"chain": {"joints": [[0, 0, 0], [0, 0, 0], [0, 2, 0]]}, "target": [1, 1, 0]})
        raise AssertionError("a zero-length bone was accepted")
    except ikd.IkdError as e:
        assert e.status == 400 and e.code == "invalid_request" and e.field.startswith("chain.joints"), e
    assert "skeleton" in json.dumps(c.solvers())
    sk = {"joints": [{"name": "a", "position": [0, 0, 0]}, {"name": "b", "position": [0, 1, 0]},
                     {"name": "c", "position": [0, 2, 0]}]}
    sid = c.register(sk)
    assert re.fullmatch(r"sk_[0-9a-f]{32}", sid), sid
    r = c.skeleton({"skeleton": sid, "goals": [{"joint": "c", "position": [1, 1, 0]}]})
    assert r["status"] == "reached", r
    # evicted (the daemon runs with a small --skeleton-cache): a client that did not register it gets
    # the 409 as IkdError; the one that did sends the skeleton again by itself
    for k in range(40):
        c.register({"joints": [[0, 0, 0], [0, 1 + k, 0], [0, 3 + k, 0]]})
    try:
        ikd.Client(url).skeleton({"skeleton": sid, "goals": [{"joint": "c", "position": [1, 1, 0]}]})
        raise AssertionError("an evicted id was answered")
    except ikd.IkdError as e:
        assert e.status == 409 and e.code == "unknown_skeleton" and e.field == "skeleton", e
    r = c.skeleton({"skeleton": sid, "goals": [{"joint": "c", "position": [1, 1, 0]}]})
    assert r["status"] == "reached", r
    frames = [{"goals": [{"joint": "c", "position": [math.cos(k / 10), 1 + math.sin(k / 10), 0.1]}]} for k in range(40)]
    seen = []
    r = c.clip({"skeleton": sk, "frames": frames}, on_frame=seen.append)
    assert len(seen) == 40 and r["summary"]["frames"] == 40 and seen[39]["frame"] == 39, r["summary"]
    whole = c.clip({"skeleton": sk, "frames": frames})
    assert [f["pose"] for f in whole["frames"]] == [f["pose"] for f in seen]
    bvh = os.path.join(workdir, "walk.bvh")
    with open(bvh, "w") as f:
        f.write(bvh_file())
    imp = c.import_file(bvh, scale=0.01)
    assert imp["format"] == "bvh" and len(imp["clips"][0]["poses"]) == 60 and imp["id"], imp["warnings"]
    out = subprocess.run([sys.executable, "-m", "ikd", "--url", url, "import", bvh], capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["id"] == ikd.Client(url).import_file(bvh)["id"], out.stderr
    out = subprocess.run([sys.executable, "-m", "ikd", "import", bvh], capture_output=True, text=True,
                         env=dict(os.environ, IKD_URL=url))
    assert out.returncode == 0, out.stderr
    bad = subprocess.run([sys.executable, "-m", "ikd", "--url", url, "import", "/nonexistent.bvh"], capture_output=True,
                         text=True)
    assert bad.returncode == 1 and "nonexistent" in bad.stderr, bad
    return sid


def big_glb(url, workdir):
    """A GLB over the daemon's --max-import-body (8 MiB here) for its pictures: refused whole (413), it
    imports through import_file (only what the importer reads is sent) with the same reply as the
    file without them: plain, and with its animation compressed by EXT_meshopt_compression."""
    import random
    import urllib.error
    import urllib.request
    import ikd
    import import_test
    c = ikd.Client(url)
    small, doc, binary = import_test.make_gltf(random.Random(5), True)
    variants = [small, import_test.meshopt_variant(import_test.meshopt_lib(), doc, binary, True)]
    for k, glb in enumerate(variants):
        big = import_test.with_image(glb, 9 << 20)
        try:
            urllib.request.urlopen(urllib.request.Request(url + "/v1/import?format=glb", data=big, method="POST"))
            raise AssertionError("a 9 MiB GLB was taken whole")
        except urllib.error.HTTPError as e:
            assert e.code == 413, e.code
        path = os.path.join(workdir, "big%d.glb" % k)
        with open(path, "wb") as f:
            f.write(big)
        sent = ikd.slim_glb(big)
        assert len(sent) < len(glb) + 4096, (len(sent), len(glb))
        want, got = c.import_file(glb, format="glb"), c.import_file(path)
        for key in ("skeleton", "id", "clips", "humanoid", "effectors"):
            assert got.get(key) == want.get(key), (k, key)
        if node_slim(path, path + ".js.glb"):  # the web client's slimGlb, the same cut in the page
            assert os.path.getsize(path + ".js.glb") < len(glb) + 4096, os.path.getsize(path + ".js.glb")
            got = c.import_file(path + ".js.glb")
            for key in ("skeleton", "id", "clips", "humanoid", "effectors"):
                assert got.get(key) == want.get(key), (k, key, "slimGlb")
    assert ikd.slim_glb(small) is small  # nothing to save: the file as it is
    cut = os.path.join(workdir, "cut.glb")  # a GLB cut short goes as it is: ikd names what is wrong
    with open(cut, "wb") as f:
        f.write(import_test.with_image(small, 9 << 20)[:(8 << 20) - 7])
    assert ikd.slim_glb(open(cut, "rb").read()) == open(cut, "rb").read()
    try:
        c.import_file(cut)
        raise AssertionError("a GLB cut short was imported")
    except ikd.IkdError as e:
        assert e.status == 400 and e.field == "glb.length", e
    if node_slim(cut, cut + ".js.glb"):
        assert open(cut + ".js.glb", "rb").read() == open(cut, "rb").read()


def node_slim(src, dst):
    """src through the web client's slimGlb (src/ui/ikd.js) into dst, by node; False (with a notice) without node."""
    import shutil
    if not shutil.which("node"):
        print("notice: no node: the editor's slimGlb is not checked here (the browser test needs node too)")
        return False
    text = open(os.path.join(ROOT, "src", "ui", "ikd.js")).read()
    start = text.index("function slimGlb(bytes) {")
    fn = text[start:text.index("\n}\n", start) + 2]
    script = fn + "\nconst fs = require('fs');\n" \
        "fs.writeFileSync(process.argv[2], slimGlb(new Uint8Array(fs.readFileSync(process.argv[1]))));\n"
    subprocess.run(["node", "-e", script, src, dst], check=True)
    return True


def pipeline(url, workdir, ikd_bin):
    """README's pipeline script, run as a user would (after a restart of the server: the 409 path)."""
    script = os.path.join(workdir, "pipeline.py")
    text = open(os.path.join(ROOT, "README.md")).read()
    m = re.search(r"```python\n(# pipeline\.py.*?)```", text, re.S)
    assert m, "README.md has the pipeline script"
    with open(script, "w") as f:
        f.write(m.group(1))
    out = subprocess.run([sys.executable, script, os.path.join(workdir, "walk.bvh"), os.path.join(workdir, "out.bvh")],
                         capture_output=True, text=True, env=dict(os.environ, IKD_URL=url))
    assert out.returncode == 0, out.stderr + out.stdout
    data = open(os.path.join(workdir, "out.bvh")).read()
    assert data.startswith("HIERARCHY") and "Frames: 60" in data, data[:300]
    return out.stdout


def main():
    ikd_bin, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.environ.get("IKD_PYCLIENT_INSIDE"):  # in the virtual environment
        url, workdir = os.environ["IKD_URL"], os.environ["IKD_WORKDIR"]
        sys.path.insert(0, HERE)
        import pyharness
        return pyharness.run_tests({"test_client_calls": lambda: inside(url, workdir),
                                    "test_big_glb": lambda: big_glb(url, workdir),
                                    "test_readme_pipeline": lambda: pipeline(url, workdir, ikd_bin)}, "python client")
    venv = os.path.join(build, "pyclient")
    subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-index", os.path.join(ROOT, "clients", "python")],
                   check=True)
    # --max-import-body 8 MiB: a server set below the default, which the client's GLB cut gets under
    p = subprocess.Popen([ikd_bin, "--listen", "127.0.0.1:0", "--log-level", "off", "--skeleton-cache", "20000",
                          "--max-import-body", str(8 << 20)],
                         stdout=subprocess.PIPE, text=True)
    try:
        port = re.search(r":(\d+)$", p.stdout.readline().strip()).group(1)
        workdir = os.path.join(build, "pyclient-work")
        os.makedirs(workdir, exist_ok=True)
        env = dict(os.environ, IKD_PYCLIENT_INSIDE="1", IKD_URL="http://127.0.0.1:%s" % port, IKD_WORKDIR=workdir)
        return subprocess.run([py, os.path.abspath(__file__), ikd_bin, build], env=env, cwd=workdir).returncode
    finally:
        p.terminate()
        p.wait(30)


if __name__ == "__main__":
    sys.exit(main())
