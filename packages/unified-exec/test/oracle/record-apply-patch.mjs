#!/usr/bin/env node
// Re-records the apply_patch goldens in ./fixtures/apply-patch by running scripted apply_patch and
// exec_command calls through the original Codex CLI (shared/tools/codex-oracle.mjs), once per
// sandbox mode. Not run by `npm test`: test/apply-patch-goldens.test.ts replays the fixtures.
//
// usage: node test/oracle/record-apply-patch.mjs [--only NAME,...] [--oracle PATH]
//
// A fixture holds the `setup` shell script run in the fresh working folder before the first call,
// the sandbox mode, and per step the call (`input` of the freeform apply_patch tool, or
// exec_command `arguments`) and the original's answer (`output`, verbatim). Paths outside the
// project live under /var/tmp/execd-ap-* (outside /tmp, which workspace-write may write).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const oraclePath =
  flag('--oracle') ??
  process.env.CODEX_ORACLE ??
  path.resolve(here, '../../../../../shared/tools/codex-oracle.mjs');
const only = flag('--only')?.split(',');
const { runScenario } = await import(pathToFileURL(oraclePath).href);

/** Where the "outside the project" targets are (cleaned before and after each run). */
const OUTSIDE = '/var/tmp';
const OUTSIDE_GLOB = `${OUTSIDE}/execd-ap-*`;
const UP = '../../../../../../..';

const P = (...lines) => `*** Begin Patch\n${lines.join('\n')}\n*** End Patch\n`;
const ap = (input) => ({ name: 'apply_patch', input });
const sh = (cmd) => ({ name: 'exec_command', arguments: { cmd } });
const heredoc = (head, body) => sh(`${head} <<'EOF'\n${body}EOF`);

const SETUP = [
  'mkdir -p src sub',
  "printf 'one\\ntwo\\nthree\\n' > src/moved.txt",
  "printf 'alpha\\nbeta\\ngamma\\ndelta\\nepsilon\\nzeta\\n' > multi.txt",
  "printf 'fn a() {\\n  x\\n}\\nfn b() {\\n  x\\n}\\n' > ctx.rs",
  "printf 'a\\r\\nb\\r\\nc\\r\\n' > crlf.txt",
  "printf 'x  \\n  y\\nz\\n' > ws.txt",
  "printf 'k\\r\\nm\\nn \\n' > mixed.txt",
  "printf 'fn main() {\\n    let a = 1;\\n}\\n' > indent.rs",
  "printf 'say \\342\\200\\234hi\\342\\200\\235 \\342\\200\\224 ok\\n' > quotes.txt",
  "printf 'head\\nmiddle\\ntail' > eof.txt",
  "printf '\\000\\001\\377bin\\n' > bin.dat",
  "printf 'del\\n' > del.txt",
  `ln -s ${OUTSIDE} linkdir`,
  `ln -s ${OUTSIDE}/execd-ap-dangling link.txt`,
].join(' && ');

// Lists every file of the working folder with its bytes (hex), so file contents are compared too.
const LISTING = sh(
  'find . -type f -o -type l | LC_ALL=C sort | while read -r f; do printf \'%s\' "$f"; od -An -v -tx1 "$f" 2>/dev/null | tr -d \'\\n\'; echo; done',
);

