#!/usr/bin/env python3
"""transport.py - the daemon as plain pipeline clients see it: early answers read, big clips, stalled streams.

Every client here is Python's http.client or a plain socket that sends its whole body before
it reads, as pipelines do. Checks (each against a real ikd on a free loopback port):

- early answers (413 by Content-Length, 413 for a chunked body past the limit, 401, 415,
  503 from the head under overload) are read by a client that is still sending: never a
  broken pipe or a reset;
- 1,000 requests against an overloaded daemon (--workers 1 --queue 1) get 200 or 503 with
  Retry-After, none a broken pipe or a reset;
- a clip of --max-frames (10,000) frames with four 6-DoF goals is solved at default flags;
- 8 clients that ask for 10,000-frame NDJSON streams and never read: the daemon's RSS grows
  by less than 64 MB, /healthz answers within a second, an ordinary solve goes through, and
  the memory held returns to its baseline when they leave.

usage: transport.py IKD_BIN BENCH_BIN   (prints "N passed, N failed"; exit 1 on a failure)
"""
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyharness  # noqa: E402

IKD, BENCH = sys.argv[1], sys.argv[2]
VERBOSE = bool(os.environ.get("IKD_TEST_VERBOSE"))


def log(*a):
    if VERBOSE:
        print(*a, file=sys.stderr, flush=True)


class Daemon(pyharness.Daemon):
    def __init__(self, *flags):
        super().__init__(IKD, *flags)


