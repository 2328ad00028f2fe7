"""pyharness.py - what the Python end-to-end suites share: the real daemon on a free loopback port, and a runner.

    from pyharness import Daemon, run_tests
    d = Daemon(ikd_bin, "--max-body", "65536")   # started; d.port, d.post(path, body, ctype)
    sys.exit(run_tests(globals(), "suite"))      # every test_* function; "N passed, N failed"
"""
import http.client
import json
import os
import re
import subprocess
import time

VERBOSE = bool(os.environ.get("IKD_TEST_VERBOSE"))


class Daemon:
    """ikd on 127.0.0.1 with --listen 127.0.0.1:0 (the port it prints) and --log-level off."""

    def __init__(self, ikd_bin, *flags):
        self.p = subprocess.Popen([ikd_bin, "--listen", "127.0.0.1:0", "--log-level", "off", *flags],
                                  stdout=subprocess.PIPE, stderr=None if VERBOSE else subprocess.DEVNULL, text=True)
        line = self.p.stdout.readline()
        m = re.search(r":(\d+)$", line.strip())
        if not m:
            raise RuntimeError("ikd did not start: %r" % line)
        self.port = int(m.group(1))

    def conn(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def post(self, path, body, ctype=None):
        """One POST; (status, the JSON reply)."""
        c = self.conn()
        try:
            c.request("POST", path, body=body, headers={"Content-Type": ctype} if ctype else {})
            r = c.getresponse()
            data = r.read()
            return r.status, json.loads(data)
        finally:
            c.close()

    def metric(self, name):
        c = self.conn()
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        c.close()
        return float(re.search(r"^%s (\S+)$" % re.escape(name), text, re.M).group(1))

    def rss_mb(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024.0

    def stop(self):
        self.p.terminate()
        rc = self.p.wait(30)
        if rc != 0:
            raise AssertionError("ikd exited with %d" % rc)


def run_tests(namespace, label):
    """Run every test_* function of `namespace` (IKD_TEST_ONLY=part: those whose name has it);
    print "label: N passed, N failed"; the exit status."""
    only = os.environ.get("IKD_TEST_ONLY")
    passed = failed = 0
    for name, f in list(namespace.items()):
        if not name.startswith("test_") or not callable(f) or (only and only not in name):
            continue
        t = time.time()
        try:
            f()
            passed += 1
            print("ok   %s (%.1f s)" % (name, time.time() - t), flush=True)
        except Exception as e:
            failed += 1
            print("FAIL %s: %r" % (name, e), flush=True)
    print("%s: %d passed, %d failed" % (label, passed, failed))
    return 1 if failed else 0
