// validate.mjs - checks deploy/: every Kubernetes manifest against the Kubernetes schemas
// (kubernetes-models), the rules the project keeps on them, and the Dockerfile with a linter.
// Prints "N passed, M failed" and exits non-zero on any failure.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

const here = path.dirname(fileURLToPath(import.meta.url));
const deploy = path.resolve(here, '../../deploy');
let passed = 0, failed = 0;
const ok = (name) => { passed++; console.log(`ok   ${name}`); };
const fail = (name, why) => { failed++; console.log(`FAIL ${name}: ${why}`); };

const models = {
  'v1/ConfigMap': 'kubernetes-models/v1/ConfigMap',
  'v1/Service': 'kubernetes-models/v1/Service',
  'apps/v1/Deployment': 'kubernetes-models/apps/v1/Deployment',
  'autoscaling/v2/HorizontalPodAutoscaler': 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
  'policy/v1/PodDisruptionBudget': 'kubernetes-models/policy/v1/PodDisruptionBudget',
};

const docs = {};
for (const file of readdirSync(path.join(deploy, 'k8s')).filter((f) => f.endsWith('.yaml')).sort()) {
  for (const doc of yaml.loadAll(readFileSync(path.join(deploy, 'k8s', file), 'utf8'))) {
    const key = `${doc.apiVersion}/${doc.kind}`;
    const name = `k8s/${file} ${key} schema`;
    if (!models[key]) { fail(name, 'no schema known for this kind'); continue; }
    const Model = (await import(models[key])).default ?? (await import(models[key]))[doc.kind];
    try { new Model(doc).validate(); ok(name); } catch (e) { fail(name, e.message); }
    docs[doc.kind] = doc;
  }
}

// the project's own rules
const dep = docs.Deployment, cm = docs.ConfigMap;
const c = dep?.spec.template.spec.containers[0];
const rule = (name, cond, why) => (cond ? ok(name) : fail(name, why));
rule('readiness on /readyz', c?.readinessProbe?.httpGet?.path === '/readyz', 'readinessProbe must GET /readyz');
rule('liveness on /healthz', c?.livenessProbe?.httpGet?.path === '/healthz', 'livenessProbe must GET /healthz');
const grace = Number(cm?.data?.IKD_SHUTDOWN_GRACE ?? 10);
const drainDelay = Number(cm?.data?.IKD_DRAIN_DELAY ?? 0);
const deadline = Number(cm?.data?.IKD_DEADLINE_MS ?? 10000) / 1000;
const preStop = Number(c?.lifecycle?.preStop?.exec?.command?.[1] ?? 0);
// ikd stops what is left at the end of its grace and exits within a second more; the deadline is
// counted too, so that a request accepted just before SIGTERM may run its whole deadline
const need = preStop + drainDelay + grace + deadline + 1;
rule('termination grace covers preStop + IKD_DRAIN_DELAY + IKD_SHUTDOWN_GRACE + IKD_DEADLINE_MS + 1 s',
  dep?.spec.template.spec.terminationGracePeriodSeconds >= need,
  `terminationGracePeriodSeconds ${dep?.spec.template.spec.terminationGracePeriodSeconds} < ${need}`);
rule('non-root, read-only root filesystem', dep?.spec.template.spec.securityContext?.runAsNonRoot === true &&
  c?.securityContext?.readOnlyRootFilesystem === true && c?.securityContext?.allowPrivilegeEscalation === false,
  'runAsNonRoot, readOnlyRootFilesystem and no privilege escalation are required');
rule('resources set', c?.resources?.requests?.cpu && c?.resources?.limits?.memory, 'requests and limits are required');
rule('prometheus annotations', dep?.spec.template.metadata.annotations?.['prometheus.io/path'] === '/metrics',
  'prometheus.io/* annotations pointing at /metrics');
rule('listens on all interfaces', cm?.data?.IKD_LISTEN?.startsWith('0.0.0.0:'), 'IKD_LISTEN must bind 0.0.0.0 in a pod');
rule('HPA targets the Deployment', docs.HorizontalPodAutoscaler?.spec.scaleTargetRef.name === dep?.metadata.name, 'scaleTargetRef');

// Dockerfile: the linter, then the things the image must have
const dockerfile = path.join(deploy, 'Dockerfile');
try {
  const out = execFileSync(path.join(here, 'node_modules/.bin/dockerfile-utils'), ['lint', dockerfile], { encoding: 'utf8' });
  if (out.trim()) fail('Dockerfile lint', out.trim()); else ok('Dockerfile lint');
} catch (e) { fail('Dockerfile lint', e.stdout || e.message); }
const df = readFileSync(dockerfile, 'utf8');
for (const [name, re] of [['multi-stage debian:12 build', /^FROM debian:12 AS build/m],
  ['debian:12-slim runtime', /^FROM debian:12-slim/m], ['build stage runs make test', /make test/],
  ['non-root user', /^USER \d+/m], ['EXPOSE', /^EXPOSE 8080/m], ['HEALTHCHECK on /healthz', /^HEALTHCHECK[\s\S]*\/healthz/m],
  ['STOPSIGNAL SIGTERM', /^STOPSIGNAL SIGTERM/m], ['listens on 0.0.0.0', /IKD_LISTEN=0\.0\.0\.0:8080/]]) {
  rule(`Dockerfile ${name}`, re.test(df), 'missing');
}
console.log(`deploy: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
