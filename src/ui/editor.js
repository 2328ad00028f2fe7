// editor.js - ikd's browser editor: a humanoid (or chain) drawn with three.js, goal handles to drag, solves through /client/ikd.js.
import * as THREE from "/ui/three/build/three.module.js";
import { OrbitControls } from "/ui/three/examples/jsm/controls/OrbitControls.js";
import { TransformControls } from "/ui/three/examples/jsm/controls/TransformControls.js";
import { IkdClient, IkdError } from "/client/ikd.js";

// ---- models ----------------------------------------------------------------------------

// The humanoid of `make bench` (tests/unit/humanoid.c: the same joints, rest pose and limits; the browser test
// compares the two field by field).
const NAMES = ["pelvis", "spine1", "spine2", "chest", "neck", "head", "head_end", "clavicle_l", "upperarm_l",
  "lowerarm_l", "hand_l", "hand_end_l", "clavicle_r", "upperarm_r", "lowerarm_r", "hand_r", "hand_end_r", "thigh_l",
  "calf_l", "foot_l", "toe_l", "thigh_r", "calf_r", "foot_r", "toe_r"];
const LAYOUT = [[-1, 0, 1.0, 0], [0, 0, 1.1, 0], [1, 0, 1.25, 0], [2, 0, 1.4, 0], [3, 0, 1.55, 0], [4, 0, 1.65, 0.02],
  [5, 0, 1.82, 0.02], [3, 0.04, 1.5, 0], [7, 0.18, 1.5, 0], [8, 0.45, 1.5, 0], [9, 0.7, 1.5, 0], [10, 0.8, 1.5, 0],
  [3, -0.04, 1.5, 0], [12, -0.18, 1.5, 0], [13, -0.45, 1.5, 0], [14, -0.7, 1.5, 0], [15, -0.8, 1.5, 0],
  [0, 0.1, 0.95, 0], [17, 0.1, 0.52, 0.01], [18, 0.1, 0.09, 0], [19, 0.1, 0.02, 0.13], [0, -0.1, 0.95, 0],
  [21, -0.1, 0.52, 0.01], [22, -0.1, 0.09, 0], [23, -0.1, 0.02, 0.13]];

const euler = (a, b, c) => ({ type: "euler", order: "xyz", min_deg: [-a, -b, -c], max_deg: [a, b, c] });
const ball = (swing, twist) => ({ type: "ball", max_deg: swing, twist_min_deg: -twist, twist_max_deg: twist });
const hinge = (axis, lo, hi) => ({ type: "hinge", axis, min_deg: lo, max_deg: hi });

function humanoid() {
  const limits = {};
  for (const i of [1, 2, 3]) limits[i] = euler(20, 15, 20);
  limits[4] = euler(40, 50, 30);
  limits[5] = euler(30, 40, 20);
  for (const s of [0, 1]) {
    const b = s ? 12 : 7, h = s ? 21 : 17;
    limits[b] = euler(10, 15, 20);
    limits[b + 1] = ball(100, 80);
    limits[b + 2] = hinge([0, s ? -1 : 1, 0], 0, 145);
    limits[b + 3] = euler(70, 30, 80);
    limits[h] = ball(90, 45);
    limits[h + 1] = hinge([1, 0, 0], 0, 150);
    limits[h + 2] = euler(40, 20, 25);
    limits[h + 3] = hinge([1, 0, 0], -30, 60);
  }
  const joints = LAYOUT.map(([parent, x, y, z], i) => {
    const j = { name: NAMES[i], position: [x, y, z] };
    if (i) j.parent = parent;
    if (limits[i]) j.constraint = limits[i];
    return j;
  });
  const goals = [
    { joint: "hand_l", kind: "pose" }, { joint: "hand_r", kind: "pose" },
    { joint: "foot_l", kind: "pose" }, { joint: "foot_r", kind: "pose" },
    { joint: "head", kind: "aim", axis: [0, 0, 1] },
  ];
  return { joints, goals };
}

function chain() {
  const joints = [];
  for (let i = 0; i < 7; i++) {
    const j = { name: `j${i}`, position: [0, 0.3 * i, 0] };
    if (i > 0 && i < 6) j.constraint = hinge([1, 0, 0], -120, 120);
    joints.push(j);
  }
  return { joints, goals: [{ joint: "j6", kind: "position" }] };
}

// ---- state -----------------------------------------------------------------------------

const $ = (id) => document.getElementById(id);
const state = {
  model: null, // {joints, goals}
  rest: [],     // rest world positions
  pose: null,   // the last reply's pose (fed back as the next start)
  joints: null, // the last reply's joints (world positions and rotations)
  reply: null,
  inFlight: false,
  dirty: false,
  started: 0,   // solve requests sent so far
  moved: null,  // the index of the handle moved last (goalsDoc: below the others in priority)
  touched: new Set(), // the handles moved since the model was loaded (ikOnClip holds them)
  waiters: [],  // setGoal promises {need, resolve}: resolved by the first drawn reply of request `need` or later
  recording: null,
  token: sessionStorage.getItem("ikd-token") || "",
};
let client = new IkdClient("", { encoding: "json", token: state.token });

// ---- three.js scene -------------------------------------------------------------------

const view = $("view");
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1d2127);
const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 100);
camera.position.set(1.6, 1.6, 3.2);
const orbit = new OrbitControls(camera, renderer.domElement);
orbit.target.set(0, 1, 0);
orbit.update();
scene.add(new THREE.HemisphereLight(0xffffff, 0x334455, 1.0));
const grid = new THREE.GridHelper(4, 20, 0x3a414c, 0x2c323b);
scene.add(grid);

const skeletonGroup = new THREE.Group(), limitGroup = new THREE.Group(), handleGroup = new THREE.Group();
// the model's frame: the scene's own (y up), or turned -90 degrees about x for a z-up robot (URDF, ROS's
// REP 103), so that it stands on the grid; goals and poses stay in the model's frame
const modelFrame = new THREE.Group();
modelFrame.add(skeletonGroup, limitGroup, handleGroup);
scene.add(modelFrame);
const jointGeo = new THREE.SphereBufferGeometry(0.018, 12, 8);
const jointMat = new THREE.MeshLambertMaterial({ color: 0xcfd8e3 });
const boneMat = new THREE.LineBasicMaterial({ color: 0x8fb3dd });
const limitMat = new THREE.LineBasicMaterial({ color: 0xd39b4a, transparent: true, opacity: 0.7 });
let jointMeshes = [], boneLines = null;
// a robot's links (URDF) as simple shapes: a cylinder from each joint to its child, 1 long along +y, placed per pose
let linkMeshes = [];
const linkGeo = new THREE.CylinderBufferGeometry(1, 1, 1, 16).translate(0, 0.5, 0);
const linkMat = new THREE.MeshLambertMaterial({ color: 0x9aa7b8 });

