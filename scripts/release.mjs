#!/usr/bin/env node
import { log, PNPM_BIN, runOrDie } from './lib.mjs';
// Publishes every public package whose version is not on the registry yet, with pnpm (so the
// `workspace:` and `catalog:` references become versions in the published manifests).
//
//   pnpm changeset            describe a change (which packages, patch/minor/major, a line of text)
//   pnpm version-packages     apply the pending changesets: bump versions, write CHANGELOG.md files
//   node scripts/release.mjs [--dry-run]
//                             build, check every packed manifest, then `pnpm publish -r`
//
// The checks are those of `scripts/packed-manifests.mjs`: no workspace/catalog reference, third-party
// runtime dependencies as ranges, repository/homepage/bugs, public access, LICENSE and README
// shipped, README links absolute. A problem stops the release before anything is published.
import { manifestProblems, packPublicPackages } from './packed-manifests.mjs';

const dryRun = process.argv.includes('--dry-run');
runOrDie(PNPM_BIN, ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']);
const packed = packPublicPackages();
const problems = packed.flatMap(manifestProblems);
if (problems.length > 0) {
  for (const problem of problems) log(problem);
  log(`${problems.length} problem(s): nothing published`);
  process.exit(1);
}
log(
  `${packed.length} packages checked: ${packed.map((p) => `${p.manifest.name}@${p.manifest.version}`).join(', ')}`,
);
runOrDie(PNPM_BIN, [
  'publish',
  '-r',
  '--access',
  'public',
  ...(dryRun ? ['--dry-run', '--no-git-checks'] : []),
]);
