// drag.mjs - the editor's drag benchmark (make bench): a 121-joint VRM-named character dragged by one hand in Chromium.
// Usage: node tests/browser/drag.mjs build/ikd [runs]
// Writes the character as a BVH (a ground-level root over VRM-named bones, ten fingers of three joints, eight
// hair chains of six), opens it through ikdEditor.open (registered, solved by reference), then per encoding and
// run moves the
// left hand's handle every 16 ms for 3 s (pointer events at 60 Hz, as a drag), while the page solves as
// fast as its replies come (one request in flight, the newest goals win). Reports the page's own count
// of solves drawn per second (sampled each 250 ms after the first second: median), the round trip, the
// share of replies reached; runs interleave the encodings. Software GL (SwiftShader) on this machine.
import { spawn } from "node:child_process";
import { chromium } from "playwright-core";

const ikdBin = process.argv[2] || "build/ikd";
const runs = Number(process.argv[3] || 3);
const proc = spawn(ikdBin, ["--listen", "127.0.0.1:0", "--log-level", "off"], { stdio: ["ignore", "pipe", "ignore"] });
const origin = await new Promise((resolve, reject) => {
  let out = "";
  proc.stdout.on("data", (d) => { out += d; const m = out.match(/listening on (http:\/\/[^\s]+)/); if (m) resolve(m[1]); });
  proc.on("exit", (c) => reject(new Error(`ikd exited (${c})`)));
});
const browser = await chromium.launch({ executablePath: process.env.IKD_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--enable-unsafe-swiftshader", "--use-angle=swiftshader"] });
const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
await page.goto(origin + "/");
await page.evaluate(() => window.ikdEditor.ready);

/* The character: [name, parent, offset] rows, written as BVH. */
const bvh = () => {
  const J = [["Root", null, [0, 0, 0]], ["J_Bip_C_Hips", "Root", [0, 1, 0]], ["J_Bip_C_Spine", "J_Bip_C_Hips", [0, 0.1, 0]],
    ["J_Bip_C_Chest", "J_Bip_C_Spine", [0, 0.15, 0]], ["J_Bip_C_UpperChest", "J_Bip_C_Chest", [0, 0.15, 0]],
    ["J_Bip_C_Neck", "J_Bip_C_UpperChest", [0, 0.15, 0]], ["J_Bip_C_Head", "J_Bip_C_Neck", [0, 0.1, 0]]];
  for (const [s, x] of [["L", 1], ["R", -1]]) {
    J.push([`J_Bip_${s}_Shoulder`, "J_Bip_C_UpperChest", [x * 0.05, 0.1, 0]], [`J_Bip_${s}_UpperArm`, `J_Bip_${s}_Shoulder`, [x * 0.12, 0, 0]],
      [`J_Bip_${s}_LowerArm`, `J_Bip_${s}_UpperArm`, [x * 0.27, 0, 0]], [`J_Bip_${s}_Hand`, `J_Bip_${s}_LowerArm`, [x * 0.25, 0, 0]],
      [`J_Bip_${s}_UpperLeg`, "J_Bip_C_Hips", [x * 0.1, -0.05, 0]], [`J_Bip_${s}_LowerLeg`, `J_Bip_${s}_UpperLeg`, [0, -0.43, 0.01]],
      [`J_Bip_${s}_Foot`, `J_Bip_${s}_LowerLeg`, [0, -0.43, -0.01]], [`J_Bip_${s}_ToeBase`, `J_Bip_${s}_Foot`, [0, -0.07, 0.12]]);
    for (const f of ["Thumb", "Index", "Middle", "Ring", "Little"])
      for (let k = 1; k <= 3; k++) J.push([`J_Bip_${s}_${f}${k}`, k === 1 ? `J_Bip_${s}_Hand` : `J_Bip_${s}_${f}${k - 1}`, [x * 0.03, 0, 0.01]]);
  }
  for (let h = 0; h < 8; h++)
    for (let k = 0; k < 6; k++)
      J.push([`J_Sec_Hair${h}_${k}`, k ? `J_Sec_Hair${h}_${k - 1}` : "J_Bip_C_Head", [0.01 * Math.cos(h), -0.03, 0.01 * Math.sin(h)]]);
  const kids = (n) => J.filter((j) => j[1] === n);
  const lines = ["HIERARCHY"];
  const block = (j, d) => {
    lines.push(`${d ? "JOINT" : "ROOT"} ${j[0]}`, "{", `OFFSET ${j[2].join(" ")}`,
      `CHANNELS ${d ? "3 Zrotation Xrotation Yrotation" : "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"}`);
    kids(j[0]).forEach((k) => block(k, d + 1));
    if (!kids(j[0]).length) lines.push("End Site", "{", "OFFSET 0 0.01 0", "}");
    lines.push("}");
  };
  block(J[0], 0);
  lines.push("MOTION", "Frames: 1", "Frame Time: 0.0333333", new Array(3 + 3 * J.length).fill(0).join(" "));
  return lines.join("\n") + "\n";
};

const rows = [];
for (let r = 0; r < runs; r++)
  for (const enc of ["msgpack", "json"]) {
    const got = await page.evaluate(async ({ enc, text }) => {
      const ed = window.ikdEditor, sel = document.getElementById("encoding");
      sel.value = enc;
      sel.dispatchEvent(new Event("change"));
      const m = await ed.open(new File([text], "vrm121.bvh"));
      const h = ed.jointPosition("J_Bip_L_Hand"), n = 180, samples = [], rtts = [];
      let i = 0, replies = 0, reached = 0;
      await new Promise((done) => {
        const id = setInterval(() => {
          const a = i / n * 2 * Math.PI;
          ed.setGoal("J_Bip_L_Hand", { position: [h[0] - 0.1 + 0.05 * Math.cos(a), h[1] + 0.05 * Math.sin(a), h[2] + 0.1] })
            .then((rep) => { replies++; reached += !!rep && rep.status === "reached"; });
          if (++i % 16 === 0 && i > 60) { const s = ed.rate(); samples.push(s.solvesPerSecond); rtts.push(s.roundTripMs); }
          if (i >= n) { clearInterval(id); done(); }
        }, 16);
      });
      await new Promise((res) => setTimeout(res, 300));
      const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
      return { joints: m.joints, solvesPerSecond: med(samples), low: Math.min(...samples), rtt: med(rtts), replies, reached };
    }, { enc, text: bvh() });
    rows.push({ run: r + 1, enc, ...got });
    console.log(`run ${r + 1} ${enc.padEnd(7)} ${got.joints} joints: ${got.solvesPerSecond} solves/s drawn (lowest sample ${got.low}), ` +
      `round trip ${got.rtt.toFixed(1)} ms, ${got.reached} of ${got.replies} replies reached`);
  }
for (const enc of ["msgpack", "json"]) {
  const v = rows.filter((x) => x.enc === enc).map((x) => x.solvesPerSecond).sort((a, b) => a - b);
  console.log(`${enc}: median ${v[v.length >> 1]} solves/s over ${v.length} runs (${v[0]}-${v[v.length - 1]})`);
}
if (errors.length) console.log("page errors:", errors.join("; "));
await browser.close();
proc.kill();
process.exit(errors.length ? 1 : 0);