const gizmo = new TransformControls(camera, renderer.domElement);
gizmo.setSize(0.7);
// while a handle is dragged the rest pull turns a joint at most DRAG_PULL_MAX_DEG a solve (as in a
// clip), so the pose follows a jump of the pull's pose over several solves; on release one more
// solve without the bound lets it settle fully; a drag's solves keep a clip frame's iteration
// budget (300, 8 restarts) rather than a skeleton request's 1000: a hand dragged out of reach
// would otherwise spend 12 restarts a solve
const DRAG_PULL_MAX_DEG = 6;
const DRAG_MAX_ITERATIONS = 300;
gizmo.addEventListener("dragging-changed", (e) => { orbit.enabled = !e.value; if (!e.value) settle(); });
gizmo.addEventListener("objectChange", () => requestSolve());
scene.add(gizmo);

function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h);
  camera.aspect = w / Math.max(1, h);
  camera.updateProjectionMatrix();
}
window.addEventListener("resize", () => { resize(); invalidate(); });

/* Drawn on demand: a frame is rendered when something changed (a pose, the camera, a handle,
 * the window), not 60 times a second; software GL then leaves the CPU to the solves. */
let framePending = false;
function invalidate() {
  if (framePending) return;
  framePending = true;
  requestAnimationFrame(frame);
}
function frame() {
  framePending = false;
  renderer.render(scene, camera);
}
orbit.addEventListener("change", invalidate);
gizmo.addEventListener("change", invalidate);

// ---- drawing ---------------------------------------------------------------------------

function jointIndex(ref) {
  return typeof ref === "number" ? ref : state.model.joints.findIndex((j) => j.name === ref);
}

function buildSkeleton() {
  skeletonGroup.children.slice().forEach((c) => skeletonGroup.remove(c)); /* three r111 has no Group.clear */
  jointMeshes = state.model.joints.map(() => {
    const m = new THREE.Mesh(jointGeo, jointMat);
    skeletonGroup.add(m);
    return m;
  });
  const pairs = (state.model.joints.length - 1) * 2;
  const geo = new THREE.BufferGeometry();
  geo.setAttribute("position", new THREE.BufferAttribute(new Float32Array(pairs * 3), 3));
  boneLines = new THREE.LineSegments(geo, boneMat);
  skeletonGroup.add(boneLines);
  linkMeshes = state.model.format === "urdf" ? state.model.joints.map((_, i) => {
    if (i === 0) return null;
    const m = new THREE.Mesh(linkGeo, linkMat);
    skeletonGroup.add(m);
    return m;
  }) : [];
}

/* Joint i's parent index in `joints` (the model's by default; an import reply's before it is the
 * model): -1 for the root, the joint before when `parent` is absent, else by index or name. */
function parentOf(i, joints = state.model.joints) {
  const p = joints[i].parent;
  if (i === 0) return -1;
  if (p === undefined) return i - 1;
  return typeof p === "number" ? p : joints.findIndex((j) => j.name === p);
}

/* World positions and rotations now: the reply's, else the rest pose. */
function worldPose() {
  if (state.joints) return state.joints.map((j) => ({ p: j.position, q: j.rotation }));
  return state.rest.map((p, i) => ({ p, q: state.model.joints[i].rotation || [0, 0, 0, 1] }));
}

function drawPose() {
  const w = worldPose();
  w.forEach((j, i) => jointMeshes[i].position.set(j.p[0], j.p[1], j.p[2]));
  const arr = boneLines.geometry.attributes.position.array;
  let k = 0;
  for (let i = 1; i < w.length; i++) {
    const p = w[parentOf(i)].p, c = w[i].p;
    arr.set([p[0], p[1], p[2], c[0], c[1], c[2]], k);
    k += 6;
  }
  boneLines.geometry.attributes.position.needsUpdate = true;
  drawLinks(w);
  drawLimits(w);
  poseMesh(w);
  invalidate();
}

/* Each link's cylinder from its joint's parent to the joint, its radius a fiftieth of the
 * robot's size (links with no length, e.g. a fixed flange at its joint, are hidden). */
