"""ikd - a client for ikd, the inverse-kinematics solving service (standard library only).

    import ikd
    client = ikd.Client("http://127.0.0.1:8080")            # token=..., encoding="msgpack"
    reply = client.solve({"chain": {"joints": [[0, 0, 0], [0, 1, 0], [0, 2, 0]]}, "target": [1, 1, 0]})
    imported = client.import_file("walk.bvh", scale=0.01)     # skeleton, id, clips, warnings
    for frame in client.clip({...}, on_frame=print): ...      # NDJSON, frames as they are solved

Every failure raises ikd.IkdError with the reply's status, code, message and field. A request
whose "skeleton" is an id this client registered (register, import_file) and that the server no
longer holds (409 unknown_skeleton: another instance, evicted) is sent again with the skeleton
registered anew, once. MessagePack is used when asked for and the msgpack module is importable.
"""
import http.client
import json
import os
import struct
import urllib.parse

try:  # optional: MessagePack when it is there
    import msgpack as _msgpack
except ImportError:  # pragma: no cover - depends on the machine
    _msgpack = None

__all__ = ["Client", "IkdError", "DEFAULT_URL", "forward_kinematics", "slim_glb"]
__version__ = "1.0.0"
DEFAULT_URL = "http://127.0.0.1:8080"


class IkdError(Exception):
    """An error reply of ikd (or a transport failure: status 0, code "transport")."""

    def __init__(self, status, code, message, field=""):
        super().__init__("%s %s: %s%s" % (status, code, message, " (%s)" % field if field else ""))
        self.status, self.code, self.message, self.field = status, code, message, field


def slim_glb(data):
    """A GLB cut down to what ikd's importer reads (the nodes, the skins' inverseBindMatrices and
    the animations' samplers, sparse parts and EXT_meshopt_compression data included): the binary
    chunk's bytes that no such accessor uses (meshes, textures: most of a VRM's megabytes) are
    left out and their views emptied, so a character over --max-import-body imports. The same
    bytes when they are not a whole GLB with a JSON and a binary chunk, or when under 4 KiB would go."""
    if len(data) < 28 or data[:4] != b"glTF" or struct.unpack_from("<I", data, 16)[0] != 0x4E4F534A:
        return data
    at = 20 + struct.unpack_from("<I", data, 12)[0]
    if at + 8 > len(data) or struct.unpack_from("<I", data, at + 4)[0] != 0x004E4942 or \
            at + 8 + struct.unpack_from("<I", data, at)[0] > len(data):
        return data  # not a whole GLB: ikd says what is wrong with it
    try:
        doc = json.loads(data[20:at].decode("utf-8"))
        views, accessors = doc.get("bufferViews") or [], doc.get("accessors") or []
        need = set()
        for a in [sk.get("inverseBindMatrices") for sk in doc.get("skins") or []] + \
                [sm.get(k) for an in doc.get("animations") or [] for sm in an.get("samplers") or [] for k in ("input", "output")]:
            acc = accessors[a] if isinstance(a, int) and 0 <= a < len(accessors) else {}
            sparse = acc.get("sparse") or {}
            need.update(v for v in (acc.get("bufferView"), (sparse.get("indices") or {}).get("bufferView"),
                                    (sparse.get("values") or {}).get("bufferView")) if isinstance(v, int))
        binary = data[at + 8:at + 8 + struct.unpack_from("<I", data, at)[0]]  # whole (checked above)
        out = bytearray()
        for i, v in enumerate(views):
            mo = (v.get("extensions") or {}).get("EXT_meshopt_compression")
            # where the view's bytes are: its own, or (compressed) its extension's; a view elsewhere stays
            src = mo if isinstance(mo, dict) and mo.get("buffer") == 0 else v if v.get("buffer") == 0 and not mo else None
            if src is None:
                continue
            start, length = src.get("byteOffset", 0), src["byteLength"]
            if i in need and start + length <= len(binary):
                out.extend(b"\0" * (-len(out) % 4))
                src["byteOffset"] = len(out)
                out.extend(binary[start:start + length])
            else:
                src["byteOffset"], src["byteLength"] = 0, 0
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return data  # ikd says what is wrong with the file
    if not doc.get("buffers") or len(out) + 4096 >= len(binary):
        return data
    doc["buffers"][0]["byteLength"] = len(out)
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    out.extend(b"\0" * (-len(out) % 4))
    head = struct.pack("<4sII", b"glTF", 2, 28 + len(text) + len(out))
    return head + struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(out), 0x004E4942) + bytes(out)


