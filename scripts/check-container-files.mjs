#!/usr/bin/env node
/**
 * CI check of the container files, without building an image: the Dockerfile parses (known instructions, a FROM
 * first, a non-root USER and a CMD in the final stage, every COPY source present) and compose.yaml is a valid
 * compose document (YAML with anchors and merge keys, every service with an image or a build, every depends_on
 * naming a service). Where Docker's own tools exist they check too: `docker compose config -q`, and
 * `docker build --check` (BuildKit's parser and lint; nothing is built). Exits 1 with the problems found.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..');
const problems = [];

const INSTRUCTIONS = new Set(['FROM', 'RUN', 'CMD', 'LABEL', 'EXPOSE', 'ENV', 'ADD', 'COPY', 'ENTRYPOINT', 'VOLUME', 'USER', 'WORKDIR', 'ARG', 'ONBUILD', 'STOPSIGNAL', 'HEALTHCHECK', 'SHELL']);

function checkDockerfile(text) {
  // Join continuation lines; drop comments and blank lines (parser directives are comments too).
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (!lines.length || !/^FROM\s/i.test(lines.find((l) => !/^ARG\s/i.test(l)) ?? '')) problems.push('Dockerfile: the first instruction (after ARGs) must be FROM');
  let stage = { user: undefined, cmd: false };
  const stages = new Set();
  for (const line of lines) {
    const [word, ...rest] = line.split(/\s+/);
    const op = word.toUpperCase();
    if (!INSTRUCTIONS.has(op)) problems.push(`Dockerfile: unknown instruction "${word}"`);
    if (!rest.length) problems.push(`Dockerfile: ${op} without arguments`);
    if (op === 'FROM') {
      const as = /\sAS\s+(\S+)/i.exec(line);
      if (as) stages.add(as[1]);
      stage = { user: undefined, cmd: false };
    }
    if (op === 'USER') stage.user = rest[0];
    if (op === 'CMD' || op === 'ENTRYPOINT') stage.cmd = true;
    if ((op === 'CMD' || op === 'ENTRYPOINT' || op === 'HEALTHCHECK') && rest.join(' ').includes('[')) {
      const json = rest.join(' ').replace(/^(--\S+\s+)*(CMD\s+)?/i, '');
      try {
        JSON.parse(json);
      } catch {
        problems.push(`Dockerfile: ${op}'s exec form is not a JSON array: ${json}`);
      }
    }
    if (op === 'COPY' && !rest.some((a) => a.startsWith('--from='))) {
      const args = rest.filter((a) => !a.startsWith('--'));
      for (const src of args.slice(0, -1)) if (!existsSync(join(root, src))) problems.push(`Dockerfile: COPY source "${src}" does not exist`);
    }
    for (const a of rest) {
      const from = /^--from=(.+)$/.exec(a);
      if (from && !stages.has(from[1])) problems.push(`Dockerfile: COPY --from=${from[1]} names no earlier stage`);
    }
  }
  if (!stage.user || stage.user === 'root' || stage.user === '0') problems.push('Dockerfile: the final stage must run as a non-root USER');
  if (!stage.cmd) problems.push('Dockerfile: the final stage has no CMD');
}

function checkCompose(text) {
  let doc;
  try {
    doc = parse(text, { merge: true });
  } catch (e) {
    problems.push(`compose.yaml: ${e.message}`);
    return;
  }
  const services = doc?.services;
  if (!services || typeof services !== 'object') return problems.push('compose.yaml: no services');
  for (const [name, s] of Object.entries(services)) {
    if (!s.image && !s.build) problems.push(`compose.yaml: service ${name} has neither image nor build`);
    const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
    for (const d of deps) if (!services[d]) problems.push(`compose.yaml: service ${name} depends on unknown service ${d}`);
    for (const v of s.volumes ?? []) {
      const named = typeof v === 'string' ? v.split(':')[0] : v.source;
      if (named && !named.startsWith('.') && !named.startsWith('/') && !(doc.volumes && named in doc.volumes)) problems.push(`compose.yaml: service ${name} uses undeclared volume ${named}`);
    }
  }
}

function has(cmd, args) {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

checkDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
checkCompose(readFileSync(join(root, 'compose.yaml'), 'utf8'));
if (has('docker', ['compose', 'version'])) {
  try {
    execFileSync('docker', ['compose', '-f', join(root, 'compose.yaml'), 'config', '-q'], { stdio: 'inherit' });
  } catch {
    problems.push('compose.yaml: docker compose config -q failed');
  }
} else console.log('check-container-files: docker compose not available, compose.yaml checked without it');
if (has('docker', ['buildx', 'version'])) {
  try {
    execFileSync('docker', ['build', '--check', root], { stdio: 'inherit' });
  } catch {
    problems.push('Dockerfile: docker build --check failed');
  }
} else console.log('check-container-files: docker buildx not available, Dockerfile checked without it');

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log('check-container-files: Dockerfile and compose.yaml are valid');
