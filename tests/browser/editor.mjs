// editor.mjs - the browser test (make test): Debian's chromium, driven by playwright-core, against the editor and the client module.
// Usage: node tests/browser/editor.mjs build/ikd [screenshot.png] [build/bench]
import { execFileSync, spawn } from "node:child_process";
import http from "node:http";
import { chromium } from "playwright-core";

const ikdBin = process.argv[2] || "build/ikd";
const shot = process.argv[3] || "build/editor.png";
const benchBin = process.argv[4] || "build/bench";
let passed = 0, failed = 0;
const check = (ok, what, detail = "") => {
  if (ok) passed++; else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${!ok && detail ? `: ${detail}` : ""}`);
};

/* ikd on a free loopback port; resolves with {proc, origin}. */
function startIkd(env = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(ikdBin, ["--listen", "127.0.0.1:0"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    proc.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m) resolve({ proc, origin: m[1] });
    });
    proc.on("exit", (code) => reject(new Error(`ikd exited (${code}) before listening`)));
  });
}

const browser = await chromium.launch({
  executablePath: process.env.IKD_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--enable-unsafe-swiftshader", "--use-angle=swiftshader"],
});

/* A page on `origin` that records console errors and every request that leaves the origin. */
async function openPage(origin) {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  const errors = [], offHost = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("request", (r) => { if (!r.url().startsWith(origin + "/") && !r.url().startsWith("data:")) offHost.push(r.url()); });
  await page.goto(origin + "/");
  return { page, errors, offHost };
}

const { proc, origin } = await startIkd({ IKD_SKELETON_CACHE: "40000" }); /* small: the 409 resend test evicts */
try {
  const { page, errors, offHost } = await openPage(origin);
  const first = await page.evaluate(async () => {
    await window.ikdEditor.ready;
    const ed = window.ikdEditor, r = ed.lastReply(), s = ed.jointPosition("upperarm_l"), h = ed.jointPosition("hand_l");
    return { joints: ed.skeleton().joints.length, goals: ed.goals().length, status: r && r.status, relaxed: ed.model().relaxed,
      reach: Math.hypot(h[0] - s[0], h[1] - s[1], h[2] - s[2]) / 0.52, below: s[1] - h[1] };
  });
  // it starts relaxed: the hands below the shoulders and inside the arms' reach (0.52), every goal met
  check(first.joints === 25 && first.goals === 5 && first.status === "reached" && first.relaxed && first.reach < 0.995 &&
    first.below > 0.3, "the page loads the humanoid relaxed, its goals inside reach, and solves", JSON.stringify(first));

  // the editor's humanoid (a JavaScript copy) is make bench's (tests/unit/humanoid.c), as `bench 1 clip-json` sends it:
  // names, parents, rest positions and rotations, every constraint field
  const cJoints = JSON.parse(execFileSync(benchBin, ["1", "clip-json"], { maxBuffer: 64 << 20 })).skeleton.joints;
  const jsJoints = await page.evaluate(() => window.ikdEditor.skeleton().joints);
  const canon = (joints, j, i) => {
    const parent = i === 0 ? null : typeof j.parent === "number" ? joints[j.parent].name : j.parent ?? joints[i - 1].name;
    return { name: j.name, parent, position: j.position, rotation: j.rotation || [0, 0, 0, 1], constraint: j.constraint || { type: "none" } };
  };
  const same = (a, b) => typeof a === "number" && typeof b === "number" ? Math.abs(a - b) <= 1e-12 :
    Array.isArray(a) && Array.isArray(b) ? a.length === b.length && a.every((x, i) => same(x, b[i])) :
    a && b && typeof a === "object" && typeof b === "object" ?
      Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => same(a[k], b[k])) : a === b;
  const differs = cJoints.length !== jsJoints.length ? `${jsJoints.length} joints, C has ${cJoints.length}` :
    cJoints.map((j, i) => [canon(cJoints, j, i), canon(jsJoints, jsJoints[i], i)])
      .filter(([c, js]) => !same(c, js)).map(([c, js]) => `${JSON.stringify(js)} != ${JSON.stringify(c)}`).join("; ");
  check(!differs, "the editor's humanoid is make bench's (tests/unit/humanoid.c)", differs);

  // setGoal moves the left hand onto its goal and the drawn pose changes
  const moved = await page.evaluate(async () => {
    const ed = window.ikdEditor, before = ed.jointPosition("hand_l");
    const goal = [before[0] - 0.1, before[1] + 0.1, before[2] + 0.15];
    const reply = await ed.setGoal("hand_l", { position: goal });
    const after = ed.jointPosition("hand_l");
    const g = reply.goals.find((x) => x.joint === "hand_l");
    return { status: g.status, dist: Math.hypot(after[0] - goal[0], after[1] - goal[1], after[2] - goal[2]),
      moved: Math.hypot(after[0] - before[0], after[1] - before[1], after[2] - before[2]) };
  });
  check(moved.status === "reached" && moved.dist < 1e-3 && moved.moved > 0.1, "setGoal moves the hand onto its goal, drawn",
    JSON.stringify(moved));

  // the Stretch slider: a hand goal beyond the arm's reach is met by lengthening the arm
  const stretched = await page.evaluate(async () => {
    const ed = window.ikdEditor, slider = document.getElementById("stretch");
    const set = (v) => { slider.value = String(v); slider.dispatchEvent(new Event("input")); };
    await ed.setGoal("hand_l", { position: [0.7, 1.5, 0] }); // the arm level and straight (it starts relaxed)
    const s = ed.jointPosition("upperarm_l"), h = ed.jointPosition("hand_l");
    const dir = [h[0] - s[0], h[1] - s[1], h[2] - s[2]], len = Math.hypot(...dir);
    const goal = dir.map((d, i) => s[i] + d / len * 0.52 * 1.35);
    const out = {};
    for (const v of [1, 1.5]) {
      set(v);
      const reply = await ed.setGoal("hand_l", { position: goal });
      const g = reply.goals.find((x) => x.joint === "hand_l"), at = ed.jointPosition("hand_l");
      out[v] = { status: g.status, stretch: g.stretch, dist: Math.hypot(at[0] - goal[0], at[1] - goal[1], at[2] - goal[2]) };
    }
    // played back through /v1/solve/clip, the stretched arm is drawn stretched too
    ed.record();
    await ed.setGoal("hand_l", { position: goal });
    ed.record();
    await ed.play();
    await new Promise((r) => setTimeout(r, 500));
    const at = ed.jointPosition("hand_l");
    out.played = Math.hypot(at[0] - goal[0], at[1] - goal[1], at[2] - goal[2]);
    set(1);
    await ed.setGoal("hand_l", { position: h });
    return out;
  });
  check(stretched["1.5"].status === "reached" && stretched["1.5"].stretch > 1 && stretched["1.5"].dist < 1e-3 &&
    stretched["1"].status !== "reached" && stretched["1"].stretch === undefined && stretched.played < 1e-3,
  "the Stretch slider lengthens an arm to a goal beyond its reach, played back too", JSON.stringify(stretched));
  console.log(`     stretch: ${JSON.stringify(stretched)}`);

  // a hand dragged out of reach with the root free: the goal moved last is below the others in
  // priority, so the feet, the other hand and the head stay met and the hand gets as near as it can
  const outward = await page.evaluate(async () => {
    const ed = window.ikdEditor, root = document.getElementById("root");
    root.value = "free";
    root.dispatchEvent(new Event("change"));
    await ed.setGoal("hand_l", { position: [0.7, 1.5, 0] }); // the arm level and straight (it starts relaxed)
    const s = ed.jointPosition("upperarm_l"), h = ed.jointPosition("hand_l");
    const dir = [h[0] - s[0], h[1] - s[1], h[2] - s[2]], len = Math.hypot(...dir);
    const goal = h.map((v, i) => v + dir[i] / len * 0.3);
    const reply = await ed.setGoal("hand_l", { position: goal });
    const others = reply.goals.filter((g) => g.joint !== "hand_l").map((g) => g.status);
    const hand = reply.goals.find((g) => g.joint === "hand_l");
    const prio = ed.goals().map((g) => `${g.joint}:${g.priority}`).join(" ");
    root.value = "fixed";
    root.dispatchEvent(new Event("change"));
    await ed.setGoal("hand_l", { position: h });
    return { others, hand: hand.status, error: hand.error, prio };
  });
  check(outward.others.every((st) => st === "reached") && outward.hand !== "reached" && outward.error < 0.3 &&
    outward.prio.includes("hand_l:0") && outward.prio.includes("foot_l:1"),
  "a hand dragged out of reach: the other goals stay met (the dragged goal below them in priority)", JSON.stringify(outward));

  // a real mouse drag of the right foot's handle: select it, then drag the gizmo's centre;
  // the skeleton requests' options.pull_max_deg are recorded (6 while dragging, none after)
  const bounds = [];
  const onRequest = (r) => {
    if (!r.url().endsWith("/v1/solve/skeleton")) return;
    try { bounds.push(JSON.parse(r.postData()).options.pull_max_deg ?? 0); } catch { bounds.push("?"); }
  };
  page.on("request", onRequest);
  const foot0 = await page.evaluate(() => window.ikdEditor.jointPosition("foot_r"));
  const at = await page.evaluate(() => window.ikdEditor.handleScreen("foot_r"));
  await page.mouse.move(at.x, at.y);
  await page.mouse.down();
  await page.mouse.up();
  await page.mouse.move(at.x + 3, at.y + 3);
  await page.mouse.move(at.x, at.y);
  await page.mouse.down();
  for (let k = 1; k <= 10; k++) await page.mouse.move(at.x + 4 * k, at.y - 3 * k);
  await page.mouse.up();
  await page.waitForTimeout(500);
  const released = bounds.slice(); // the requests of the drag and its release, before setGoal's
  const foot1 = await page.evaluate(async () => { await window.ikdEditor.setGoal("foot_r", {}); return window.ikdEditor.jointPosition("foot_r"); });
  const dragged = Math.hypot(foot1[0] - foot0[0], foot1[1] - foot0[1], foot1[2] - foot0[2]);
  check(dragged > 0.02, "a mouse drag of a handle changes the pose", `foot moved ${dragged}`);
  page.off("request", onRequest);
  check(released.includes(6) && released[released.length - 1] === 0 && released.every((b) => b === 0 || b === 6),
    "solves while dragging bound the rest pull (pull_max_deg 6); the solve on release does not", JSON.stringify(released));

  check(errors.length === 0, "no console errors while loading, solving and dragging", errors.join(" | "));
  const expected = errors.length;

  // the client module: both encodings, a streamed clip, IkdError with the field
  const client = await page.evaluate(async () => {
    const { IkdClient, IkdError } = await import("/client/ikd.js");
    const body = { skeleton: { joints: [[0, 0, 0], [0, 1, 0], [0, 2, 0]] }, goals: [{ joint: 2, position: [1, 1, 0] }] };
    const out = {};
    for (const encoding of ["json", "msgpack"]) {
      const c = new IkdClient("", { encoding });
      const r = await c.skeleton(body);
      out[encoding] = r.status;
      const s = await c.solve({ chain: { joints: [[0, 0, 0], [0, 1, 0], [0, 2, 0]] }, target: [1, 1, 0] });
      out[encoding + "_solve"] = s.status;
      const frames = [];
      const clip = await c.clip({ skeleton: body.skeleton,
        frames: [0, 1, 2, 3, 4, 5].map((k) => ({ goals: [{ joint: 2, position: [1, 1 + 0.02 * k, 0] }] })) },
      { onFrame: (f) => frames.push(f.frame) });
      out[encoding + "_clip"] = { onFrame: frames, frames: clip.frames.length, summary: clip.summary && clip.summary.frames };
      try {
        await c.skeleton({ skeleton: body.skeleton, goals: [{ joint: "nobody", position: [1, 0, 0] }] });
        out[encoding + "_error"] = "no error";
      } catch (e) {
        out[encoding + "_error"] = e instanceof IkdError ? `${e.status} ${e.code} ${e.field}` : String(e);
      }
    }
    return out;
  });
  // importFile, register, and the resend of a skeleton the server does not hold (409)
  const files = await page.evaluate(async () => {
    const { IkdClient, IkdError } = await import("/client/ikd.js");
    const bvh = "HIERARCHY\nROOT Hips\n{\n OFFSET 0 90 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n" +
      " JOINT Leg\n {\n  OFFSET 10 -5 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 -80 0\n  }\n }\n}\n" +
      "MOTION\nFrames: 2\nFrame Time: 0.04\n0 90 0 0 0 0 0 10 0\n1 90 0 0 0 0 0 20 0\n";
    const out = {};
    for (const encoding of ["json", "msgpack"]) {
      const c = new IkdClient("", { encoding });
      const take = await c.importFile(new File([bvh], "walk.bvh"), { scale: 0.01 });
      out[encoding + "_import"] = `${take.format} ${take.skeleton.joints.length} ${take.clips[0].poses.length} ${take.clips[0].fps} ${/^sk_[0-9a-f]{32}$/.test(take.id)}`;
      const legs = { joints: [{ name: "hip", position: [0, 1, 0] }, { name: "knee", position: [0, 0.5, 0.03 + encoding.length * 1e-3] },
        { name: "ankle", position: [0, 0, 0] }] };
      const id = await c.register(legs);
      const first = await c.skeleton({ skeleton: id, goals: [{ joint: "ankle", position: [0.2, 0.1, 0.1] }] });
      // another client of the same server that never registered it gets the 409 ...
      let stranger = "no error";
      try {
        await new IkdClient("", { encoding }).skeleton({ skeleton: "sk_" + "0".repeat(32), goals: [{ joint: 2, position: [0, 0, 0] }] });
      } catch (e) { stranger = e instanceof IkdError ? `${e.status} ${e.code} ${e.field}` : String(e); }
      // ... and a client whose id the server forgot (evicted from the 40,000-byte
      // --skeleton-cache by 60 others) sends the skeleton again by itself
      const other = new IkdClient("", { encoding });
      for (let k = 0; k < 60; k++) await other.register({ joints: [[0, 0, 0], [0, 1 + k, 0], [0, 3 + k, 0]] });
      let forgotten = "held";
      try { await other.skeleton({ skeleton: id, goals: [{ joint: "ankle", position: [0.2, 0.1, 0.1] }] }); }
      catch (e) { forgotten = `${e.status}`; }
      const again = await c.skeleton({ skeleton: id, goals: [{ joint: "ankle", position: [0.2, 0.1, 0.1] }] })
        .then((r) => `${forgotten} ${r.status}`).catch((e) => `${e.status} ${e.code}`);
      out[encoding + "_refs"] = `${first.status} ${stranger} ${again}`;
    }
    return out;
  });
  for (const enc of ["json", "msgpack"]) {
    check(files[enc + "_import"] === "bvh 3 2 25 true", `client imports a BVH File in ${enc}`, JSON.stringify(files));
    check(files[enc + "_refs"] === "reached 409 unknown_skeleton skeleton 409 reached",
      `client registers, gets 409 for unknown ids, resends what it knows in ${enc}`, JSON.stringify(files));
  }
  for (const enc of ["json", "msgpack"]) {
    check(client[enc] === "reached" && client[enc + "_solve"] === "reached", `client solves in ${enc}`, JSON.stringify(client));
    const c = client[enc + "_clip"];
    check(c.onFrame.join() === "0,1,2,3,4,5" && c.frames === 6 && c.summary === 6, `client streams a clip in ${enc}`, JSON.stringify(c));
    check(client[enc + "_error"] === "400 invalid_request goals[0].joint", `client throws IkdError with the field in ${enc}`,
      client[enc + "_error"]);
  }

  // record a dragged path, play it back through /v1/solve/clip
  const played = await page.evaluate(async () => {
    const ed = window.ikdEditor, p = ed.jointPosition("hand_r");
    ed.record();
    for (let k = 1; k <= 8; k++) await ed.setGoal("hand_r", { position: [p[0], p[1] + 0.02 * k, p[2] + 0.02 * k] });
    ed.record();
    const res = await ed.play();
    return { frames: res.frames.length, summary: res.summary.frames, reached: res.summary.reached };
  });
  check(played.frames >= 8 && played.summary === played.frames && played.reached === played.frames,
    "record and play back a path", JSON.stringify(played));

  // the two deliberate bad requests, and per encoding three deliberate 409s (an unknown id,
  // an evicted one asked by a client that never registered it, then by one that did, before it resends)
  const later = errors.slice(expected).filter((e) => !/status of 40[09]/.test(e));
  const c400 = errors.slice(expected).filter((e) => /status of 400/.test(e)).length;
  const c409 = errors.slice(expected).filter((e) => /status of 409/.test(e)).length;
  check(later.length === 0 && c400 === 2 && c409 === 6, "no console errors but the two deliberate 400s and six 409s",
    errors.join(" | "));
  check(offHost.length === 0, "no request leaves ikd's origin", offHost.join(" "));
  await page.waitForTimeout(1500); // the playback's last frames drawn
  await page.screenshot({ path: shot });
  console.log(`screenshot: ${shot}`);
  await page.close();
} catch (e) {
  check(false, "browser test", String(e && e.stack || e));
} finally {
  proc.kill("SIGTERM");
}

// real files through the editor (issue 43): a humanoid BVH and a URDF arm that this test writes,
// opened with ikdEditor.open() and by a real drop event on the view
const files = await startIkd();
try {
  const { page, errors, offHost } = await openPage(files.origin);
  await page.evaluate(() => window.ikdEditor.ready);
  const res = await page.evaluate(async () => {
    const ed = window.ikdEditor;
    // a Mixamo-named humanoid, centimetres, a 3-frame clip that bends the left elbow
    const J = [["Hips", null, [0, 100, 0]], ["Spine", "Hips", [0, 10, 0]], ["Spine1", "Spine", [0, 15, 0]],
      ["Spine2", "Spine1", [0, 15, 0]], ["Neck", "Spine2", [0, 15, 0]], ["Head", "Neck", [0, 10, 0]]];
    for (const [s, x] of [["Left", 1], ["Right", -1]]) {
      J.push([s + "Shoulder", "Spine2", [x * 5, 10, 0]], [s + "Arm", s + "Shoulder", [x * 12, 0, 0]],
        [s + "ForeArm", s + "Arm", [x * 27, 0, 0]], [s + "Hand", s + "ForeArm", [x * 25, 0, 0]],
        [s + "UpLeg", "Hips", [x * 10, -5, 0]], [s + "Leg", s + "UpLeg", [0, -43, 1]], [s + "Foot", s + "Leg", [0, -43, -1]],
        [s + "ToeBase", s + "Foot", [0, -7, 12]]);
    }
    const kids = (n) => J.filter((j) => j[1] === n);
    const out = ["HIERARCHY"];
    const block = (j, d) => {
      const pad = "  ".repeat(d);
      out.push(`${pad}${d ? "JOINT" : "ROOT"} ${j[0]}`, `${pad}{`, `${pad}  OFFSET ${j[2].join(" ")}`,
        `${pad}  CHANNELS ${d ? "3 Zrotation Xrotation Yrotation" : "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"}`);
      kids(j[0]).forEach((k) => block(k, d + 1));
      if (!kids(j[0]).length) out.push(`${pad}  End Site`, `${pad}  {`, `${pad}    OFFSET 0 5 0`, `${pad}  }`);
      out.push(`${pad}}`);
    };
    block(J[0], 0);
    const order = [];
    const walk = (j) => { order.push(j[0]); kids(j[0]).forEach(walk); };
    walk(J[0]);
    out.push("MOTION", "Frames: 3", "Frame Time: 0.0333333");
    for (let f = 0; f < 3; f++)
      out.push(["0 100 0", ...order.map((n) => (n === "LeftForeArm" ? `0 0 ${-30 * f}` : "0 0 0"))].join(" "));
    const bvh = new File([out.join("\n") + "\n"], "mixamo_walk.bvh");
    const m = await ed.open(bvh);
    const goals = ed.goals().map((g) => g.joint).join(" ");
    const feet = ed.jointPosition("LeftFoot");
    const hand = ed.jointPosition("LeftHand");
    const to = [hand[0] - 15, hand[1] + 5, hand[2] + 20]; // in reach: the elbow bends
    const reply = await ed.setGoal("LeftHand", { position: to });
    const st = Object.fromEntries(reply.goals.map((g) => [g.joint, g.status]));
    const at = ed.jointPosition("LeftHand"), feetAfter = ed.jointPosition("LeftFoot");
    // the hips dragged 10 cm down (the root is free for a humanoid file), the hands' and head's handles
    // moved down with them first (every handle holds its goal): the body crouches, the feet stay
    const hips = ed.jointPosition("Hips"), feet0 = ed.jointPosition("LeftFoot");
    const hands = ["LeftHand", "RightHand", "Head"].map((n) => [n, ed.jointPosition(n)]);
    for (const [n, p] of hands) await ed.setGoal(n, { position: [p[0], p[1] - 10, p[2]] });
    const hr = await ed.setGoal("Hips", { position: [hips[0], hips[1] - 10, hips[2]] });
    const hipsAt = ed.jointPosition("Hips"), feet1 = ed.jointPosition("LeftFoot");
    const crouch = { root: document.getElementById("root").value, status: hr && hr.status,
      hips: Math.hypot(hipsAt[0] - hips[0], hipsAt[1] - hips[1] + 10, hipsAt[2] - hips[2]),
      feet: Math.hypot(feet1[0] - feet0[0], feet1[1] - feet0[1], feet1[2] - feet0[2]) };
    await ed.setGoal("Hips", { position: hips });
    for (const [n, p] of hands) await ed.setGoal(n, { position: p });
    const played = await ed.playClip(0);
    const byRef = typeof ed.client().skeletons.keys().next().value === "string";
    // exported as GLB (bones bound to a one-triangle skin) and imported again: the same joints where
    // the pose draws them, and the played clip as an animation of its frames
    await ed.setGoal("LeftHand", { position: to });
    const glb = await ed.exportGlb();
    const again = await ed.client().importFile(new Uint8Array(glb), { format: "glb", fps: m.clips[0].fps });
    let exportErr = 0;
    for (const j of again.skeleton.joints) {
      const p = ed.jointPosition(j.name);
      exportErr = Math.max(exportErr, Math.hypot(p[0] - j.position[0], p[1] - j.position[1], p[2] - j.position[2]));
    }
    const exported = { joints: again.skeleton.joints.length, err: exportErr, clips: again.clips.map((c) => c.poses.length) };
    // IK on the clip: the moved hand held at its handle, the rest following the animation
    const ik = await ed.ikOnClip(0);
    const heldAt = ed.jointPosition("LeftHand");
    ik.held = Math.hypot(heldAt[0] - to[0], heldAt[1] - to[1], heldAt[2] - to[2]);
    // the re-solved clip as BVH (Accept: application/x-bvh), imported again: its frames, the held hand where it was
    const bvhText = await ed.exportBvh();
    const back = await ed.client().importFile(new TextEncoder().encode(bvhText), { format: "bvh" });
    ik.bvh = { head: bvhText.slice(0, 9), joints: back.skeleton.joints.length, frames: back.clips[0].poses.length };
    // the same humanoid with no motion (Frames: 0), resting in its T-pose: it starts from a relaxed stance
    // (upper arms turned down, elbows bent forward, where the toes point), which is also its preferred pose
    const tpose = await ed.open(new File([out.slice(0, out.indexOf("MOTION")).concat(["MOTION", "Frames: 0",
      "Frame Time: 0.0333333"]).join("\n") + "\n"], "tpose.bvh"));
    const sh = ed.jointPosition("LeftArm"), el = ed.jointPosition("LeftForeArm"), hd = ed.jointPosition("LeftHand");
    const relaxed = { relaxed: tpose.relaxed, clips: tpose.clips.length, drop: sh[1] - hd[1], forward: hd[2] - el[2],
      status: ed.lastReply() && ed.lastReply().status };
    // a URDF arm: two revolute joints and a fixed tool
    const urdf = `<robot name="arm"><link name="base"/><link name="l1"/><link name="l2"/><link name="tool"/>
      <joint name="shoulder" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
      <joint name="elbow" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.4"/><axis xyz="0 1 0"/><limit lower="-2.5" upper="2.5" effort="1" velocity="1"/></joint>
      <joint name="flange" type="fixed"><parent link="l2"/><child link="tool"/><origin xyz="0 0 0.3"/></joint>
      <link name="finger"/><joint name="finger_joint" type="prismatic"><parent link="l2"/><child link="finger"/>
      <origin xyz="0 0.02 0.3"/><axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="1" velocity="1"/></joint></robot>`;
    const arm = await ed.open(new File([urdf], "arm.urdf"));
    const tool = ed.jointPosition("flange");
    arm.label = document.getElementById("model").selectedOptions[0].textContent;
    arm.goals = ed.goals().map((g) => g.joint).join(" "); // the finger rides on the flange's link: no handle of its own
    const r2 = await ed.setGoal(ed.goals()[0].joint, { position: [0.3, 0, 0.5] });
    return { m, goals, st, dist: Math.hypot(at[0] - to[0], at[1] - to[1], at[2] - to[2]),
      feetMoved: Math.hypot(feet[0] - feetAfter[0], feet[1] - feetAfter[1], feet[2] - feetAfter[2]), played, byRef, exported, ik,
      arm, tool, armStatus: r2 && r2.status, crouch, relaxed };
  });
  check(res.m.format === "bvh" && res.m.joints === 27 && res.m.humanoid && res.m.humanoid.hand_l === "LeftHand" &&
    res.goals === "LeftHand RightHand LeftFoot RightFoot Head Hips",
  "open() imports a humanoid BVH: its roles, handles on the hands, feet, head and hips", JSON.stringify(res.m) + " " + res.goals);
  check(res.st.LeftHand === "reached" && res.dist < 1e-2 && res.st.LeftFoot === "reached" && res.feetMoved < 1e-3,
    "a hand of the imported humanoid reaches its goal while the pinned feet stay", JSON.stringify(res));
  check(res.relaxed.relaxed && res.relaxed.clips === 0 && res.relaxed.drop > 30 && res.relaxed.forward > 0 &&
    res.relaxed.status === "reached", "a T-posed humanoid with no motion starts from a relaxed stance, elbows forward",
  JSON.stringify(res.relaxed));
  check(res.crouch.root === "free" && res.crouch.hips < 5e-2 && res.crouch.feet < 1e-2, // centimetres: half a millimetre
    "the hips handle dragged down: the humanoid crouches with its feet pinned", JSON.stringify(res.crouch));
  check(res.played && res.played.frames === 3 && res.played.shown >= 1, "an imported clip plays on the bones", JSON.stringify(res.played));
  check(res.byRef, "the imported skeleton is solved by reference", "");
  check(res.ik && res.ik.frames === 3 && res.ik.reached === 3 && res.ik.held < 1e-2,
    "IK on the clip re-solves it layered on the animation, the moved hand held", JSON.stringify(res.ik));
  check(res.ik && res.ik.bvh.head === "HIERARCHY" && res.ik.bvh.joints === 27 && res.ik.bvh.frames === 3,
    "exportBvh() writes the re-solved clip as BVH, which imports again with its frames", JSON.stringify(res.ik && res.ik.bvh));
  check(res.exported.joints === 27 && res.exported.err < 1e-3 && res.exported.clips.length === 1 && res.exported.clips[0] === 3,
    "exportGlb() imports again with the joints where they are drawn and the played clip", JSON.stringify(res.exported));
  check(res.arm.format === "urdf" && res.arm.joints === 5 && res.arm.links === 4 && res.armStatus === "reached" &&
    res.arm.label === "arm.urdf (5 joints)" && res.arm.goals === "flange",
    "open() imports a URDF arm, its links drawn as shapes, and poses it",
    JSON.stringify(res.arm));
  // a GLB writer for the tests below (in the page): the glTF document, its binary parts (typed arrays),
  // each one buffer view in order
  await page.evaluate(() => {
    window.testGlb = (doc, parts) => {
      const views = [], chunks = [];
      let off = 0;
      for (const p of parts) {
        const bytes = new Uint8Array(p.buffer), pad = (4 - bytes.length % 4) % 4;
        views.push({ buffer: 0, byteOffset: off, byteLength: bytes.length });
        chunks.push(bytes, new Uint8Array(pad));
        off += bytes.length + pad;
      }
      doc = { ...doc, bufferViews: views, buffers: [{ byteLength: off }] };
      let json = new TextEncoder().encode(JSON.stringify(doc));
      const jpad = (4 - json.length % 4) % 4;
      json = new Uint8Array([...json, ...new Array(jpad).fill(32)]);
      const total = 12 + 8 + json.length + 8 + off, glb = new Uint8Array(total), dv = new DataView(glb.buffer);
      dv.setUint32(0, 0x46546c67, true), dv.setUint32(4, 2, true), dv.setUint32(8, total, true);
      dv.setUint32(12, json.length, true), dv.setUint32(16, 0x4e4f534a, true), glb.set(json, 20);
      let at = 20 + json.length;
      dv.setUint32(at, off, true), dv.setUint32(at + 4, 0x004e4942, true), at += 8;
      for (const c of chunks) glb.set(c, at), at += c.length;
      return glb;
    };
    // red pixels of the drawn frame (the renderer keeps its drawing buffer): how many, their mean x
      window.testRed = async () => {
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        const img = new Image();
        img.src = document.querySelector("#view canvas").toDataURL();
        await img.decode();
        const c = document.createElement("canvas");
        c.width = img.width, c.height = img.height;
        const g = c.getContext("2d");
        g.drawImage(img, 0, 0);
        const d = g.getImageData(0, 0, c.width, c.height).data;
        let n = 0, sx = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] > 120 && d[i + 1] < 80 && d[i + 2] < 80) n++, sx += (i / 4) % c.width;
        return { n, x: n ? sx / n : 0 };
      };
  });
  // a skinned GLB this test writes: a three-bone stalk (root, mid, end), a red box skinned to it
  // the stalk: a three-bone chain (root, mid, end), a red box skinned to it; `extra` joins the glTF
  // document, `prim` its mesh primitive
  await page.evaluate(() => {
    window.testStalk = (extra = {}, prim = {}, padding = 0) => {
      const pos = [], jnt = [], wgt = [], idx = [];
      for (let k = 0; k < 3; k++) // rings at y = 0, 0.5, 1, each bound to its bone
        for (const [x, z] of [[-0.1, -0.1], [0.1, -0.1], [0.1, 0.1], [-0.1, 0.1]]) pos.push(x, 0.5 * k, z), jnt.push(k, 0, 0, 0), wgt.push(1, 0, 0, 0);
      for (let k = 0; k < 2; k++)
        for (let f = 0; f < 4; f++) {
          const a = 4 * k + f, b = 4 * k + (f + 1) % 4, c = a + 4, d = b + 4;
          idx.push(a, b, d, a, d, c);
        }
      const ibm = [];
      for (let k = 0; k < 3; k++) ibm.push(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -0.5 * k, 0, 1);
      const parts = [new Float32Array(pos), new Uint16Array(jnt), new Float32Array(wgt), new Uint16Array(idx), new Float32Array(ibm)];
      if (padding) parts.push(new Uint8Array(padding)); // a view nothing uses (as a texture's bytes are to ikd)
      return window.testGlb({ ...extra, asset: { version: "2.0" }, scene: 0, scenes: [{ nodes: [0, 3] }],
        nodes: [{ name: "root", children: [1] }, { name: "mid", translation: [0, 0.5, 0], children: [2] },
          { name: "end", translation: [0, 0.5, 0] }, { name: "stalk", mesh: 0, skin: 0 }],
        skins: [{ joints: [0, 1, 2], inverseBindMatrices: 4 }],
        materials: [{ pbrMetallicRoughness: { baseColorFactor: [1, 0.1, 0.1, 1], metallicFactor: 0 } }],
        meshes: [{ primitives: [{ attributes: { POSITION: 0, JOINTS_0: 1, WEIGHTS_0: 2 }, indices: 3, material: 0, ...prim }] }],
        accessors: [{ bufferView: 0, componentType: 5126, count: 12, type: "VEC3", min: [-0.1, 0, -0.1], max: [0.1, 1, 0.1] },
          { bufferView: 1, componentType: 5123, count: 12, type: "VEC4" }, { bufferView: 2, componentType: 5126, count: 12, type: "VEC4" },
          { bufferView: 3, componentType: 5123, count: idx.length, type: "SCALAR" }, { bufferView: 4, componentType: 5126, count: 3, type: "MAT4" }] },
      parts);
    };
  });
  const skinned = await page.evaluate(async () => {
    const glb = window.testStalk();
    const ed = window.ikdEditor;
    const m = await ed.open(new File([glb], "stalk.glb"));
    // red pixels of the drawn frame (the renderer keeps its drawing buffer), before and after a drag
    const red = window.testRed;
    const before = await red();
    const end = ed.jointPosition("end");
    const r = await ed.setGoal("end", { position: [end[0] + 0.5, end[1] - 0.3, end[2]] });
    const after = await red();
    const again = await ed.client().importFile(new Uint8Array(await ed.exportGlb()), { format: "glb" });
    let err = 0;
    for (const j of again.skeleton.joints) {
      const p = ed.jointPosition(j.name);
      err = Math.max(err, Math.hypot(p[0] - j.position[0], p[1] - j.position[1], p[2] - j.position[2]));
    }
    return { m, before, after, status: r && r.status, exported: { joints: again.skeleton.joints.length, err } };
  });
  check(skinned.m.format === "glb" && skinned.m.skinnedMeshes === 1 && skinned.before.n > 500 && skinned.status === "reached" &&
    skinned.after.n > 500 && Math.abs(skinned.after.x - skinned.before.x) > 5,
  "a skinned GLB is drawn with its mesh, deformed by the solved pose", JSON.stringify(skinned));
  check(skinned.exported.joints === 3 && skinned.exported.err < 1e-4, "the skinned GLB exports posed and imports again",
    JSON.stringify(skinned.exported));
  // a GLB over --max-import-body (8 MiB here, as real VRM characters with their textures are): the page
  // uploads only what ikd reads (the skin's and animations' bytes), draws the whole file
  const big = await page.evaluate(async () => {
    const glb = window.testStalk({}, {}, 9 << 20);
    const m = await window.ikdEditor.open(new File([glb], "big.glb"));
    return { size: glb.byteLength, m, status: window.ikdEditor.lastReply().status };
  });
  check(big.size > 9e6 && big.m.joints === 3 && big.m.skinnedMeshes === 1 && big.status === "reached",
    "a 9 MB GLB opens: only what ikd reads is uploaded", JSON.stringify(big));
  // a mesh r111 cannot draw (a Draco-compressed primitive, no decoder embedded): the bones are drawn and posed,
  // the page says why the mesh is not
  const draco = await page.evaluate(async () => {
    const ext = "KHR_draco_mesh_compression";
    const glb = window.testStalk({ extensionsUsed: [ext], extensionsRequired: [ext] },
      { extensions: { [ext]: { bufferView: 3, attributes: { POSITION: 0 } } } });
    const m = await window.ikdEditor.open(new File([glb], "draco.glb"));
    return { m, status: window.ikdEditor.lastReply().status, message: document.getElementById("message").textContent };
  });
  check(draco.m.joints === 3 && draco.m.meshError && draco.status === "reached" && draco.message.includes("could not be drawn"),
    "a GLB whose mesh three.js r111 cannot draw (Draco) opens with its bones posed, saying why", JSON.stringify(draco));

  // a skinned humanoid GLB this test writes, as Blender exports them: Mixamo-named joints in Z-up
  // coordinates under an `Armature` node turned -90 degrees about x, a second root joint (an IK
  // target bone) beside the hips, a red box skinned to every joint, no animation (T-pose rest)
  const human = await page.evaluate(async () => {
    const rows = [["Hips", null, [0, 0, 1]], ["Spine", "Hips", [0, 0, 0.15]], ["Chest", "Spine", [0, 0, 0.15]],
      ["Neck", "Chest", [0, 0, 0.2]], ["Head", "Neck", [0, 0, 0.1]]];
    for (const [s, x] of [["Left", 1], ["Right", -1]])
      rows.push([s + "Shoulder", "Chest", [0.05 * x, 0, 0.15]], [s + "Arm", s + "Shoulder", [0.1 * x, 0, 0]],
        [s + "ForeArm", s + "Arm", [0.27 * x, 0, 0]], [s + "Hand", s + "ForeArm", [0.25 * x, 0, 0]],
        [s + "UpLeg", "Hips", [0.1 * x, 0, -0.05]], [s + "Leg", s + "UpLeg", [0, 0, -0.43]],
        [s + "Foot", s + "Leg", [0, 0, -0.43]], [s + "ToeBase", s + "Foot", [0, -0.12, -0.07]]);
    rows.push(["IK_target", null, [0.4, -0.3, 0]]);
    const n = rows.length, idxOf = (name) => rows.findIndex((r) => r[0] === name);
    const zup = (p) => [p[0], p[2], -p[1]]; // the Armature's turn: Blender's z up is glTF's y up
    const world = rows.map(() => null);
    rows.forEach((r, i) => { const pp = r[1] ? world[idxOf(r[1])] : [0, 0, 0]; world[i] = pp.map((v, a) => v + r[2][a]); });
    const nodes = [{ name: "Armature", rotation: [-Math.SQRT1_2, 0, 0, Math.SQRT1_2], children: [] }];
    rows.forEach((r, i) => {
      nodes.push({ name: r[0], translation: r[2] });
      (r[1] ? nodes[1 + idxOf(r[1])] : nodes[0]).children = [...((r[1] ? nodes[1 + idxOf(r[1])] : nodes[0]).children || []), 1 + i];
    });
    nodes.push({ name: "body", mesh: 0, skin: 0 });
    const pos = [], jnt = [], wgt = [], idx = [], ibm = [];
    rows.forEach((r, i) => {
      const c = zup(world[i]), v0 = pos.length / 3;
      for (let k = 0; k < 8; k++) {
        pos.push(c[0] + (k & 1 ? 0.03 : -0.03), c[1] + (k & 2 ? 0.03 : -0.03), c[2] + (k & 4 ? 0.03 : -0.03));
        jnt.push(i, 0, 0, 0), wgt.push(1, 0, 0, 0);
      }
      for (const [a, b, c2, d] of [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]])
        idx.push(v0 + a, v0 + b, v0 + c2, v0 + a, v0 + c2, v0 + d);
      // the inverse of the joint's world bind matrix (the Armature's turn, then the joint's place): R^T, -R^T p
      const p = zup(world[i]);
      ibm.push(1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, -p[0], p[2], -p[1], 1);
    });
    const lo = [0, 1, 2].map((a) => Math.min(...pos.filter((_, k) => k % 3 === a)));
    const hi = [0, 1, 2].map((a) => Math.max(...pos.filter((_, k) => k % 3 === a)));
    const vc = pos.length / 3;
    const glb = window.testGlb({ asset: { version: "2.0" }, scene: 0, scenes: [{ nodes: [0, nodes.length - 1] }], nodes,
      skins: [{ joints: rows.map((_, i) => 1 + i), inverseBindMatrices: 4 }],
      materials: [{ pbrMetallicRoughness: { baseColorFactor: [1, 0.1, 0.1, 1], metallicFactor: 0 } }],
      meshes: [{ primitives: [{ attributes: { POSITION: 0, JOINTS_0: 1, WEIGHTS_0: 2 }, indices: 3, material: 0 }] }],
      accessors: [{ bufferView: 0, componentType: 5126, count: vc, type: "VEC3", min: lo, max: hi },
        { bufferView: 1, componentType: 5123, count: vc, type: "VEC4" }, { bufferView: 2, componentType: 5126, count: vc, type: "VEC4" },
        { bufferView: 3, componentType: 5123, count: idx.length, type: "SCALAR" }, { bufferView: 4, componentType: 5126, count: n, type: "MAT4" }] },
    [new Float32Array(pos), new Uint16Array(jnt), new Float32Array(wgt), new Uint16Array(idx), new Float32Array(ibm)]);
    const ed = window.ikdEditor;
    const m = await ed.open(new File([glb], "zup_humanoid.glb"));
    const before = await window.testRed();
    const sh = ed.jointPosition("LeftArm"), hand = ed.jointPosition("LeftHand"), foot = ed.jointPosition("LeftFoot");
    const to = [hand[0] + 0.05, hand[1] + 0.25, hand[2] + 0.2];
    const r = await ed.setGoal("LeftHand", { position: to });
    const at = ed.jointPosition("LeftHand"), footAt = ed.jointPosition("LeftFoot");
    const after = await window.testRed();
    const goals = ed.goals().map((g) => g.joint).join(" ");
    return { m, goals, before, after, below: sh[1] - hand[1], status: r && r.status,
      dist: Math.hypot(at[0] - to[0], at[1] - to[1], at[2] - to[2]),
      feet: Math.hypot(footAt[0] - foot[0], footAt[1] - foot[1], footAt[2] - foot[2]) };
  });
  check(human.m.format === "glb" && human.m.skinnedMeshes === 1 && human.m.joints === 23 && human.m.humanoid && // 22 and a root that joins the two trees
    human.m.humanoid.hand_l === "LeftHand" && human.goals === "LeftHand RightHand LeftFoot RightFoot Head Hips",
  "a skinned Z-up humanoid GLB with two root joints opens: its roles, handles on hands, feet, head and hips",
  JSON.stringify(human.m) + " " + human.goals);
  check(human.m.relaxed && human.below > 0.3 && human.before.n > 300,
    "it is drawn with its mesh, from a relaxed stance (no animation, a T-pose rest)", JSON.stringify(human));
  check(human.dist < 1e-3 && human.feet < 1e-3 && human.after.n > 300 && Math.abs(human.after.x - human.before.x) > 1,
    "its hand reaches a goal while the pinned feet stay, the mesh following", JSON.stringify(human));
  await page.screenshot({ path: shot.replace(/\.png$/, "-files.png") }); // the skinned humanoid (docs/editor-files.png)
  // the Export GLB button downloads the posed character as <name>-posed.glb
  const [download] = await Promise.all([page.waitForEvent("download", { timeout: 20000 }), page.click("#export")]);
  const dlPath = await download.path();
  const dlBytes = dlPath ? (await import("node:fs")).readFileSync(dlPath) : Buffer.alloc(0);
  check(download.suggestedFilename() === "zup_humanoid-posed.glb" && dlBytes.readUInt32LE(0) === 0x46546c67,
    "the Export GLB button downloads the posed character", `${download.suggestedFilename()} ${dlBytes.length} bytes`);

  // a real drop of a file on the view
  const dropped = await page.evaluate(async () => {
    const dt = new DataTransfer();
    dt.items.add(new File(["HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Zrotation Xrotation Yrotation\n JOINT b\n {\n  OFFSET 0 1 0\n" +
      "  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 1 0\n  }\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.04\n0 0 0 0 0 0\n"],
    "dropped.bvh"));
    document.getElementById("view").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    for (let i = 0; i < 200 && window.ikdEditor.model().name !== "dropped.bvh"; i++) await new Promise((r) => setTimeout(r, 20));
    return window.ikdEditor.model();
  });
  check(dropped.name === "dropped.bvh" && dropped.joints === 3, "a file dropped on the view opens", JSON.stringify(dropped));
  check(errors.length === 0 && offHost.length === 0, "no console errors and nothing off the origin while opening files",
    errors.concat(offHost).join(" | "));
  await page.close();
} catch (e) {
  check(false, "browser test (files)", String(e && e.stack || e));
} finally {
  files.proc.kill("SIGTERM");
}

// with --api-token the page asks for the token and keeps it for the session only
const tok = await startIkd({ IKD_API_TOKEN: "s3cret" });
try {
  const { page, errors } = await openPage(tok.origin);
  await page.waitForSelector("#token_form:not([hidden])", { timeout: 10000 });
  await page.fill("#token", "s3cret");
  await page.click("#token_form button");
  const r = await page.evaluate(async () => {
    await window.ikdEditor.ready;
    for (let i = 0; i < 100 && !window.ikdEditor.lastReply(); i++) await new Promise((res) => setTimeout(res, 50));
    const reply = window.ikdEditor.lastReply();
    return { status: reply && reply.status, session: sessionStorage.getItem("ikd-token"), local: localStorage.getItem("ikd-token") };
  });
  check(r.status === "reached" && r.session === "s3cret" && r.local === null, "with --api-token the page asks for the token, keeps it for the session",
    JSON.stringify(r));
  check(errors.filter((e) => !/401/.test(e)).length === 0, "no console errors but the first 401", errors.join(" | "));
} catch (e) {
  check(false, "token page", String(e && e.stack || e));
} finally {
  tok.proc.kill("SIGTERM");
}
// the client from another origin, as README shows: a page served elsewhere imports
// /client/ikd.js from ikd (started with --cors-origins for that origin) and solves
const site = http.createServer((req, res) => {
  res.writeHead(req.url === "/" ? 200 : 404, { "Content-Type": "text/html" });
  res.end(req.url === "/" ? page : "");
});
let page = "";
await new Promise((r) => site.listen(0, "127.0.0.1", r));
const siteOrigin = `http://127.0.0.1:${site.address().port}`;
const cors = await startIkd({ IKD_CORS_ORIGINS: siteOrigin });
try {
  page = `<!doctype html><script type="module">
import { IkdClient } from "${cors.origin}/client/ikd.js";
const body = { skeleton: { joints: [[0,0,0],[0,1,0],[0,2,0]] }, goals: [{ joint: 2, position: [1,1,0] }] };
window.result = Promise.all(["json", "msgpack"].map((encoding) =>
  new IkdClient("${cors.origin}", { encoding }).skeleton(body).then((r) => r.status, (e) => "error " + e.message)));
</script>`;
  const p = await browser.newPage();
  await p.goto(siteOrigin + "/");
  await p.waitForFunction(() => window.result !== undefined, null, { timeout: 10000 });
  const statuses = await p.evaluate(() => window.result);
  check(statuses.join() === "reached,reached", "the client works from another origin (--cors-origins), both encodings",
    JSON.stringify(statuses));
} catch (e) {
  check(false, "client from another origin", String(e && e.stack || e));
} finally {
  cors.proc.kill("SIGTERM");
  site.close();
}
await browser.close();
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
