// ikd.js - the ikd client for web editors (GET /client/ikd.js): solve, batch, skeleton, clip (streamed or BVH), import, register, solvers, in JSON or MessagePack.
//
//   import { IkdClient, IkdError } from "http://127.0.0.1:8080/client/ikd.js";
//   const ikd = new IkdClient("http://127.0.0.1:8080", { encoding: "msgpack", token: "secret" });
//   const reply = await ikd.skeleton({ skeleton: {...}, goals: [...] });
//   const clip = await ikd.clip({ skeleton: {...}, frames: [...] }, { onFrame: (f) => draw(f.pose) });
//
//   const take = await ikd.importFile(fileFromAPicker, { scale: 0.01 });   // skeleton, id, clips
//   const id = await ikd.register(skeleton);                               // then {skeleton: id, ...}
//
// Every method resolves with the reply document, or rejects with an IkdError carrying the
// HTTP status, ikd's error code, its message and the JSON path of the offending field. A
// request whose skeleton is an id this client registered or imported, and that the server no
// longer holds (409 unknown_skeleton), is sent again after the skeleton is registered anew.
// MessagePack comes from @msgpack/msgpack (pinned, served by ikd beside this file).

export class IkdError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.name = "IkdError";
    this.status = status; // HTTP status; 0 when no reply came (network error)
    this.code = code; // ikd's error code, e.g. "invalid_request"
    this.field = field; // e.g. "frames[12].goals[0].joint"; "" for the whole request
  }
}

const JSON_TYPE = "application/json";
const MSGPACK_TYPE = "application/msgpack";
let msgpackModule = null;

/* @msgpack/msgpack, loaded once from beside this module. */
export function loadMsgpack() {
  if (!msgpackModule) msgpackModule = import(new URL("./msgpack/index.mjs", import.meta.url).href);
  return msgpackModule;
}

/* A GLB cut down to what ikd's importer reads (nodes, skins, animations): the bytes of every
 * bufferView that no skin's inverseBindMatrices and no animation sampler uses (sparse parts and
 * EXT_meshopt_compression data included) are left out (the view stays in the JSON, empty), so a
 * character's textures and meshes, most of a VRM's megabytes, are not uploaded. The bytes as they
 * are when they are not a whole GLB with a binary chunk, or when nothing would be saved. importFile
 * sends a GLB so; the Python client's slim_glb does the same. */
export function slimGlb(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 28 || dv.getUint32(0, true) !== 0x46546c67 || dv.getUint32(16, true) !== 0x4e4f534a) return bytes;
  const jlen = dv.getUint32(12, true), at = 20 + jlen;
  if (at + 8 > bytes.byteLength || dv.getUint32(at + 4, true) !== 0x004e4942) return bytes;
  if (at + 8 + dv.getUint32(at, true) > bytes.byteLength) return bytes; // cut short: ikd says so (glb.length)
  let doc;
  try { doc = JSON.parse(new TextDecoder().decode(bytes.subarray(20, at))); } catch (_) { return bytes; } // ikd says what is wrong
  const bin = bytes.subarray(at + 8, at + 8 + dv.getUint32(at, true));
  const need = new Set(), view = (v) => { if (Number.isInteger(v)) need.add(v); };
  const use = (a) => {
    const x = (doc.accessors || [])[a];
    if (!x) return;
    view(x.bufferView);
    if (x.sparse) view((x.sparse.indices || {}).bufferView), view((x.sparse.values || {}).bufferView);
  };
  (doc.skins || []).forEach((sk) => use(sk.inverseBindMatrices));
  (doc.animations || []).forEach((an) => (an.samplers || []).forEach((sm) => { use(sm.input); use(sm.output); }));
  const kept = [];
  let off = 0;
  (doc.bufferViews || []).forEach((v, i) => {
    // where the view's bytes are: its own, or (compressed) its extension's; a view on another buffer stays
    const mo = (v.extensions || {}).EXT_meshopt_compression;
    const src = mo && mo.buffer === 0 ? mo : v.buffer === 0 && !mo ? v : null;
    if (!src) return;
    const from = src.byteOffset || 0;
    if (need.has(i) && from + src.byteLength <= bin.byteLength) {
      off += (4 - off % 4) % 4;
      kept.push([off, bin.subarray(from, from + src.byteLength)]);
      src.byteOffset = off, off += src.byteLength;
    } else {
      src.byteOffset = 0, src.byteLength = 0;
    }
  });
  if (!doc.buffers || !doc.buffers[0] || off + 4096 >= bin.byteLength) return bytes;
  doc.buffers[0].byteLength = off;
  const json = new TextEncoder().encode(JSON.stringify(doc)), jpad = (4 - json.length % 4) % 4, bpad = (4 - off % 4) % 4;
  const total = 20 + json.length + jpad + 8 + off + bpad, out = new Uint8Array(total), ov = new DataView(out.buffer);
  ov.setUint32(0, 0x46546c67, true), ov.setUint32(4, 2, true), ov.setUint32(8, total, true);
  ov.setUint32(12, json.length + jpad, true), ov.setUint32(16, 0x4e4f534a, true);
  out.set(json, 20), out.fill(32, 20 + json.length, 20 + json.length + jpad);
  const b = 20 + json.length + jpad;
  ov.setUint32(b, off + bpad, true), ov.setUint32(b + 4, 0x004e4942, true);
  for (const [o, part] of kept) out.set(part, b + 8 + o);
  return out;
}