function drawLinks(w) {
  const up = new THREE.Vector3(0, 1, 0), d = new THREE.Vector3(), r = (state.model.size || 1) / 50;
  linkMeshes.forEach((m, i) => {
    if (!m) return;
    const a = w[parentOf(i)].p, b = w[i].p;
    d.set(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
    const len = d.length();
    m.visible = len > 1e-9;
    if (!m.visible) return;
    m.position.set(a[0], a[1], a[2]);
    m.quaternion.setFromUnitVectors(up, d.divideScalar(len));
    m.scale.set(r, len, r);
  });
}

/* Hinge arcs and ball cones at each limited joint (built once per model, in the rest frame,
 * at the origin; drawLimits carries each by its parent's turn from rest to its joint). Euler
 * joints get their three ranges as short arcs about the axes of their order, in the joint's
 * rest frame (each range drawn alone, the others at zero). */
let limitLines = []; // [joint index, THREE.Line]

function buildLimits() {
  limitGroup.children.slice().forEach((c) => { limitGroup.remove(c); c.geometry.dispose(); });
  limitLines = [];
  state.model.joints.forEach((j, i) => {
    const c = j.constraint;
    if (!c) return;
    const kids = state.model.joints.map((_, k) => k).filter((k) => parentOf(k) === i);
    const restDir = kids.length ? new THREE.Vector3(...state.rest[kids[0]]).sub(new THREE.Vector3(...state.rest[i])).normalize()
      : new THREE.Vector3(0, 1, 0);
    const pts = [];
    const arc = (axis, from, lo, hi, r) => {
      for (let d = lo; d <= hi + 1e-9; d += Math.max(2, (hi - lo) / 24))
        pts.push(from.clone().applyAxisAngle(axis, THREE.Math.degToRad(d)).multiplyScalar(r));
    };
    if (c.type === "hinge") {
      const axis = new THREE.Vector3(...c.axis).normalize();
      const from = restDir.clone().sub(axis.clone().multiplyScalar(restDir.dot(axis))).normalize();
      arc(axis, from, c.min_deg, c.max_deg, 0.08);
    } else if (c.type === "ball") {
      const perp = Math.abs(restDir.x) < 0.9 ? new THREE.Vector3(1, 0, 0) : new THREE.Vector3(0, 1, 0);
      const side = restDir.clone().cross(perp).normalize();
      const edge = restDir.clone().applyAxisAngle(side, THREE.Math.degToRad(Math.min(c.max_deg, 179)));
      arc(restDir, edge, 0, 360, 0.1);
    } else if (c.type === "euler") {
      // the order's letters are axes of the joint's rest frame (its world rest rotation turns them), or of its frame
      const rest = new THREE.Quaternion(...(c.frame || j.rotation || [0, 0, 0, 1]));
      const unit = { x: [1, 0, 0], y: [0, 1, 0], z: [0, 0, 1] };
      const axes = [...(c.order || "xyz").toLowerCase()].map((l) => new THREE.Vector3(...unit[l]).applyQuaternion(rest));
      axes.forEach((axis, a) => {
        const from = Math.abs(axis.dot(restDir)) > 0.9 ? axes[(a + 1) % 3].clone() : restDir.clone();
        arc(axis, from.sub(axis.clone().multiplyScalar(from.dot(axis))).normalize(), c.min_deg[a], c.max_deg[a], 0.05);
        pts.push(pts[pts.length - 1]);
      });
    }
    if (pts.length < 2) return;
    const line = new THREE.Line(new THREE.BufferGeometry().setFromPoints(pts), limitMat);
    limitGroup.add(line);
    limitLines.push([i, line]);
  });
}

/* Each limit drawing at its joint, turned as the joint's parent turned from its rest rotation. */
function drawLimits(w) {
  limitGroup.visible = $("draw_limits").checked && $("limits").checked;
  if (!limitGroup.visible) return;
  const turn = new THREE.Quaternion(), rest = new THREE.Quaternion();
  for (const [i, line] of limitLines) {
    const pi = parentOf(i), q = pi >= 0 ? w[pi].q : [0, 0, 0, 1], r = pi >= 0 && state.model.joints[pi].rotation || [0, 0, 0, 1];
    turn.set(q[0], q[1], q[2], q[3]).multiply(rest.set(r[0], r[1], r[2], r[3]).inverse());
    line.quaternion.copy(turn);
    line.position.set(w[i].p[0], w[i].p[1], w[i].p[2]);
  }
}

// ---- goals and handles -----------------------------------------------------------------

const handleMat = { pose: 0x4cc2ff, position: 0x4cc2ff, aim: 0xf2c14e };
let handles = [];

function buildHandles() {
  handleGroup.children.slice().forEach((c) => handleGroup.remove(c));
  gizmo.detach();
  handles = state.model.goals.map((g) => {
    const i = jointIndex(g.joint), p = state.rest[i];
    const geo = g.kind === "aim" ? new THREE.SphereBufferGeometry(0.04, 16, 10) : new THREE.BoxBufferGeometry(0.07, 0.07, 0.07);
    const mesh = new THREE.Mesh(geo, new THREE.MeshLambertMaterial({ color: handleMat[g.kind], transparent: true, opacity: 0.8 }));
    if (g.kind === "aim") mesh.position.set(p[0] + g.axis[0] * 0.8, p[1] + g.axis[1] * 0.8, p[2] + g.axis[2] * 0.8);
    else mesh.position.set(p[0], p[1], p[2]);
    mesh.userData.goal = g;
    handleGroup.add(mesh);
    return mesh;
  });
}

/* The goals; the handle moved last (dragged or set by setGoal) is below the others in priority,
 * so the pinned goals stay exact and it reaches as far as they leave it (goals[].priority). */
function goalsDoc() {
  return state.model.goals.map((g, k) => {
    const h = handles[k], p = [h.position.x, h.position.y, h.position.z];
    const doc = g.kind === "aim" ? { joint: g.joint, aim: { axis: g.axis, at: p } } : { joint: g.joint, position: p };
    if (g.kind === "pose" && g.rotation) doc.rotation = g.rotation;
    if (state.moved !== null && handles.length > 1) doc.priority = k === state.moved ? 0 : 1;
    return doc;
  });
}

function skeletonDoc() {
  const limits = $("limits").checked;
  if (state.model.id && limits) return state.model.id; // an imported skeleton, by reference (the client re-sends it on 409)
  return { joints: state.model.joints.map((j) => {
    if (limits || !j.constraint) return j;
    const { constraint, ...rest } = j;
    return rest;
  }) };
}

/* The options the panel sets; an imported model's tolerance is 0.1 mm on a 1.8 m figure (ikd's
 * default, 1e-4 skeleton units, is a micron on a centimetre rig, which a solve does not settle to). */
function optionsDoc() {
  const o = { rest_pull: Number($("rest_pull").value), soften: Number($("soften").value), stretch: Number($("stretch").value) };
  if (state.model.size) o.tolerance = 1e-4 * state.model.size / 1.8;
  const first = (state.model.clips && state.model.clips[0] && state.model.clips[0].poses[0]) || state.model.stance;
  if (first) o.preferred = { rotations: first.rotations }; // the character's own stance (or a relaxed one), not its T-pose
  return o;
}

function requestBody() {
  const options = gizmo.dragging ? { ...optionsDoc(), pull_max_deg: DRAG_PULL_MAX_DEG, max_iterations: DRAG_MAX_ITERATIONS }
    : optionsDoc();
  const body = { skeleton: skeletonDoc(), root: $("root").value, solver: $("solver").value, options, goals: goalsDoc() };
  if (state.pose) body.pose = state.pose;
  return body;
}

// ---- solving: one request in flight, the newest goals win -------------------------------

function requestSolve() {
  if (state.recording) state.recording.push({ goals: goalsDoc() });
  settle();
}

/* A solve of the goals as they are (after the one in flight), recorded as no frame. */
function settle() {
  if (state.inFlight) { state.dirty = true; return; }
  solve();
}

async function solve() {
  state.inFlight = true;
  state.dirty = false;
  const seq = ++state.started, t0 = performance.now();
  try {
    const reply = await client.skeleton(requestBody());
    if (seq < state.firstOfModel) return; // a reply for the model shown before (opened over it)
    show(reply, performance.now() - t0, seq);
  } catch (e) {
    await failed(e);
  } finally {
    state.inFlight = false;
    if (state.dirty) solve();
  }
}

function show(reply, rtt, seq) {
  state.reply = reply;
  state.pose = reply.pose;
  state.joints = reply.joints || null;
  drawPose();
  $("message").textContent = "";
  const now = performance.now();
  state.solvedAt = (state.solvedAt || []).filter((t) => now - t < 1000).concat(now); // solves drawn in the last second
  state.rtt = rtt;
  $("timing").textContent = `${reply.status}: solve ${reply.solve_us.toFixed(0)} us, round trip ${rtt.toFixed(1)} ms ` +
    `(${state.solvedAt.length} solves/s), ` +
    `${reply.iterations} iterations (${client.encoding})`;
  const rows = (reply.goals || []).map((g) => `<tr><td>${g.joint}</td><td class="${g.status}">${g.status}</td>` +
    `<td>${g.error.toExponential(1)}</td><td>${g.rotation_error_deg.toFixed(2)}</td></tr>`);
  $("goals").tBodies[0].innerHTML = rows.join("");
  // a reply to a request sent before a goal moved does not answer that move
  const ready = state.waiters.filter((w) => w.need <= seq);
  state.waiters = state.waiters.filter((w) => w.need > seq);
  requestAnimationFrame(() => ready.forEach((w) => w.resolve(reply))); // resolved once the new pose is drawn
}

async function failed(e) {
  if (e instanceof IkdError && e.status === 401) {
    $("token_form").hidden = false;
    $("message").textContent = "ikd wants an API token (--api-token)";
    return;
  }
  $("message").textContent = e instanceof IkdError ? `${e.status} ${e.code}: ${e.message}${e.field ? ` (${e.field})` : ""}`
    : String(e);
  state.waiters.splice(0).forEach((w) => w.resolve(null));
}

// ---- record and play back through /v1/solve/clip ----------------------------------------

async function play() {
  const frames = state.recording && state.recording.length ? state.recording : state.lastRecording;
  if (!frames || !frames.length) return;
  const body = { skeleton: skeletonDoc(), root: $("root").value, options: optionsDoc(), frames };
  state.clipFrames = [], state.clipFps = 30, state.clipName = "recording";
  clipSolved(body);
  const queue = [];
  let done = false;
  const step = () => {
    const f = queue.shift();
    if (f) {
      state.pose = f.pose;
      state.joints = fk(f.pose, f.goals);
      state.clipFrames.push(state.joints.map((j) => ({ p: j.position, q: j.rotation })));
      drawPose();
      $("timing").textContent = `playback: frame ${f.frame + 1} of ${frames.length}, ${f.status}`;
    }
    if (!done || queue.length) requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
  try {
    const t0 = performance.now();
    const res = await client.clip(body, { onFrame: (f) => queue.push(f) });
    state.lastPlayback = { ...res, ms: performance.now() - t0 };
  } catch (e) {
    await failed(e);
  }
  done = true;
}

/* World positions and rotations from a pose (root and local rotations): the clip's frames
 * carry no joints, so the editor places them itself; a goal's `stretch` (options.stretch)
 * lengthens both bones of its limb, as the server does. */
function fk(pose, goals = []) {
  const out = [], scale = [];
  for (const g of goals) {
    if (!(g.stretch > 1)) continue;
    const j = jointIndex(g.joint);
    scale[j] = scale[parentOf(j)] = g.stretch;
  }
  const rest = state.rest.map((p) => new THREE.Vector3(...p));
  const restRot = state.model.joints.map((j) => new THREE.Quaternion(...(j.rotation || [0, 0, 0, 1])));
  state.model.joints.forEach((_, i) => {
    const l = pose.rotations[i], q = new THREE.Quaternion(l[0], l[1], l[2], l[3]);
    const pi = parentOf(i);
    if (pi < 0) { out.push({ position: pose.root, rotation: [q.x, q.y, q.z, q.w], q }); return; }
    const pq = out[pi].q, wq = pq.clone().multiply(q);
    // the offset in the parent's rest frame: the pose's translation where it has one, else the rest
    // offset (rest rotations: identity for the built-in models), turned
    const t = pose.translations && pose.translations[i];
    const inParent = t ? new THREE.Vector3(...t) : rest[i].clone().sub(rest[pi]).applyQuaternion(restRot[pi].clone().inverse());
    const off = inParent.multiplyScalar(scale[i] || 1).applyQuaternion(pq);
    const p = new THREE.Vector3(...out[pi].position).add(off);
    out.push({ position: [p.x, p.y, p.z], rotation: [wq.x, wq.y, wq.z, wq.w], q: wq });
  });
  return out;
}

// ---- files: open through POST /v1/import --------------------------------------------------

/* A model from an import reply: the skeleton (kept by the server: `id`), handles on the
 * humanoid's hands, feet and head (the effectors: else the skeleton's leaves, 8 at most) and
 * on its hips (a position: dragged with the root free, the body follows and pinned feet stay). */
function imported(reply, name) {
  const roles = reply.humanoid || {};
  const ends = reply.humanoid ? reply.effectors.slice(0, 8) : movableEnds(reply.skeleton.joints, reply.effectors).slice(0, 8);
  const goals = ends.map((e) => ({ joint: e, kind: e === roles.head ? "position" : "pose" }));
  if (roles.hips && !ends.includes(roles.hips)) goals.push({ joint: roles.hips, kind: "position" });
  return { joints: reply.skeleton.joints, goals, id: reply.id, format: reply.format, name, humanoid: reply.humanoid,
    clips: reply.clips || [], warnings: reply.warnings || [] };
}

/* A relaxed stance for a humanoid resting in a T-pose and bringing no animation: its rest pose
 * with each upper arm that rests within 30 degrees of level turned 65 degrees down, and its elbow,
 * where a hinge, bent 15 degrees within its range, the way that brings the hand forward (toward
 * the toes). {root, rotations} (local, as a pose), or null where no arm rests level. */
function relaxedStance(roles) {
  const J = state.model.joints, V = THREE.Vector3, Q = THREE.Quaternion;
  const R = J.map((j) => new Q(...(j.rotation || [0, 0, 0, 1])));
  const local = J.map((_, i) => (parentOf(i) < 0 ? R[i].clone() : R[parentOf(i)].clone().inverse().multiply(R[i])));
  const at = (name) => (name === undefined ? -1 : jointIndex(name));
  const foot = at(roles.foot_l), toe = at(roles.toes_l);
  const fwd = foot >= 0 && toe >= 0 ? new V(...state.rest[toe]).sub(new V(...state.rest[foot])).setY(0) : new V(0, 0, 1);
  if (fwd.lengthSq() < 1e-12) fwd.set(0, 0, 1);
  fwd.normalize();
  let any = false;
  for (const s of ["l", "r"]) {
    const ua = at(roles[`upper_arm_${s}`]), la = at(roles[`lower_arm_${s}`]), hand = at(roles[`hand_${s}`]);
    if (ua < 0 || la < 0 || parentOf(la) !== ua) continue;
    const d = new V(...state.rest[la]).sub(new V(...state.rest[ua])).normalize();
    const axis = d.clone().cross(new V(0, -1, 0));
    if (Math.abs(d.y) > 0.5 || axis.lengthSq() < 1e-12) continue; // not level: no T-pose arm
    const W = new Q().setFromAxisAngle(axis.normalize(), THREE.Math.degToRad(65)).multiply(R[ua]);
    local[ua] = parentOf(ua) < 0 ? W.clone() : R[parentOf(ua)].clone().inverse().multiply(W);
    const c = J[la].constraint;
    if (c && c.type === "hinge" && hand >= 0 && parentOf(hand) === la) {
      const axisLocal = new V(...c.axis).normalize().applyQuaternion(R[la].clone().inverse());
      const fore = new V(...state.rest[hand]).sub(new V(...state.rest[la])).applyQuaternion(R[la].clone().inverse());
      let best = null, bestDot = -Infinity;
      for (const deg of [15, -15]) {
        if (deg < c.min_deg || deg > c.max_deg) continue;
        const l = local[la].clone().multiply(new Q().setFromAxisAngle(axisLocal, THREE.Math.degToRad(deg)));
        const dot = fore.clone().applyQuaternion(W.clone().multiply(l)).dot(fwd);
        if (dot > bestDot) best = l, bestDot = dot;
      }
      if (best) local[la] = best;
    }
    any = true;
  }
  return any ? { root: state.rest[0].slice(), rotations: local.map((q) => [q.x, q.y, q.z, q.w]) } : null;
}

/* The Model list's entry for the opened file (selected), or none (label null: a built-in model). */
function fileOption(label) {
  let o = $("model").querySelector('option[value="file"]');
  if (!label) { if (o) o.remove(); return; }
  if (!o) { o = document.createElement("option"); o.value = "file"; $("model").appendChild(o); }
  o.textContent = label;
  $("model").value = "file";
}

/* Start from a pose ({root, rotations, translations?}): drawn, with the handles of position and
 * pose goals where it puts their joints (aim handles stay where they point). */
function startFrom(first) {
  state.pose = { root: first.root, rotations: first.rotations };
  state.joints = fk(first);
  state.model.goals.forEach((g, k) => {
    if (g.kind !== "aim") handles[k].position.set(...state.joints[jointIndex(g.joint)].position);
  });
  drawPose();
}

/* The effectors a handle can move, one per rigid body: a robot's fingers and tool frames fixed to
 * its hand share the hand's nearest joint that turns (pinned side by side, each would hold the
 * others' handle still), and a frame fixed to the base has none. The first of each is kept. */
function movableEnds(joints, effectors) {
  const index = new Map(joints.map((j, i) => [j.name, i]));
  const moving = (i) => { while (i >= 0 && (joints[i].constraint || {}).type === "fixed") i = parentOf(i, joints); return i; };
  const seen = new Set();
  return effectors.filter((e) => {
    const m = moving(index.get(e));
    if (m <= 0 || seen.has(m)) return false;
    seen.add(m);
    return true;
  });
}

/* Open a File/Blob or a URL (.glb, .gltf, .bvh, .urdf): imported by ikd, drawn, solved once.
 * Resolves with model() once drawn. */
async function open(src) {
  let data = src, name = src && src.name ? src.name : "";
  if (typeof src === "string") {
    const res = await fetch(src);
    if (!res.ok) throw new Error(`${src}: ${res.status}`);
    data = new Uint8Array(await res.arrayBuffer());
    name = src.split("/").pop();
  }
  const ext = name.toLowerCase().split(".").pop();
  const options = ["bvh", "glb", "gltf", "urdf"].includes(ext) ? { format: ext } : {};
  const reply = await client.importFile(data, options); // a GLB goes without what ikd does not read (slimGlb)
  state.model = imported(reply, name);
  state.opened = src; // Reset opens it again
  fileOption(`${name} (${reply.skeleton.joints.length} joints)`);
  $("root").value = reply.humanoid && reply.humanoid.hips ? "free" : "fixed"; // a character moves its hips
  clearMesh();
  let meshError = null; // a mesh three.js r111 cannot draw (Draco or meshopt compressed): the bones still are
  if (reply.format === "glb" || reply.format === "gltf") await loadMesh(data).catch((e) => { meshError = e; });
  resetView();
  // start from the first animation frame (else a relaxed stance for a T-posed humanoid), the handles
  // where it puts its joints; it is also the preferred pose (optionsDoc)
  state.model.stance = state.model.clips.length ? null : relaxedStance(reply.humanoid || {});
  const first = (state.model.clips[0] && state.model.clips[0].poses[0]) || state.model.stance;
  if (first) startFrom(first);
  const drawn = new Promise((resolve) => state.waiters.push({ need: state.started + 1, resolve }));
  solve();
  await drawn;
  if (meshError) {
    state.model.meshError = String(meshError && meshError.message || meshError);
    $("message").textContent = `${name}: its mesh could not be drawn (${state.model.meshError}); the bones are`;
  }
  return model();
}

// ---- a glTF file's meshes, skinned by the solved pose ---------------------------------------

const meshGroup = new THREE.Group();
scene.add(meshGroup);
let meshBones = []; // per joint of state.model: the glTF bone of the same name, or null

function clearMesh() {
  meshGroup.children.slice().forEach((c) => meshGroup.remove(c));
  meshBones = [];
  state.clipFrames = null; // the last played clip was another model's
}

/* The file's scene through three.js's GLTFLoader (loaded on first use), its skinned meshes'
 * bones matched to the imported joints by name (ikd's importer keeps the node names). */
async function loadMesh(data) {
  const { GLTFLoader } = await import("/ui/three/examples/jsm/loaders/GLTFLoader.js");
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(await data.arrayBuffer());
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const gltf = await new Promise((resolve, reject) => new GLTFLoader().parse(buf, "", resolve, reject));
  meshGroup.add(gltf.scene);
  gltf.scene.updateMatrixWorld(true);
  const bones = new Map();
  let skinned = 0;
  gltf.scene.traverse((o) => {
    if (o.isSkinnedMesh) {
      skinned++;
      o.frustumCulled = false; // its bounds are the bind pose's
      o.skeleton.bones.forEach((b) => bones.set(b.name, b));
    }
  });
  state.model.skinnedMeshes = skinned;
  meshBones = state.model.joints.map((j) => bones.get(j.name) || bones.get(j.name.replace(/[^\w.-]/g, "_")) || null);
}

/* Each matched bone placed where the pose puts its joint (world position and rotation), its
 * parents first: local = the parent's world transform undone. */
function poseMesh(w, bones = meshBones) {
  if (!bones.length) return;
  const q = new THREE.Quaternion(), pq = new THREE.Quaternion(), inv = new THREE.Matrix4();
  bones.forEach((b, i) => {
    if (!b) return;
    b.parent.updateMatrixWorld(true);
    b.parent.getWorldQuaternion(pq);
    q.set(...w[i].q);
    b.quaternion.copy(pq.inverse().multiply(q));
    inv.getInverse(b.parent.matrixWorld);
    b.position.set(...w[i].p).applyMatrix4(inv);
    b.updateMatrixWorld(true);
  });
}

// ---- export: the character and its clip as GLB (three.js's GLTFExporter) ---------------------

/* A bone per joint (its name, its parent's child) under a group, bound to a one-triangle
 * skinned mesh: what a model without a glTF scene exports as (a glTF skin needs a mesh). */
function boneRig() {
  const group = new THREE.Group();
  group.name = state.model.name || "ikd";
  const bones = state.model.joints.map((j) => { const b = new THREE.Bone(); b.name = j.name; return b; });
  bones.forEach((b, i) => (parentOf(i) >= 0 ? bones[parentOf(i)] : group).add(b));
  const geo = new THREE.BufferGeometry();
  geo.setAttribute("position", new THREE.BufferAttribute(new Float32Array([0, 0, 0, 0.01, 0, 0, 0, 0.01, 0]), 3));
  geo.setAttribute("skinIndex", new THREE.BufferAttribute(new Uint16Array(12), 4));
  geo.setAttribute("skinWeight", new THREE.BufferAttribute(new Float32Array([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]), 4));
  const mesh = new THREE.SkinnedMesh(geo, new THREE.MeshBasicMaterial());
  mesh.name = "bones";
  group.add(mesh);
  group.updateMatrixWorld(true);
  poseMesh(worldPose(), bones);
  mesh.bind(new THREE.Skeleton(bones));
  return { root: group, bones };
}

/* The character as GLB (an ArrayBuffer): its current pose as the nodes' transforms, and the
 * last played clip (a recording played back, or an imported clip) as an animation. */
async function exportGlb() {
  const { GLTFExporter } = await import("/ui/three/examples/jsm/exporters/GLTFExporter.js");
  const mesh = meshBones.some((b) => b);
  const { root, bones } = mesh ? { root: meshGroup.children[0], bones: meshBones } : boneRig();
  const animations = [], frames = state.clipFrames || [];
  if (frames.length > 1) {
    const fps = state.clipFps || 30, times = frames.map((_, k) => k / fps), q = {}, p = {};
    frames.forEach((w) => {
      poseMesh(w, bones);
      bones.forEach((b) => {
        if (!b) return;
        (q[b.name] = q[b.name] || []).push(...b.quaternion.toArray());
        (p[b.name] = p[b.name] || []).push(...b.position.toArray());
      });
    });
    const tracks = [];
    bones.forEach((b) => {
      if (!b) return;
      tracks.push(new THREE.QuaternionKeyframeTrack(`${b.name}.quaternion`, times, q[b.name]));
      tracks.push(new THREE.VectorKeyframeTrack(`${b.name}.position`, times, p[b.name]));
    });
    animations.push(new THREE.AnimationClip(state.clipName || "ikd", -1, tracks));
  }
  poseMesh(worldPose(), bones);
  return new Promise((resolve) => new GLTFExporter().parse(root, resolve, { binary: true, animations }));
}

/* The browser's download of `data` (an ArrayBuffer or text) as the model's name + `suffix`. */
function download(data, type, suffix) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([data], { type }));
  a.download = (state.model.name || "ikd").replace(/\.[^.]*$/, "") + suffix;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
$("export").addEventListener("click", () => exportGlb().then((buf) => download(buf, "model/gltf-binary", "-posed.glb")).catch(failed));

/* What is shown: format (built-in models: "builtin"), name, joints, skinnedMeshes, links (a
 * robot's links drawn as cylinders). */
function model() {
  return { format: state.model.format || "builtin", name: state.model.name || $("model").value,
    joints: state.model.joints.length, skinnedMeshes: state.model.skinnedMeshes || 0, links: linkMeshes.filter(Boolean).length,
    relaxed: !!state.model.stance, meshError: state.model.meshError || null, humanoid: state.model.humanoid || null,
    clips: (state.model.clips || []).map((c) => ({ name: c.name, frames: c.poses.length, fps: c.fps })) };
}

/* Play an imported clip's poses on the bones (at its fps); resolves when it has played. */
function playImported(index = 0) {
  const clip = (state.model.clips || [])[index];
  if (!clip || !clip.poses.length) return Promise.resolve(null);
  return new Promise((resolve) => {
    const t0 = performance.now();
    let shown = 0;
    state.clipFrames = clip.poses.map((p) => fk(p).map((j) => ({ p: j.position, q: j.rotation })));
    state.clipFps = clip.fps, state.clipName = clip.name;
    const step = () => {
      const k = Math.min(clip.poses.length - 1, Math.floor((performance.now() - t0) / 1000 * clip.fps));
      state.pose = { root: clip.poses[k].root, rotations: clip.poses[k].rotations };
      state.joints = fk(clip.poses[k]);
      drawPose();
      shown++;
      $("timing").textContent = `${clip.name}: frame ${k + 1} of ${clip.poses.length}`;
      if (k < clip.poses.length - 1) requestAnimationFrame(step);
      else resolve({ clip: clip.name, frames: clip.poses.length, shown });
    };
    requestAnimationFrame(step);
  });
}

/* "IK on the clip": the imported clip solved again through /v1/solve/clip, layered on it
 * (frames[k].preferred = its pose): a handle moved since the file opened holds its goal at
 * the handle, the others follow the animation's own joints; streamed, drawn as it arrives.
 * Resolves with {frames, reached}. */
async function ikOnClip(index = 0) {
  const clip = (state.model.clips || [])[index];
  if (!clip) return null;
  const body = layeredBody(clip);
  clipSolved(body);
  state.clipFrames = [], state.clipFps = clip.fps, state.clipName = clip.name + " (ik)";
  let reached = 0;
  const res = await client.clip(body, { onFrame: (f) => {
    state.pose = f.pose;
    state.joints = fk(f.pose);
    state.clipFrames.push(state.joints.map((j) => ({ p: j.position, q: j.rotation })));
    reached += f.status === "reached";
    drawPose();
    $("timing").textContent = `IK on ${clip.name}: frame ${f.frame + 1} of ${body.frames.length}, ${f.status}`;
  } });
  return { frames: res.frames.length, reached };
}

/* The /v1/solve/clip body of an imported clip layered on itself: per frame, the moved handles'
 * goals at the handles (priority 0), the others at the animation's own joints, its pose preferred. */
function layeredBody(clip) {
  const frames = clip.poses.map((pose) => {
    const at = fk(pose);
    const goals = state.model.goals.map((g, k) => {
      const i = jointIndex(g.joint), h = handles[k].position;
      const position = state.touched.has(k) ? [h.x, h.y, h.z] : at[i].position;
      return { joint: g.joint, position, priority: state.touched.has(k) ? 0 : 1 };
    });
    const preferred = { root: pose.root, rotations: pose.rotations };
    if (pose.translations) preferred.translations = pose.translations;
    return { goals, preferred };
  });
  const first = clip.poses[0];
  const body = { skeleton: skeletonDoc(), root: "fixed", options: optionsDoc(), frames,
    pose: { root: first.root, rotations: first.rotations } };
  delete body.options.preferred; // each frame brings its own
  return body;
}

/* The last clip solved (a recording played back, IK on a clip): what Export BVH sends again. */
function clipSolved(body) {
  state.lastClipBody = body;
  $("export_bvh").disabled = false;
}

/* The last solved clip as BVH (the text), solved again by /v1/solve/clip with Accept:
 * application/x-bvh; with none solved yet, an imported clip layered on itself. */
async function exportBvh() {
  const clips = state.model.clips || [];
  const body = state.lastClipBody || (clips.length ? layeredBody(clips[0]) : null);
  if (!body) throw new Error("no clip to export: record one and play it, or open a file with an animation");
  return client.clipBvh(body);
}

$("export_bvh").addEventListener("click", () => exportBvh().then((text) => download(text, "application/x-bvh", "-clip.bvh")).catch(failed));
$("ik_clip").addEventListener("click", () => ikOnClip(0).catch(failed));

$("open").addEventListener("change", (e) => { if (e.target.files[0]) open(e.target.files[0]).catch(failed); });
view.addEventListener("dragover", (e) => e.preventDefault());
view.addEventListener("drop", (e) => {
  e.preventDefault();
  const f = e.dataTransfer && e.dataTransfer.files[0];
  if (f) open(f).catch(failed);
});
$("play_clip").addEventListener("click", () => playImported(0));

// ---- controls -------------------------------------------------------------------------

/* state.model drawn at rest: its skeleton and handles, nothing moved or solved yet. */
function drawModel() {
  state.firstOfModel = state.started + 1; // replies to earlier requests are another model's
  state.lastClipBody = null;
  state.moved = null;
  state.touched = new Set();
  state.rest = state.model.joints.map((j) => j.position);
  state.pose = null;
  state.joints = null;
  state.reply = null;
  buildSkeleton();
  buildHandles();
  buildLimits();
  drawPose();
}

/* An opened file's view: drawModel, the camera framing it, handles and joints sized to it. */
function resetView() {
  drawModel();
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  state.rest.forEach((p) => p.forEach((v, a) => { lo[a] = Math.min(lo[a], v); hi[a] = Math.max(hi[a], v); }));
  const size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
  state.model.size = size;
  modelFrame.rotation.x = state.model.format === "urdf" ? -Math.PI / 2 : 0;
  modelFrame.updateMatrixWorld(true);
  orbit.target.set((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2).applyMatrix4(modelFrame.matrixWorld);
  camera.position.set(orbit.target.x + size * 0.9, orbit.target.y + size * 0.5, orbit.target.z + size * 1.8);
  camera.near = size / 1000, camera.far = size * 100;
  camera.updateProjectionMatrix();
  orbit.update();
  const handleSize = size * 0.04;
  handles.forEach((h) => h.scale.setScalar(handleSize / 0.07));
  jointMeshes.forEach((m) => m.scale.setScalar(size / 1.8));
  limitLines.forEach(([, line]) => line.scale.setScalar(size / 1.8));
  drawPose();
  $("play_clip").disabled = $("ik_clip").disabled = $("export_bvh").disabled = !(state.model.clips && state.model.clips.length);
}

// the built-in humanoid's roles (as /v1/import names them): its relaxed stance
const BUILTIN_ROLES = { upper_arm_l: "upperarm_l", lower_arm_l: "lowerarm_l", hand_l: "hand_l", upper_arm_r: "upperarm_r",
  lower_arm_r: "lowerarm_r", hand_r: "hand_r", foot_l: "foot_l", toes_l: "toe_l" };

function load(kind) {
  fileOption(null);
  state.model = kind === "chain" ? chain() : humanoid();
  modelFrame.rotation.x = 0;
  clearMesh();
  drawModel();
  // the humanoid rests in a T-pose with its hands at full reach: it starts relaxed, goals inside reach
  state.model.stance = kind === "chain" ? null : relaxedStance(BUILTIN_ROLES);
  if (state.model.stance) startFrom(state.model.stance);
  camera.position.set(1.6, 1.6, 3.2);
  camera.near = 0.01, camera.far = 100;
  camera.updateProjectionMatrix();
  orbit.target.set(0, kind === "chain" ? 0.9 : 1, 0);
  orbit.update();
  invalidate();
  $("play_clip").disabled = $("ik_clip").disabled = $("export_bvh").disabled = true;
}

function pick(ev) {
  if (gizmo.dragging) return;
  const r = renderer.domElement.getBoundingClientRect();
  const m = new THREE.Vector2(((ev.clientX - r.left) / r.width) * 2 - 1, -((ev.clientY - r.top) / r.height) * 2 + 1);
  const ray = new THREE.Raycaster();
  ray.setFromCamera(m, camera);
  const hit = ray.intersectObjects(handles)[0];
  if (hit) gizmo.attach(hit.object), state.moved = handles.indexOf(hit.object), state.touched.add(state.moved);
}
renderer.domElement.addEventListener("pointerdown", pick);

$("model").addEventListener("change", (e) => { load(e.target.value); solve(); });
$("encoding").addEventListener("change", (e) => { client = new IkdClient("", { encoding: e.target.value, token: state.token }); solve(); });
for (const id of ["solver", "root", "limits"]) $(id).addEventListener("change", () => requestSolve());
$("draw_limits").addEventListener("change", () => drawPose());
for (const id of ["rest_pull", "soften", "stretch"])
  $(id).addEventListener("input", (e) => { $(id + "_value").textContent = e.target.value; requestSolve(); });
$("reset").addEventListener("click", () => {
  if ($("model").value === "file" && state.opened) open(state.opened).catch(failed);
  else load($("model").value), solve();
});
$("record").addEventListener("click", () => {
  if (state.recording) {
    state.lastRecording = state.recording;
    state.recording = null;
    $("record").classList.remove("on");
    $("record").textContent = "Record";
    $("play").disabled = !state.lastRecording.length;
  } else {
    state.recording = [];
    $("record").classList.add("on");
    $("record").textContent = "Stop";
  }
});
$("play").addEventListener("click", () => play());
$("token_form").addEventListener("submit", (e) => {
  e.preventDefault();
  state.token = $("token").value;
  sessionStorage.setItem("ikd-token", state.token);
  client = new IkdClient("", { encoding: $("encoding").value, token: state.token });
  $("token_form").hidden = true;
  solve();
});

// ---- window.ikdEditor: scripting and tests ------------------------------------------------

let readyResolve;
const ready = new Promise((r) => { readyResolve = r; });
window.ikdEditor = {
  ready,
  /* The skeleton being edited: {joints} as sent to ikd. */
  skeleton: () => JSON.parse(JSON.stringify(state.model.id ? { joints: state.model.joints } : skeletonDoc())),
  /* The goals now, as sent to ikd. */
  goals: () => goalsDoc(),
  /* Move a goal's handle (joint name or index; position [x,y,z], rotation [x,y,z,w]) and
   * solve; resolves with the reply once its pose is drawn (null on an error). */
  setGoal(joint, { position, rotation } = {}) {
    const name = typeof joint === "number" ? state.model.joints[joint].name : joint;
    const k = state.model.goals.findIndex((g) => g.joint === name);
    if (k < 0) return Promise.reject(new Error(`no goal on ${joint}`));
    if (position) handles[k].position.set(position[0], position[1], position[2]);
    if (rotation) state.model.goals[k].rotation = rotation;
    state.moved = k;
    state.touched.add(k);
    const p = new Promise((resolve) => state.waiters.push({ need: state.started + 1, resolve }));
    requestSolve();
    return p;
  },
  lastReply: () => state.reply,
  /* Solves drawn in the last second and the last round trip (ms), as the timing line shows them. */
  rate: () => ({ solvesPerSecond: (state.solvedAt || []).filter((t) => performance.now() - t < 1000).length,
    roundTripMs: state.rtt || 0 }),
  /* Where a goal's handle is on the screen (page coordinates): for pointer-driven tests. */
  handleScreen(joint) {
    const k = state.model.goals.findIndex((g) => g.joint === joint);
    const v = handles[k].getWorldPosition(new THREE.Vector3()).project(camera), r = renderer.domElement.getBoundingClientRect();
    return { x: r.left + (v.x + 1) / 2 * r.width, y: r.top + (1 - v.y) / 2 * r.height };
  },
  /* The world position of a joint as drawn. */
  jointPosition: (joint) => worldPose()[jointIndex(joint)].p.slice(),
  /* Open a .glb, .gltf, .bvh or .urdf (a File/Blob or a URL) through POST /v1/import;
   * resolves with model() once drawn. */
  open: (src) => open(src),
  /* What is shown: {format, name, joints, skinnedMeshes, humanoid, clips}. */
  model: () => model(),
  /* Play an imported clip (index into model().clips) on the bones. */
  playClip: (index) => playImported(index),
  /* The imported clip solved again, layered on it, with the moved handles as goals (streamed). */
  ikOnClip: (index) => ikOnClip(index),
  /* The character with its pose, and the last played clip as an animation, as GLB (an ArrayBuffer). */
  exportGlb: () => exportGlb(),
  /* The last solved clip (else the imported one, layered on itself) as BVH text, from /v1/solve/clip. */
  exportBvh: () => exportBvh(),
  /* Recording and playback, as the buttons do. */
  record: () => $("record").click(),
  play: () => play().then(() => state.lastPlayback),
  client: () => client,
};

resize();
load("humanoid");
invalidate();
solve();
(async () => {
  while (!state.reply && !$("message").textContent && $("token_form").hidden) await new Promise((r) => setTimeout(r, 20));
  readyResolve(window.ikdEditor);
})();
