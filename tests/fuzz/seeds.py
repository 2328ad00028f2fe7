#!/usr/bin/env python3
"""seeds.py - the fuzzers' seed corpus, from the request fixtures: every fixture body as a
solve request and inside a batch, in JSON (selector bytes 0 and 4), plus byte strings for the
solver fuzzer and number strings for the strtod fuzzer; usage: seeds.py OUTDIR"""
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
# number strings for the strtod fuzzer: the shapes jansson passes, and corners around them
numbers = os.path.join(out, "strtod")
os.makedirs(numbers, exist_ok=True)
for i, t in enumerate(["0", "-0.0", "1.0691712523735522", "-0.30000000000000004", "2.5e-17", "1e22", "1e23",
                       "9007199254740993", "0.1234567890123456789", "123456789012345678901", "4.9e-324",
                       "1.7976931348623157e308", "12345678.87654321e-5", "0x1p3", "inf", " 1", "1e", "7.5e+027"]):
    with open(os.path.join(numbers, f"seed-{i:02d}"), "w") as f:
        f.write(t)
print(f"seeds: {len(os.listdir(api))} api inputs, {len(os.listdir(solvers))} solver inputs, "
      f"{len(os.listdir(numbers))} numbers in {out}")