export class IkdClient {
  /* baseUrl: "" for the page's own origin, else e.g. "http://127.0.0.1:8080" (the daemon
   * then needs --cors-origins with the page's origin); encoding: "json" | "msgpack";
   * token: the --api-token, sent as a bearer token. */
  constructor(baseUrl = "", { encoding = "json", token = "" } = {}) {
    if (encoding !== "json" && encoding !== "msgpack") throw new TypeError('encoding must be "json" or "msgpack"');
    this.baseUrl = baseUrl.replace(/\/$/, "");
    this.encoding = encoding;
    this.token = token;
    this.skeletons = new Map(); // id -> skeleton, sent again on 409
  }

  solve(body) { return this.#request("POST", "/v1/solve", body); }
  batch(body) { return this.#request("POST", "/v1/solve/batch", body); }
  skeleton(body) { return this.#again(body, () => this.#request("POST", "/v1/solve/skeleton", body)); }
  solvers() { return this.#request("GET", "/v1/solvers"); }

  /* POST /v1/skeletons: keep a skeleton on the server; resolves with its id (sk_...). */
  async register(skeleton) {
    const r = await this.#request("POST", "/v1/skeletons", { skeleton });
    this.skeletons.set(r.id, skeleton);
    return r.id;
  }

  /* POST /v1/import: a Blob/File, ArrayBuffer or Uint8Array of a BVH, glTF or URDF file (a GLB
   * without the bytes ikd does not read: slimGlb); options: format, scale, fps, skin, humanoid,
   * limits. Resolves with {format, skeleton, id, humanoid, effectors, clips, warnings}; the
   * skeleton's id is remembered for 409s. */
  async importFile(data, options = {}) {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(options)) if (v !== undefined && v !== null) query.set(k, String(v));
    if (!options.format && data && data.name) {
      const ext = String(data.name).toLowerCase().split(".").pop();
      if (["bvh", "glb", "gltf", "urdf"].includes(ext)) query.set("format", ext);
    }
    let body = data;
    if (!query.get("format") || query.get("format") === "glb") { // a GLB: only what ikd reads goes (slimGlb)
      const bytes = data instanceof Uint8Array ? data : data instanceof ArrayBuffer ? new Uint8Array(data)
        : data && typeof data.arrayBuffer === "function" ? new Uint8Array(await data.arrayBuffer()) : null;
      const slim = bytes ? slimGlb(bytes) : bytes;
      if (slim !== bytes) body = slim;
    }
    const q = query.toString();
    const headers = { Accept: this.encoding === "msgpack" ? MSGPACK_TYPE : JSON_TYPE, "Content-Type": "application/octet-stream" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let res;
    try {
      res = await fetch(this.baseUrl + "/v1/import" + (q ? "?" + q : ""), { method: "POST", headers, body });
    } catch (e) {
      throw new IkdError(0, "network_error", String(e && e.message || e), "");
    }
    if (!res.ok) throw await this.#error(res);
    const reply = await this.#read(res);
    if (reply.id) this.skeletons.set(reply.id, reply.skeleton);
    return reply;
  }

  /* A 409 unknown_skeleton for an id this client knows: register it again, retry once. */
  async #again(body, send) {
    try {
      return await send();
    } catch (e) {
      const id = body && typeof body.skeleton === "string" ? body.skeleton : null;
      if (!(e instanceof IkdError) || e.status !== 409 || e.code !== "unknown_skeleton" || !this.skeletons.has(id)) throw e;
      await this.#request("POST", "/v1/skeletons", { skeleton: this.skeletons.get(id) });
      return send();
    }
  }

  /* A clip. Without onFrame: the whole reply {frames, summary}. With onFrame(frame): the
   * frames are streamed (NDJSON, or the MessagePack stream) and onFrame is called with each
   * as soon as it arrives; resolves with {frames, summary} at the end. */
  clip(body, { onFrame } = {}) {
    return this.#again(body, () => this.#clip(body, onFrame));
  }

  /* A clip solved and written as BVH (Accept: application/x-bvh; the skeleton's rest pose is the
   * hierarchy): resolves with the file's text. */
  clipBvh(body) {
    return this.#again(body, async () => {
      const res = await this.#fetch("POST", "/v1/solve/clip", body, "application/x-bvh");
      if (!res.ok) throw await this.#error(res);
      return res.text();
    });
  }

  async #clip(body, onFrame) {
    if (!onFrame) return this.#request("POST", "/v1/solve/clip", body);
    const msgpack = this.encoding === "msgpack";
    const res = await this.#fetch("POST", "/v1/solve/clip", body,
      msgpack ? "application/x-msgpack-stream" : "application/x-ndjson");
    if (!res.ok) throw await this.#error(res);
    const frames = [];
    let summary = null;
    const take = (doc) => {
      if (doc && doc.summary) summary = doc.summary;
      else { frames.push(doc); onFrame(doc); }
    };
    if (msgpack) {
      const { decodeMultiStream } = await loadMsgpack();
      for await (const doc of decodeMultiStream(res.body)) take(doc);
    } else {
      const reader = res.body.getReader(), text = new TextDecoder();
      let rest = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (value) rest += text.decode(value, { stream: true });
        let nl;
        while ((nl = rest.indexOf("\n")) >= 0) {
          const line = rest.slice(0, nl);
          rest = rest.slice(nl + 1);
          if (line.trim()) take(JSON.parse(line));
        }
        if (done) break;
      }
    }
    return { frames, summary };
  }

  async #request(method, path, body) {
    const res = await this.#fetch(method, path, body, this.encoding === "msgpack" ? MSGPACK_TYPE : JSON_TYPE);
    if (!res.ok) throw await this.#error(res);
    return this.#read(res);
  }

  async #fetch(method, path, body, accept) {
    const headers = { Accept: accept };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let payload;
    if (body !== undefined) {
      if (this.encoding === "msgpack") {
        const { encode } = await loadMsgpack();
        payload = encode(body);
        headers["Content-Type"] = MSGPACK_TYPE;
      } else {
        payload = JSON.stringify(body);
        headers["Content-Type"] = JSON_TYPE;
      }
    }
    try {
      return await fetch(this.baseUrl + path, { method, headers, body: payload });
    } catch (e) {
      throw new IkdError(0, "network_error", String(e && e.message || e), "");
    }
  }

  async #read(res) {
    const type = (res.headers.get("Content-Type") || "").split(";")[0].trim();
    if (type === MSGPACK_TYPE) {
      const { decode } = await loadMsgpack();
      return decode(new Uint8Array(await res.arrayBuffer()));
    }
    return res.json();
  }

  async #error(res) {
    let doc = null;
    try { doc = await this.#read(res); } catch (_) { /* not ikd's error body (a proxy's, libmicrohttpd's) */ }
    const e = doc && doc.error;
    if (e) return new IkdError(res.status, e.code, e.message, e.field || "");
    return new IkdError(res.status, "http_error", `HTTP ${res.status}`, "");
  }
}
