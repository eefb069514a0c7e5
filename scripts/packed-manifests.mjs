// What a registry would receive: every public package packed with pnpm (which turns `workspace:`
// and `catalog:` references into versions), and the checks a manifest must pass before it is
// published. Used by `scripts/release.mjs` and by `tests/packaging.test.ts`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_ENV, PNPM_BIN, ROOT } from './lib.mjs';

/** The folders under packages/ whose package.json is not private. */
export function publicPackageDirs() {
  const dirs = [];
  for (const name of readdirSync(join(ROOT, 'packages')).sort()) {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8'));
    if (manifest.private !== true) dirs.push(join(ROOT, 'packages', name));
  }
  return dirs;
}

function listTarball(file) {
  const result = spawnSync('tar', ['-tzf', file], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tar -tzf ${file}: ${result.stderr}`);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((path) => path.replace(/^package\//, ''));
}

function readFromTarball(file, path) {
  const result = spawnSync('tar', ['-xzOf', file, `package/${path}`], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tar -xzOf ${file} ${path}: ${result.stderr}`);
  return result.stdout;
}

/**
 * Packs every public package and returns, per package, its published manifest, the files in its
 * tarball, its README and the tarball's path. Into `keepIn` when given (the tarballs stay there),
 * else into a temporary folder removed before returning (`tarball` then no longer exists).
 */
export function packPublicPackages(keepIn) {
  const dest = keepIn ?? mkdtempSync(join(tmpdir(), 'execd-packs-'));
  try {
    return publicPackageDirs().map((dir, index) => {
      const out = join(dest, String(index));
      const result = spawnSync(PNPM_BIN, ['pack', '--pack-destination', out], {
        cwd: dir,
        env: BASE_ENV,
        encoding: 'utf8',
      });
      if (result.status !== 0) throw new Error(`pnpm pack in ${dir} failed: ${result.stderr}`);
      const tarball = readdirSync(out).find((name) => name.endsWith('.tgz'));
      if (tarball === undefined) throw new Error(`pnpm pack in ${dir} left no tarball`);
      const file = join(out, tarball);
      const manifest = JSON.parse(readFromTarball(file, 'package.json'));
      const files = listTarball(file);
      const readme = files.includes('README.md') ? readFromTarball(file, 'README.md') : '';
      return { dir, manifest, files, readme, tarball: file };
    });
  } finally {
    if (keepIn === undefined) rmSync(dest, { recursive: true, force: true });
  }
}

const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'];
const REQUIRED_FIELDS = [
  'name',
  'version',
  'description',
  'license',
  'repository',
  'homepage',
  'bugs',
  'exports',
  'engines',
];

/** What is wrong with one packed package (empty when it may be published). */
export function manifestProblems({ manifest, files, readme }) {
  const problems = [];
  const name = manifest.name ?? '(unnamed)';
  for (const field of REQUIRED_FIELDS)
    if (manifest[field] === undefined) problems.push(`${name}: no "${field}"`);
  if (manifest.publishConfig?.access !== 'public')
    problems.push(`${name}: publishConfig.access is not "public"`);
  for (const file of ['LICENSE', 'README.md', 'package.json'])
    if (!files.includes(file)) problems.push(`${name}: the tarball has no ${file}`);
  for (const field of [...DEPENDENCY_FIELDS, 'devDependencies']) {
    for (const [dep, spec] of Object.entries(manifest[field] ?? {})) {
      if (/^(workspace|catalog|link|file):/.test(spec))
        problems.push(`${name}: ${field}.${dep} is "${spec}"`);
    }
  }
  for (const field of DEPENDENCY_FIELDS) {
    for (const [dep, spec] of Object.entries(manifest[field] ?? {})) {
      if (dep.startsWith('@execd/')) continue;
      // A third-party runtime dependency pinned exactly duplicates it in every user's tree.
      if (/^\d/.test(spec))
        problems.push(`${name}: ${field}.${dep} is pinned exactly ("${spec}"); use a range`);
    }
  }
  // Links that only resolve inside the repository are dead on the registry's page.
  for (const match of readme.matchAll(/\]\((\.\.?\/[^)]*)\)/g))
    problems.push(`${name}: README links ${match[1]} relatively`);
  return problems;
}
