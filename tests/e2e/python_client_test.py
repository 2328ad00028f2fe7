#!/usr/bin/env python3
"""python_client_test.py - the Python client (clients/python) installed as a user would, against a live daemon.

Makes a virtual environment in BUILD/pyclient, installs the package there with
`pip install --no-index ./clients/python` (no network), then runs this file's checks inside it:
every call, IkdError with the field, a streamed clip, import_file and `python -m ikd import`, the
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
                                    "test_readme_pipeline": lambda: pipeline(url, workdir, ikd_bin)}, "python client")
    venv = os.path.join(build, "pyclient")
    subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-index", os.path.join(ROOT, "clients", "python")],
                   check=True)
    p = subprocess.Popen([ikd_bin, "--listen", "127.0.0.1:0", "--log-level", "off", "--skeleton-cache", "20000"],
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
