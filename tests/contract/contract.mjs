// contract.mjs - checks live ikd replies against openapi.yaml through Stoplight Prism's validating proxy.
//
// Starts two daemons (one open with CORS and small limits, one with a token and a
// one-slot queue), puts a `prism proxy` in front of each, sends requests that
// reach every endpoint and every status the API documents (plus every request
// fixture), and fails on any response that Prism finds out of contract
// (`sl-violations` header). Deliberately bad requests may violate the request
// schema; their responses still may not. Usage: node contract.mjs IKD_BIN
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const ikdBin = path.resolve(process.argv[2] || path.join(root, 'build/ikd'));
const prismBin = path.join(root, 'tests/openapi/node_modules/.bin/prism');
const spec = path.join(root, 'openapi.yaml');
const children = [];

function cleanup() {
  for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } }
}
process.on('exit', cleanup);
setTimeout(() => { console.error('contract: timed out after 120 s'); process.exit(2); }, 120000).unref();

function startIkd(args) {
  return new Promise((resolve, reject) => {
    const c = spawn(ikdBin, ['--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(c);
    let out = '';
    c.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/ikd listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    c.on('exit', (code) => reject(new Error(`ikd exited (${code}) before listening`)));
  });
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

async function startPrism(upstream) {
  const port = await freePort();
  const c = spawn(prismBin, ['proxy', spec, upstream, '-h', '127.0.0.1', '-p', String(port)],
                  { stdio: ['ignore', 'ignore', 'ignore'] });
  children.push(c);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try { if ((await fetch(`${base}/healthz`)).ok) return base; } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('prism did not start');
}

let passed = 0, failed = 0;
function fail(name, why) { failed++; console.log(`FAIL ${name}: ${why}`); }

async function check(name, base, { method = 'GET', url, headers = {}, body, status, badRequest = false }) {
  if (process.env.CONTRACT_DEBUG) console.error('..', name);
  const res = await fetch(base + url, { method, headers, body });
  await res.arrayBuffer();
  const v = res.headers.get('sl-violations');
  const violations = v ? JSON.parse(v) : [];
  const bad = violations.filter((x) => x.location[0] === 'response' || !badRequest);
  if (status !== undefined && res.status !== status) return fail(name, `status ${res.status}, want ${status}`);
  if (bad.length) return fail(name, `${res.status} ${JSON.stringify(bad)}`);
  passed++;
}

const SOLVE = JSON.stringify({ chain: { joints: [[0, 0, 0], [0, 1, 0], [0, 2, 0]] }, target: [1, 1, 0] });
const JSONH = { 'Content-Type': 'application/json' };

const a = await startPrism(await startIkd(['--cors-origins', 'https://app.example', '--max-batch', '4',
                                             '--max-body', '4096', '--max-iterations', '5000']));
const b = await startPrism(await startIkd(['--api-token', 'tok', '--workers', '1', '--queue', '1',
                                             '--debug-delay-ms', '300']));

await check('solve', a, { method: 'POST', url: '/v1/solve', headers: JSONH, body: SOLVE, status: 200 });
await check('solve with X-Request-Id', a, { method: 'POST', url: '/v1/solve', headers: { ...JSONH, 'X-Request-Id': 'c-1' }, body: SOLVE, status: 200 });
await check('solve from an allowed origin', a, { method: 'POST', url: '/v1/solve', headers: { ...JSONH, Origin: 'https://app.example' }, body: SOLVE, status: 200 });
await check('orientation goal', a, { method: 'POST', url: '/v1/solve', headers: JSONH, status: 200,
  body: JSON.stringify({ chain: { joints: [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]] }, target: { position: [2, 1, 0], rotation: [0, 0, 0.3826834, 0.9238795] } }) });
await check('batch', a, { method: 'POST', url: '/v1/solve/batch', headers: JSONH, status: 200,
  body: JSON.stringify({ problems: [JSON.parse(SOLVE), { chain: { joints: [[0, 0, 0], [0, 0, 0], [0, 2, 0]] }, target: [1, 1, 0] }, 3] }) });
await check('batch over --max-batch', a, { method: 'POST', url: '/v1/solve/batch', headers: JSONH, status: 413,
  body: JSON.stringify({ problems: [1, 2, 3, 4, 5].map(() => JSON.parse(SOLVE)) }) });
await check('batch envelope wrong', a, { method: 'POST', url: '/v1/solve/batch', headers: JSONH, body: '{"problems":{}}', status: 400, badRequest: true });
const SKELETON = JSON.stringify({
  skeleton: { joints: [{ name: 'pelvis', position: [0, 1, 0] },
    { name: 'hip_l', position: [0.1, 0.95, 0], constraint: { type: 'ball', max_deg: 90 } },
    { name: 'knee_l', position: [0.1, 0.5, 0.02], constraint: { type: 'hinge', axis: [1, 0, 0], min_deg: 0, max_deg: 150 } },
    { name: 'foot_l', position: [0.1, 0.05, 0] },
    { name: 'hip_r', parent: 'pelvis', position: [-0.1, 0.95, 0] }, [-0.1, 0.5, 0.02], [-0.1, 0.05, 0]] },
  root: 'free',
  goals: [{ joint: 'foot_l', position: [0.15, 0.2, 0.3] }, { joint: 6, ground: { point: [0, 0.1, 0] } }] });
await check('skeleton', a, { method: 'POST', url: '/v1/solve/skeleton', headers: JSONH, body: SKELETON, status: 200 });
await check('skeleton with a bad goal', a, { method: 'POST', url: '/v1/solve/skeleton', headers: JSONH, status: 400, badRequest: true,
  body: JSON.stringify({ skeleton: { joints: [[0, 0, 0], [0, 1, 0]] }, goals: [{ joint: 'nobody', position: [1, 0, 0] }] }) });
await check('batch with skeleton items', a, { method: 'POST', url: '/v1/solve/batch', headers: JSONH, status: 200,
  body: JSON.stringify({ problems: [JSON.parse(SKELETON), JSON.parse(SOLVE),
    { skeleton: { joints: [[0, 0, 0], [0, 1, 0]] }, goals: [{ joint: 'nobody', position: [1, 0, 0] }] }] }) });
const CLIP = JSON.stringify({ skeleton: { joints: [[0, 1, 0], [0, 0.55, 0.05], [0, 0.1, 0]] },
  frames: [0, 1, 2].map((k) => ({ goals: [{ joint: 2, position: [0.1 + 0.01 * k, 0.3, 0.2] }] })) });
await check('clip', a, { method: 'POST', url: '/v1/solve/clip', headers: JSONH, body: CLIP, status: 200 });
await check('clip with a bad frame', a, { method: 'POST', url: '/v1/solve/clip', headers: JSONH, status: 400, badRequest: true,
  body: JSON.stringify({ skeleton: { joints: [[0, 0, 0], [0, 1, 0]] }, frames: [{ goals: [{ joint: 1, position: [1, 0, 0] }] }, { goals: [{ joint: 7, position: [1, 0, 0] }] }] }) });
await check('solvers', a, { url: '/v1/solvers', status: 200 });
await check('healthz', a, { url: '/healthz', status: 200 });
await check('readyz', a, { url: '/readyz', status: 200 });
await check('metrics', a, { url: '/metrics', status: 200 });
await check('wrong method', a, { method: 'GET', url: '/v1/solve', status: 405, badRequest: true });
await check('wrong method on healthz', a, { method: 'DELETE', url: '/healthz', status: 405, badRequest: true });
await check('wrong content type', a, { method: 'POST', url: '/v1/solve', headers: { 'Content-Type': 'text/plain' }, body: SOLVE, status: 415, badRequest: true });
await check('body over --max-body', a, { method: 'POST', url: '/v1/solve', headers: JSONH, body: JSON.stringify({ pad: 'x'.repeat(5000) }), status: 413, badRequest: true });
await check('iterations over --max-iterations', a, { method: 'POST', url: '/v1/solve', headers: JSONH, status: 400, badRequest: true,
  body: JSON.stringify({ ...JSON.parse(SOLVE), options: { max_iterations: 5001 } }) });
await check('unauthorized', b, { method: 'POST', url: '/v1/solve', headers: JSONH, body: SOLVE, status: 401 });
await check('unauthorized metrics', b, { url: '/metrics', status: 401 });
await check('authorized', b, { method: 'POST', url: '/v1/solve', headers: { ...JSONH, Authorization: 'Bearer tok' }, body: SOLVE, status: 200 });
await check('health without token', b, { url: '/healthz', status: 200 });

// a full queue: 6 at once on one worker with a one-slot queue
const burst = await Promise.all([0, 1, 2, 3, 4, 5].map(() => fetch(`${b}/v1/solve`, {
  method: 'POST', headers: { ...JSONH, Authorization: 'Bearer tok' }, body: SOLVE })
  .then(async (r) => { await r.arrayBuffer(); return r; })));
const codes = burst.map((r) => r.status).sort();
if (!codes.includes(503) || !codes.includes(200)) fail('full queue', `statuses ${codes}`);
else passed++;
for (const r of burst) {
  const v = r.headers.get('sl-violations');
  if (v) fail(`full queue reply ${r.status}`, v); else passed++;
}

// every request fixture, good and bad. Prism's proxy cannot forward a body
// that is not JSON at all (it waits forever), so those few fixtures (NaN,
// truncated, trailing garbage, duplicate keys...) are left to the end-to-end suite.
const fixtures = JSON.parse(readFileSync(path.join(root, 'tests/fixtures/solve.json'), 'utf8')).cases;
let notJson = 0;
for (const c of fixtures) {
  const body = c.raw !== undefined ? c.raw : JSON.stringify(c.body);
  /* a body Prism would change when it re-serialises it (duplicate keys) is not forwardable either */
  try { if (c.raw !== undefined && JSON.stringify(JSON.parse(body)) !== body) { notJson++; continue; } } catch { notJson++; continue; }
  await check(`fixture: ${c.name}`, a, { method: 'POST', url: '/v1/solve', headers: JSONH, body, status: c.status, badRequest: c.status !== 200 });
}
console.log(`contract: ${notJson} fixtures whose bodies are not plain JSON are checked by the e2e suite only`);

console.log(`contract: ${passed} passed, ${failed} failed`);
cleanup();
process.exit(failed ? 1 : 0);
