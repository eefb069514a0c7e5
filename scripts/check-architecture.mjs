#!/usr/bin/env node
// Keeps docs/architecture.md true (run by `npm test`): every package imports only the packages the
// layering allows, declares exactly the @execd/* packages it imports (src: dependencies, tests:
// devDependencies), never reaches into another package's files, and every `spec §N` a source
// comment cites exists in docs/codex-exec-spec.md. Prints one line per violation; exits 1 on any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './lib.mjs';

/** The layering of docs/architecture.md: what each package's src may import. */
export const ALLOWED = {
  protocol: [],
  'pty-utils': ['protocol'],
  'network-proxy': ['protocol', 'pty-utils'],
  'shell-snapshot': ['protocol', 'pty-utils'],
  sandboxing: ['protocol', 'pty-utils', 'network-proxy'],
  'exec-server': ['protocol', 'pty-utils', 'network-proxy', 'sandboxing', 'shell-snapshot'],
  'exec-client': ['protocol'],
  'unified-exec': [
    'protocol',
    'pty-utils',
    'network-proxy',
    'sandboxing',
    'shell-snapshot',
    'exec-server',
    'exec-client',
  ],
  uexec: [
    'protocol',
    'pty-utils',
    'network-proxy',
    'sandboxing',
    'shell-snapshot',
    'exec-server',
    'exec-client',
    'unified-exec',
  ],
  'test-kit': ['protocol'],
};

const SOURCE = /\.(?:ts|mts|mjs|js)$/;
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

function walk(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** `@execd/name` of an import specifier (subpaths included), or undefined. */
function execdPackage(specifier) {
  const match = /^@execd\/([^/]+)/.exec(specifier);
  return match?.[1];
}

const problems = [];
const report = (message) => problems.push(message);

const packagesDir = join(ROOT, 'packages');
const names = readdirSync(packagesDir).filter((name) => existsSync(join(packagesDir, name, 'package.json')));
for (const name of names) {
  const dir = join(packagesDir, name);
  if (!(name in ALLOWED)) {
    report(`packages/${name}: not on the map (add it to docs/architecture.md and ALLOWED in this script)`);
    continue;
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const declared = (field) =>
    new Set(
      Object.keys(manifest[field] ?? {})
        .filter((dep) => dep.startsWith('@execd/'))
        .map((dep) => dep.slice(7)),
    );
  const deps = declared('dependencies');
  const devDeps = declared('devDependencies');
  const usedBySrc = new Set();
  const usedByTests = new Set();
  for (const file of walk(dir)) {
    const rel = relative(ROOT, file);
    // vitest configs belong to the tests (they import the test kit's config factory).
    const isConfig = /(?:^|\/)vitest(?:\.[a-z]+)?\.config\.ts$/.test(file);
    const isTest =
      isConfig || /(?:^|\/)(?:test|bench)\//.test(relative(dir, file)) || /\.test(?:-d)?\.ts$/.test(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1];
      // A vitest config takes the kit's config factory by path: vite hands a config's package
      // imports to Node, which cannot load the kit's TypeScript on Node 20.
      const kitConfig =
        isConfig && /^(?:\.\.\/)+(?:packages\/)?test-kit\/src\/vitest-config\.ts$/.test(specifier);
      if (
        /^(?:\.\.\/)+(?:packages\/)?[a-z-]+\/src\//.test(specifier) &&
        !specifier.startsWith('../src/') &&
        !kitConfig
      )
        report(`${rel}: reaches into another package's files: ${specifier}`);
      const target = execdPackage(specifier);
      if (target === undefined || target === name) continue;
      if (/^@execd\/[^/]+\/(?:src|dist)\//.test(specifier)) report(`${rel}: deep import ${specifier}`);
      if (isTest) {
        usedByTests.add(target);
        continue;
      }
      usedBySrc.add(target);
      if (target === 'test-kit') report(`${rel}: src imports the private test kit`);
      else if (!ALLOWED[name].includes(target))
        report(
          `${rel}: imports @execd/${target}, against the layering (packages/${name} may import: ${ALLOWED[name].join(', ') || 'nothing'})`,
        );
    }
  }
  for (const dep of usedBySrc)
    if (!deps.has(dep))
      report(
        `packages/${name}: src imports @execd/${dep} but package.json does not declare it in dependencies`,
      );
  for (const dep of deps)
    if (!usedBySrc.has(dep))
      report(`packages/${name}: declares @execd/${dep} in dependencies but src never imports it`);
  for (const dep of usedByTests)
    if (!deps.has(dep) && !devDeps.has(dep))
      report(`packages/${name}: tests import @execd/${dep} but package.json does not declare it`);
  for (const dep of devDeps)
    if (!usedByTests.has(dep) && !usedBySrc.has(dep))
      report(`packages/${name}: declares @execd/${dep} in devDependencies but nothing imports it`);
}

// spec § references must name a section of docs/codex-exec-spec.md.
const spec = readFileSync(join(ROOT, 'docs', 'codex-exec-spec.md'), 'utf8');
const sections = new Set([...spec.matchAll(/^#{2,4}\s+([0-9]+(?:\.[0-9]+)*[a-z]?)[.\s]/gm)].map((m) => m[1]));
for (const file of [...walk(join(ROOT, 'packages')), ...walk(join(ROOT, 'tests'))]) {
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(/spec §\s*([0-9]+(?:\.[0-9]+)*[a-z]?)/g)) {
    if (!sections.has(match[1]))
      report(`${relative(ROOT, file)}: cites spec §${match[1]}, which docs/codex-exec-spec.md does not have`);
  }
}

for (const problem of problems) console.error(`architecture: ${problem}`);
if (problems.length > 0) {
  console.error(`architecture: ${problems.length} problem(s); the map is docs/architecture.md`);
  process.exit(1);
}
console.log(`architecture: ${names.length} packages follow docs/architecture.md`);