def post(d, path, body, headers, chunked=False):
    """POST with http.client (the whole body is sent before the reply is read); (status, headers, json)."""
    c = d.conn()
    try:
        if chunked:
            step = 65536
            c.request("POST", path, body=(body[i:i + step] for i in range(0, len(body), step)), headers=headers,
                      encode_chunked=True)
        else:
            c.request("POST", path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        return r.status, dict(r.getheaders()), json.loads(data) if data[:1] == b"{" else data
    finally:
        c.close()


JSONH = {"Content-Type": "application/json"}
SOLVE = json.dumps({"chain": {"joints": [[0, 0, 0], [0, 1, 0], [0, 2, 0]]}, "target": [1, 1, 0]}).encode()


def padded(n):
    """A JSON body of about n bytes."""
    return b'{"pad":"' + b"x" * n + b'"}'


def check_error(status, body, want_status, want_code):
    assert status == want_status, "status %d, wanted %d: %r" % (status, want_status, body)
    assert body["error"]["code"] == want_code, body


# ---- the checks ---------------------------------------------------------------------------

def test_early_answers_are_read():
    d = Daemon("--max-body", "65536", "--api-token", "secret")
    try:
        auth = dict(JSONH, Authorization="Bearer secret")
        big = padded(3 << 20)  # 3 MB: far past what the socket buffers take
        for k in range(5):
            s, h, b = post(d, "/v1/solve", big, auth)
            check_error(s, b, 413, "payload_too_large")
            assert h.get("Connection") == "close", h
            s, h, b = post(d, "/v1/solve", big, auth, chunked=True)
            check_error(s, b, 413, "payload_too_large")
            s, h, b = post(d, "/v1/solve", big, JSONH)
            check_error(s, b, 401, "unauthorized")
            s, h, b = post(d, "/v1/solve", big, {"Content-Type": "text/plain", "Authorization": "Bearer secret"})
            check_error(s, b, 415, "unsupported_media_type")
        s, h, b = post(d, "/v1/solve", SOLVE, auth)  # and the daemon serves on
        assert s == 200 and b["reached"], b
    finally:
        d.stop()


def test_linger_is_bounded():
    """Past --linger-bytes the connection is cut: the client sees an error, the daemon lives."""
    d = Daemon("--max-body", "65536", "--linger-bytes", "1048576")
    try:
        failed = False
        try:
            post(d, "/v1/solve", padded(1 << 20), JSONH, chunked=True)  # chunked: no length to judge it by
            post(d, "/v1/solve", padded(24 << 20), JSONH, chunked=True)
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            failed = True
        assert failed, "24 MB were read and dropped past --linger-bytes 1 MiB"
        s, h, b = post(d, "/v1/solve", SOLVE, JSONH)
        assert s == 200, b
    finally:
        d.stop()


def test_overload_refusals_are_read():
    d = Daemon("--workers", "1", "--queue", "1", "--debug-delay-ms", "20")
    try:
        # about 700 KB (more than the socket buffers take) of cheap two-bone problems
        joints = [{"name": "joint_%d_" % i + "n" * 220, "position": [0, i, 0]} for i in range(3)]
        body = json.dumps({"problems": [{"chain": {"joints": joints}, "target": [1, 1, 0]}] * 1000}).encode()
        counts, errors, lock = {}, [], threading.Lock()

        def client(n):
            for _ in range(n):
                try:
                    s, h, b = post(d, "/v1/solve/batch", body, JSONH)
                    if s == 503:
                        assert h.get("Retry-After") == "1", h
                        assert b["error"]["code"] == "overloaded", b
                    with lock:
                        counts[s] = counts.get(s, 0) + 1
                except Exception as e:  # a broken pipe, a reset, a bad reply
                    with lock:
                        errors.append(repr(e))

        threads = [threading.Thread(target=client, args=(42,)) for _ in range(24)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        log("overload: statuses %s, errors %d" % (counts, len(errors)))
        assert not errors, "%d of 1008 requests failed: %s" % (len(errors), errors[:3])
        assert set(counts) <= {200, 503} and counts.get(503, 0) > 0 and counts.get(200, 0) > 0, counts
    finally:
        d.stop()


def humanoid_clip(frames):
    """The bench's 240-frame humanoid clip (four 6-DoF goals a frame), its frames repeated to `frames`."""
    doc = json.loads(subprocess.check_output([BENCH, "1", "clip-json"]))
    fr = doc["frames"]
    doc["frames"] = [fr[k % len(fr)] for k in range(frames)]
    return json.dumps(doc, separators=(",", ":")).encode()


def test_max_frames_clip_at_default_flags():
    d = Daemon()
    try:
        body = humanoid_clip(10000)
        log("clip body: %d bytes" % len(body))
        s, h, b = post(d, "/v1/solve/clip", body, JSONH)
        assert s == 200, b
        assert len(b["frames"]) == 10000 and b["summary"]["frames"] == 10000, b["summary"]
        s, h, b = post(d, "/v1/solve/clip", humanoid_clip(10001), JSONH)
        check_error(s, b, 413, "payload_too_large")
        assert b["error"]["field"] == "frames", b
    finally:
        d.stop()


def stalled_stream(port, body):
    """A client that asks for the NDJSON stream and reads only the status line (retrying on 503)."""
    retries = 0
    while True:
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"POST /v1/solve/clip HTTP/1.1\r\nHost: ikd\r\nContent-Type: application/json\r\n"
                  b"Accept: application/x-ndjson\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        head = s.recv(12)
        if head == b"HTTP/1.1 200":
            return s, retries
        assert head == b"HTTP/1.1 503", head
        s.close()
        retries += 1
        time.sleep(0.2)


def test_stalled_streams_hold_bounded_memory():
    d = Daemon()
    try:
        body = humanoid_clip(10000)
        base_rss, base_held = d.rss_mb(), d.metric("ikd_memory_held_bytes")
        socks, retries, peak, slowest = [], 0, base_rss, 0.0
        for _ in range(8):
            s, r = stalled_stream(d.port, body)
            socks.append(s)
            retries += r
            peak = max(peak, d.rss_mb())
        t_end = time.time() + 4
        while time.time() < t_end:
            t = time.time()
            c = d.conn(timeout=5)
            c.request("GET", "/healthz")
            assert c.getresponse().status == 200
            c.close()
            slowest = max(slowest, time.time() - t)
            peak = max(peak, d.rss_mb())
            time.sleep(0.25)
        held = d.metric("ikd_memory_held_bytes")
        s, h, b = post(d, "/v1/solve/skeleton", json.dumps({"skeleton": {"joints": [[0, 0, 0], [0, 1, 0], [0, 2, 0]]},
                                                             "goals": [{"joint": 2, "position": [1, 1, 0]}]}).encode(),
                       JSONH)
        assert s == 200, b
        for s in socks:
            s.close()
        after = held
        for _ in range(200):
            after = d.metric("ikd_memory_held_bytes")
            if after <= base_held:
                break
            time.sleep(0.05)
        log("stalled streams: rss %.1f MB at start, peak %.1f MB; held %.0f while stalled, %.0f after; "
            "healthz slowest %.3f s; %d retries on 503" % (base_rss, peak, held, after, slowest, retries))
        if not os.environ.get("IKD_TEST_SANITIZED"):  # ASan's shadow memory and quarantine are not ikd's
            assert peak - base_rss < 64, "RSS grew by %.1f MB" % (peak - base_rss)
        assert slowest < (5.0 if os.environ.get("IKD_TEST_SANITIZED") else 1.0), "/healthz took %.3f s" % slowest
        assert held < 8 * 4e6, "8 stalled streams hold %.0f bytes" % held
        assert after == base_held, "memory held %.0f after they left, %.0f before" % (after, base_held)
    finally:
        d.stop()


def main():
    return pyharness.run_tests(globals(), "transport")


if __name__ == "__main__":
    sys.exit(main())