class Client:
    """One ikd server. url: its base URL (default $IKD_URL, else http://127.0.0.1:8080);
    token: the bearer token of --api-token; encoding: "json" or "msgpack" (needs msgpack)."""

    def __init__(self, url=None, token=None, encoding="json", timeout=60):
        self.url = (url or os.environ.get("IKD_URL") or DEFAULT_URL).rstrip("/")
        if encoding not in ("json", "msgpack"):
            raise ValueError("encoding must be json or msgpack")
        if encoding == "msgpack" and _msgpack is None:
            raise ValueError("encoding msgpack needs the msgpack module (pip install msgpack)")
        self.token, self.encoding, self.timeout = token, encoding, timeout
        parts = urllib.parse.urlsplit(self.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._skeletons = {}  # id -> skeleton, for sending again on 409

    # ---- the endpoints ----------------------------------------------------------------

    def solve(self, body):
        """POST /v1/solve: one chain and target."""
        return self._call("/v1/solve", body)

    def batch(self, body):
        """POST /v1/solve/batch: {"problems": [...]} -> {"results": [...]}."""
        return self._call("/v1/solve/batch", body)

    def skeleton(self, body):
        """POST /v1/solve/skeleton: a skeleton (or its id) and goals."""
        return self._call("/v1/solve/skeleton", body)

    def register(self, skeleton):
        """POST /v1/skeletons: keep a skeleton on the server; returns its id (sk_...)."""
        reply = self._call("/v1/skeletons", {"skeleton": skeleton})
        self._skeletons[reply["id"]] = skeleton
        return reply["id"]

    def solvers(self):
        """GET /v1/solvers: the solvers and their options."""
        return self._request("GET", "/v1/solvers", None, None)

    def import_file(self, path_or_bytes, format=None, **options):
        """POST /v1/import: a BVH, glTF or URDF file (a path or its bytes). Options: scale, fps,
        skin, humanoid, limits (and format, else the server tells it by the bytes). The
        imported skeleton's id is remembered for sending the skeleton again on 409."""
        if isinstance(path_or_bytes, (bytes, bytearray)):
            data = bytes(path_or_bytes)
        else:
            with open(path_or_bytes, "rb") as f:
                data = f.read()
            if format is None:
                ext = os.path.splitext(str(path_or_bytes))[1].lower().lstrip(".")
                format = ext if ext in ("bvh", "glb", "gltf", "urdf") else None
        if format in (None, "glb"):
            data = slim_glb(data)
        query = {k: str(v) for k, v in dict(options, format=format).items() if v is not None}
        path = "/v1/import" + ("?" + urllib.parse.urlencode(query) if query else "")
        reply = self._request("POST", path, data, "application/octet-stream")
        if reply.get("id"):
            self._skeletons[reply["id"]] = reply["skeleton"]
        return reply

    def clip(self, body, on_frame=None):
        """POST /v1/solve/clip. Without on_frame: the whole reply {"frames", "summary"}. With
        on_frame: the frames are streamed (NDJSON) and on_frame(frame) is called for each as it
        arrives; returns {"frames": [...], "summary": {...}} when the stream ends."""
        if on_frame is None:
            return self._call("/v1/solve/clip", body)
        return self._retry_409(body, lambda b: self._stream("/v1/solve/clip", b, on_frame))

    def clip_bvh(self, body):
        """POST /v1/solve/clip answered as a BVH file (bytes): the skeleton's rest pose as the
        hierarchy, the solved frames as motion; body["fps"] sets Frame Time (default 30)."""
        def send(b):
            return self._request("POST", "/v1/solve/clip", self._encode(b),
                                 "application/msgpack" if self.encoding == "msgpack" else "application/json",
                                 accept="application/x-bvh", raw=True)
        return self._retry_409(body, send)

    # ---- plumbing -------------------------------------------------------------------------

    def _call(self, path, body):
        ctype = "application/msgpack" if self.encoding == "msgpack" else "application/json"
        return self._retry_409(body, lambda b: self._request("POST", path, self._encode(b), ctype))

    def _retry_409(self, body, send):
        try:
            return send(body)
        except IkdError as e:
            sid = body.get("skeleton") if isinstance(body, dict) else None
            if e.status != 409 or e.code != "unknown_skeleton" or sid not in self._skeletons:
                raise
            self._call("/v1/skeletons", {"skeleton": self._skeletons[sid]})  # held again from now on
            return send(body)

    def _encode(self, body):
        if self.encoding == "msgpack":
            return _msgpack.packb(body, use_bin_type=True)
        return json.dumps(body, separators=(",", ":")).encode()

    def _connection(self):
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=self.timeout)

    def _headers(self, ctype, accept):
        h = {"Accept": accept}
        if ctype:
            h["Content-Type"] = ctype
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        return h

    def _request(self, method, path, data, ctype, accept=None, raw=False):
        accept = accept or ("application/msgpack" if self.encoding == "msgpack" else "application/json")
        conn = self._connection()
        try:
            conn.request(method, self._prefix + path, body=data, headers=self._headers(ctype, accept))
            r = conn.getresponse()
            payload = r.read()
            if raw and r.status == 200:
                return payload
            return self._decode(r.status, r.getheader("Content-Type", ""), payload)
        except (OSError, http.client.HTTPException) as e:
            raise IkdError(0, "transport", str(e)) from e
        finally:
            conn.close()

    def _decode(self, status, ctype, raw):
        try:
            if "msgpack" in ctype and _msgpack is not None:
                doc = _msgpack.unpackb(raw, raw=False)
            else:
                doc = json.loads(raw.decode() or "null")
        except ValueError:
            raise IkdError(status, "bad_reply", "the reply is not %s: %r" % (ctype, raw[:80]))
        if status >= 400:
            err = doc.get("error", {}) if isinstance(doc, dict) else {}
            raise IkdError(status, err.get("code", "error"), err.get("message", ""), err.get("field", ""))
        return doc

    def _stream(self, path, body, on_frame):
        conn = self._connection()
        try:
            conn.request("POST", self._prefix + path, body=json.dumps(body, separators=(",", ":")).encode(),
                         headers=self._headers("application/json", "application/x-ndjson"))
            r = conn.getresponse()
            if r.status != 200:
                return self._decode(r.status, r.getheader("Content-Type", ""), r.read())
            frames, summary = [], None
            for line in r:  # one JSON object a line, as each frame is solved
                if not line.strip():
                    continue
                doc = json.loads(line)
                if "summary" in doc:
                    summary = doc["summary"]
                else:
                    frames.append(doc)
                    on_frame(doc)
            return {"frames": frames, "summary": summary}
        except (OSError, http.client.HTTPException) as e:
            raise IkdError(0, "transport", str(e)) from e
        finally:
            conn.close()