const CORE_STEPS = [
  ap(P('*** Add File: src/a.txt', '+hello', '*** Add File: b.txt', '+x')),
  ap(P('*** Update File: src/moved.txt', '@@', ' one', '-two', '+TWO', ' three')),
  ap(
    P('*** Update File: multi.txt', '@@', ' alpha', '-beta', '+BETA', '@@', ' delta', '-epsilon', '+EPSILON'),
  ),
  ap(P('*** Update File: ctx.rs', '@@ fn b() {', '-  x', '+  y')),
  ap(P('*** Update File: src/moved.txt', '-not there', '+x')),
  ap(P('*** Update File: ctx.rs', '@@ fn zzz() {', '-  x', '+  y')),
  ap(P('*** Frobnicate File: x')),
  ap(P('*** Delete File: nope.txt')),
  ap(P('*** Update File: hello.txt', '@@', '-a', '+b')),
  ap('*** Begin Patch\n*** End Patch\n'),
  ap(''),
  ap('garbage'),
  ap(P('*** Update File: h.txt')),
  ap(P('*** Update File: ws.txt', '@@', ' x', '-y', '+Y', ' z')),
  ap(P('*** Update File: quotes.txt', '@@', '-say "hi" - ok', '+said "hi"')),
  ap(P('*** Update File: mixed.txt', '@@', ' k', '+ins', ' m', '-n', '+n')),
  ap(P('*** Update File: indent.rs', '@@', ' fn main() {', '-let a = 1;', '+    let a = 2;', ' }')),
  ap(P('*** Update File: crlf.txt', '@@', ' a', '-b', '+B', '+B2')),
  ap(P('*** Update File: eof.txt', '@@', '-tail', '+TAIL', '*** End of File')),
  ap(P('*** Update File: bin.dat', '@@', '-bin', '+BIN')),
  ap(P('*** Delete File: del.txt')),
  ap(P('*** Delete File: sub')),
  ap(P('*** Add File: dup.txt', '+1', '*** Add File: dup.txt', '+2')),
  ap(P('*** Update File: ./multi.txt', '@@', '-alpha', '+A', '*** Update File: multi.txt', '@@', '-A', '+B')),
  ap(P('*** Add File: a/../folded.txt', '+1', '*** Delete File: missing/../nope.txt')),
  ap(P('*** Update File: sub', '@@', '-a', '+b')),
  ap(P('*** Add File: b.txt/x', '+1')),
  ap(P('*** Update File: src/moved.txt', '*** Move to: dst/new.txt', '@@', '-three', '+3')),
  ap(`<<'EOF'\n${P('*** Add File: lenient.txt', '+hi')}EOF\n`),
  ap(P(`*** Add File: ${UP}${OUTSIDE}/execd-ap-dotdot.txt`, '+o')),
  ap(P(`*** Add File: ${OUTSIDE}/execd-ap-abs.txt`, '+o')),
  ap(P('*** Add File: linkdir/execd-ap-via-link.txt', '+o')),
  ap(P('*** Update File: link.txt', '@@', '-q', '+r')),
  heredoc('apply_patch', P('*** Add File: h.txt', '+hi')),
  heredoc('cd sub && applypatch', P('*** Add File: h2.txt', '+hi')),
  heredoc('apply_patch', P('*** Frob: x')),
  sh(P('*** Add File: implicit.txt', '+hi')),
  heredoc('apply_patch', P(`*** Add File: ${OUTSIDE}/execd-ap-heredoc.txt`, '+o')),
  LISTING,
];

// Only without a sandbox: the original then has no apply_patch helper on PATH, as we have none.
const NOT_INTERCEPTED = [
  heredoc('echo pre; apply_patch', P('*** Add File: h4.txt', '+hi')),
  heredoc('mkdir -p sub2 && cd sub2 && apply_patch', P('*** Add File: h5.txt', '+hi')),
];

// `*** Environment ID:` in a one-environment turn: the freeform tool refuses any selection, an
// empty or repeated line is a parse error, exec_command's apply_patch ignores the line.
const ENVIRONMENT_ID_STEPS = [
  ap(P('*** Environment ID: ', '*** Add File: env-empty.txt', '+a')),
  ap(P('*** Environment ID: local', '*** Environment ID: local', '*** Add File: env-twice.txt', '+b')),
  ap(P('*** Environment ID: nope', '*** Add File: env-unknown.txt', '+c')),
  ap(P('*** Environment ID: local', '*** Add File: env-local.txt', '+d')),
  ap(P('*** Add File: env-late.txt', '+e', '*** Environment ID: local')),
  heredoc('apply_patch', P('*** Environment ID: nope', '*** Add File: env-heredoc.txt', '+f')),
  heredoc('apply_patch', P('*** Environment ID:', '*** Add File: env-heredoc-empty.txt', '+g')),
  LISTING,
];

