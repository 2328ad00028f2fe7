#!/usr/bin/env python3
"""seeds.py - the fuzzers' seed corpus, from the request fixtures: every fixture body as a
solve request and inside a batch, in JSON (selector bytes 0 and 4); usage: seeds.py OUTDIR"""
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
# a few byte strings that decode to small valid chains for the solver fuzzer
for i in range(16):
    with open(os.path.join(solvers, f"seed-{i:02d}"), "wb") as f:
        f.write(bytes([(i * 37 + k * 11) % 256 for k in range(400)]))
print(f"seeds: {len(os.listdir(api))} api inputs, {len(os.listdir(solvers))} solver inputs in {out}")