# ---- forward kinematics, as ikd defines a pose ------------------------------------------------

def _qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz]


def _qrot(q, v):
    p = _qmul(_qmul(q, [v[0], v[1], v[2], 0.0]), [-q[0], -q[1], -q[2], q[3]])
    return p[:3]


def forward_kinematics(skeleton, pose=None):
    """World position and rotation of every joint of `skeleton` (a skeleton object, joints root
    first) in `pose` ({"root", "rotations"[, "translations"]}; default the rest pose): a list of
    {"name", "position", "rotation"}. A joint's world rotation is its parent's times its local
    rotation; its position is its parent's plus its parent's world rotation applied to its rest
    offset in the parent's rest frame (or its translation, when the pose gives one)."""
    joints = skeleton["joints"]
    index = {}
    out = []
    for i, j in enumerate(joints):
        if isinstance(j, list):
            j = {"position": j}
        index[j.get("name", i)] = i
        rest_q = j.get("rotation", [0.0, 0.0, 0.0, 1.0])
        local = pose["rotations"][i] if pose else None
        parent = j.get("parent", i - 1 if i else None)
        if isinstance(parent, str):
            parent = index[parent]
        if parent is None:
            pos = list(pose["root"]) if pose else list(j["position"])
            rot = local if pose else rest_q
        else:
            pj = joints[parent] if isinstance(joints[parent], dict) else {"position": joints[parent]}
            prest = pj.get("rotation", [0.0, 0.0, 0.0, 1.0])
            trans = pose.get("translations") if pose else None
            if trans and trans[i] is not None:
                off = trans[i]
            else:
                off = _qrot([-prest[0], -prest[1], -prest[2], prest[3]],
                            [a - b for a, b in zip(j["position"], pj["position"])])
            ppos, prot = out[parent]["position"], out[parent]["rotation"]
            pos = [a + b for a, b in zip(ppos, _qrot(prot, off))]
            if pose:
                rot = _qmul(prot, local)
            else:  # the rest pose: world rest rotations
                rot = rest_q
        out.append({"name": j.get("name", str(i)), "position": pos, "rotation": rot})
    return out