const FIXTURES = [
  {
    name: 'apply-patch-environment-id',
    description: 'the *** Environment ID: line with one environment (danger-full-access, approval never)',
    sandbox: 'bypass',
    steps: ENVIRONMENT_ID_STEPS,
  },
  {
    name: 'apply-patch-bypass',
    description: 'apply_patch without a sandbox (danger-full-access, approval never)',
    sandbox: 'bypass',
    steps: [...CORE_STEPS.slice(0, -1), ...NOT_INTERCEPTED, LISTING],
  },
  {
    name: 'apply-patch-workspace-write',
    description: 'apply_patch under workspace-write (/tmp and $TMPDIR not writable), approval never',
    sandbox: 'workspace-write',
    config: [
      'sandbox_workspace_write.exclude_slash_tmp=true',
      'sandbox_workspace_write.exclude_tmpdir_env_var=true',
    ],
    steps: CORE_STEPS,
  },
  {
    name: 'apply-patch-read-only',
    description: 'apply_patch under read-only, approval never',
    sandbox: 'read-only',
    steps: CORE_STEPS,
  },
];

const cleanOutside = () => execFileSync('/bin/sh', ['-c', `rm -rf ${OUTSIDE_GLOB}`]);
const outsideFiles = () =>
  execFileSync('/bin/sh', ['-c', `ls -d ${OUTSIDE_GLOB} 2>/dev/null || true`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

let problems = 0;
for (const fixture of FIXTURES) {
  if (only && !only.includes(fixture.name)) continue;
  cleanOutside();
  const result = await runScenario(
    { name: fixture.name, steps: fixture.steps },
    {
      sandbox: fixture.sandbox,
      config: fixture.config ?? [],
      setup: ({ cwd }) => execFileSync('/bin/sh', ['-c', SETUP], { cwd }),
    },
  );
  const outside = outsideFiles();
  cleanOutside();
  for (const anomaly of result.anomalies) {
    problems++;
    process.stderr.write(`[record] ${fixture.name}: ${anomaly}\n`);
  }
  const file = path.join(here, 'fixtures', 'apply-patch', `${fixture.name}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const value = {
    name: fixture.name,
    description: fixture.description,
    recorded_with: {
      codex: '0.169.0',
      oracle: 'shared/tools/codex-oracle.mjs',
      config: fixture.config ?? [],
    },
    sandbox: fixture.sandbox,
    setup: SETUP,
    outside_written: outside,
    steps: result.records.map((record, i) => ({
      call: record.call,
      ...(fixture.steps[i].input !== undefined
        ? { input: fixture.steps[i].input }
        : { arguments: fixture.steps[i].arguments }),
      output: record.output,
    })),
  };
  fs.writeFileSync(file, `${JSON.stringify(value, null, 1)}\n`);
  process.stderr.write(`[record] wrote ${path.relative(process.cwd(), file)}\n`);
}
if (!only || only.includes('tool-spec')) {
  // The freeform tool exactly as the original declares it to the Responses API.
  const dump = fs.mkdtempSync(path.join(os.tmpdir(), 'uexec-record-'));
  const result = await runScenario(
    { name: 'specs', steps: [{ name: 'exec_command', arguments: { cmd: 'true' } }] },
    { dump },
  );
  problems += result.anomalies.length;
  const body = JSON.parse(fs.readFileSync(path.join(dump, 'specs.req0.json'), 'utf8'));
  fs.rmSync(dump, { recursive: true, force: true });
  const file = path.join(here, 'fixtures', 'apply-patch', 'tool-spec.json');
  const spec = body.tools.find((tool) => tool.name === 'apply_patch');
  fs.writeFileSync(
    file,
    `${JSON.stringify({ name: 'tool-spec', recorded_with: { codex: '0.169.0' }, apply_patch: spec }, null, 1)}\n`,
  );
  process.stderr.write(`[record] wrote ${path.relative(process.cwd(), file)}\n`);
}

process.exitCode = problems > 0 ? 1 : 0;
