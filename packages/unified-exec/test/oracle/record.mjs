#!/usr/bin/env node
// Re-records the golden fixtures in ./fixtures by running scripted exec_command / write_stdin calls
// through the original Codex CLI (shared/tools/codex-oracle.mjs, which needs the peer installed
// by shared/tools/codex-peer). Not run by `npm test`: the tests only read the committed fixtures.
//
// usage: node test/oracle/record.mjs [--only NAME,...] [--oracle PATH]
//
// Each fixture step says what the original was asked (`arguments` or `raw_arguments`), what it
// answered (`output`, verbatim) and `input`: the facts our formatter needs to reproduce that
// answer (the exact bytes the command prints, as segments, its exit code or that it is still
// running). `input.kind` is `output` (a tool-result text), `error` (an argument error text our
// parser must reproduce) or `manager` (an answer that needs a process manager; recorded only).
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

const TOKENS_10K = { kind: 'tokens', limit: 10000 };
const out = (bytes, extra = {}) => ({ kind: 'output', bytes, ...extra });
const exited = (bytes, code = 0) => out(bytes, { exit_code: code });
const running = (bytes) => out(bytes, { running: true });
const error = { kind: 'error' };
const text = (t) => ({ text: t });
const exec = (a, input) => ({ name: 'exec_command', arguments: a, input });
const raw = (s, input = error) => ({ name: 'exec_command', raw_arguments: s, input });
const write = (a, input) => ({ name: 'write_stdin', arguments: a, input });
const rawWrite = (s, input = error) => ({ name: 'write_stdin', raw_arguments: s, input });

const FIXTURES = [
  {
    name: 'output-basic',
    description: 'plain results: output, exit codes, empty output, invalid UTF-8, ignored unknown fields',
    turn_policy: TOKENS_10K,
    steps: [
      exec({ cmd: 'echo hello' }, exited([text('hello\n')])),
      exec({ cmd: "printf 'oops\\n'; exit 3" }, exited([text('oops\n')], 3)),
      exec({ cmd: 'true' }, exited([])),
      exec(
        { cmd: "printf 'abc\\303(def\\377'" },
        exited([text('abc'), { hex: 'c3' }, text('(def'), { hex: 'ff' }]),
      ),
      exec({ cmd: "printf '\\357\\273\\277bom\\r\\n'" }, exited([{ hex: 'efbbbf' }, text('bom\r\n')])),
      exec({ cmd: 'echo hi', bogus: 1 }, exited([text('hi\n')])),
    ],
  },
  {
    name: 'output-truncation',
    description: 'model-facing truncation: small budgets, zero budget, multibyte characters at the cut',
    turn_policy: TOKENS_10K,
    steps: [
      exec({ cmd: 'seq 1 2000', max_output_tokens: 50 }, exited([{ seq: [1, 2000] }])),
      exec({ cmd: 'seq 1 20', max_output_tokens: 0 }, exited([{ seq: [1, 20] }])),
      exec({ cmd: 'seq 1 20', max_output_tokens: 1 }, exited([{ seq: [1, 20] }])),
      exec(
        {
          cmd: "printf a; for i in $(seq 1 300); do printf '\\342\\202\\254'; done; echo",
          max_output_tokens: 7,
        },
        exited([text('a'), { repeat: '€', count: 300 }, text('\n')]),
      ),
      exec(
        { cmd: "for i in $(seq 1 300); do printf '\\303\\251'; done", max_output_tokens: 10 },
        exited([{ repeat: 'é', count: 300 }]),
      ),
      exec(
        {
          cmd: "printf ab; for i in $(seq 1 100); do printf '\\360\\237\\230\\200'; done",
          max_output_tokens: 9,
        },
        exited([text('ab'), { repeat: '😀', count: 100 }]),
      ),
      exec({ cmd: "head -c 60000 /dev/zero | tr '\\0' y" }, exited([{ repeat: 'y', count: 60000 }])),
      exec({ cmd: "head -c 40000 /dev/zero | tr '\\0' z" }, exited([{ repeat: 'z', count: 40000 }])),
      exec({ cmd: "head -c 40001 /dev/zero | tr '\\0' z" }, exited([{ repeat: 'z', count: 40001 }])),
      exec({ cmd: 'seq 1 12000' }, exited([{ seq: [1, 12000] }])),
    ],
  },
  {
    name: 'output-large',
    description: 'more than the 1 MiB head/tail cap: omission marker, original token count of all bytes',
    turn_policy: TOKENS_10K,
    steps: [
      exec(
        { cmd: "printf 'HEAD\\n'; head -c 2000000 /dev/zero | tr '\\0' x; printf '\\nTAIL\\n'" },
        exited([text('HEAD\n'), { repeat: 'x', count: 2000000 }, text('\nTAIL\n')]),
      ),
      exec(
        {
          cmd: "printf 'HEAD\\n'; head -c 1300000 /dev/zero | tr '\\0' x; printf '\\nTAIL\\n'",
          max_output_tokens: 100,
        },
        exited([text('HEAD\n'), { repeat: 'x', count: 1300000 }, text('\nTAIL\n')]),
      ),
      exec({ cmd: 'seq 1 300000', max_output_tokens: 200 }, exited([{ seq: [1, 300000] }])),
      exec(
        { cmd: "head -c 1048577 /dev/zero | tr '\\0' q", max_output_tokens: 1 },
        exited([{ repeat: 'q', count: 1048577 }]),
      ),
    ],
  },
  {
    name: 'output-sessions',
    description: 'running processes (session id) and write_stdin writes and polls',
    turn_policy: TOKENS_10K,
    steps: [
      exec({ cmd: 'cat', tty: true, yield_time_ms: 500 }, running([])),
      write(
        { session_id: '$LAST_SESSION', chars: 'hello\n', yield_time_ms: 1000 },
        running([text('hello\r\nhello\r\n')]),
      ),
      write({ session_id: '$LAST_SESSION', chars: '\u0004', yield_time_ms: 1000 }, exited([])),
      exec({ cmd: 'sleep 1; seq 1 3000', yield_time_ms: 250 }, running([])),
      write({ session_id: '$LAST_SESSION', max_output_tokens: 20 }, exited([{ seq: [1, 3000] }])),
      exec({ cmd: 'sleep 1; exit 7', yield_time_ms: 250 }, running([])),
      write({ session_id: '$LAST_SESSION', chars: '' }, exited([], 7)),
    ],
  },
  {
    name: 'policy-bytes',
    description: 'a model without metadata falls back to a Bytes(10000) turn policy: chars markers',
    model: 'no-such-model-for-oracle',
    turn_policy: { kind: 'bytes', limit: 10000 },
    steps: [
      exec({ cmd: "head -c 60000 /dev/zero | tr '\\0' y" }, exited([{ repeat: 'y', count: 60000 }])),
      exec(
        { cmd: "printf a; for i in $(seq 1 4000); do printf '\\342\\202\\254'; done" },
        exited([text('a'), { repeat: '€', count: 4000 }]),
      ),
      exec({ cmd: 'seq 1 2000', max_output_tokens: 50 }, exited([{ seq: [1, 2000] }])),
      exec({ cmd: 'seq 1 5000' }, exited([{ seq: [1, 5000] }])),
      exec(
        { cmd: "printf 'HEAD\\n'; head -c 2000000 /dev/zero | tr '\\0' x; printf '\\nTAIL\\n'" },
        exited([text('HEAD\n'), { repeat: 'x', count: 2000000 }, text('\nTAIL\n')]),
      ),
    ],
  },
  {
    name: 'policy-token-limit',
    description: 'tool_output_token_limit=50 caps a larger max_output_tokens (spec §8.7 clamps tests)',
    config: ['tool_output_token_limit=50'],
    turn_policy: { kind: 'tokens', limit: 50 },
    steps: [
      exec(
        {
          cmd: 'for i in $(seq 1 999); do echo "EXEC-LINE-$i xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; done',
          max_output_tokens: 70000,
        },
        exited([{ lines: ['EXEC-LINE-', ' xxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 1, 999] }]),
      ),
      exec({ cmd: 'seq 1 10', max_output_tokens: 70000 }, exited([{ seq: [1, 10] }])),
      exec(
        { cmd: "printf 'HEAD\\n'; head -c 2000000 /dev/zero | tr '\\0' x; printf '\\nTAIL\\n'" },
        exited([text('HEAD\n'), { repeat: 'x', count: 2000000 }, text('\nTAIL\n')]),
      ),
    ],
  },
  {
    name: 'args-exec-command',
    description: 'exec_command argument errors: serde texts and positions, justification, escalation',
    parse_options: { approvalPolicy: 'never' },
    steps: [
      exec({ cmd: 'echo hi', justification: 'please' }, error),
      exec({ cmd: 'echo hi', sandbox_permissions: 'require_escalated' }, error),
      exec({ cmd: 'echo hi', sandbox_permissions: 'with_additional_permissions' }, error),
      exec({ cmd: 'echo hi', additional_permissions: { network: { enabled: true } } }, error),
      exec({ cmd: 'echo hi', justification: 'x', sandbox_permissions: 'require_escalated' }, error),
      raw('{"cmd":"x","justification":""}'),
      raw('{"cmd":"x","justification":"j","sandbox_permissions":null}'),
      exec({}, error),
      exec({ cmd: 5 }, error),
      exec({ cmd: -5 }, error),
      exec({ cmd: ['a'] }, error),
      exec({ cmd: { a: 1 } }, error),
      exec({ cmd: true }, error),
      exec({ cmd: null }, error),
      raw('{"cmd":1.5}'),
      raw('{"cmd":18446744073709551616}'),
      raw('{not json'),
      raw(''),
      raw('{"cmd":"echo hi"} x'),
      raw('{"cmd":"echo hi",\n "cmd":"x"}'),
      raw('"x"'),
      raw('{'),
      raw('{"cmd'),
      raw('{"cmd":"x",'),
      raw('{"cmd":"x","tty":true'),
      raw('{"cmd":"a", }'),
      raw('{"cmd" "a"}'),
      raw('{"cmd":"a" "b"}'),
      raw('{"cmd":tru}'),
      raw('{"cmd":"a\\q"}'),
      raw('{"cmd":01}'),
      raw('{"cmd":"a\u0001"}'),
      raw('{"cmd":"\\ud800"}'),
      raw('{"cmd":"\\udc00"}'),
      raw('{"cmd":"\\u12"}'),
      raw('{"cmd":"x","tty":1.}'),
      raw('{"cmd":"x","tty":- }'),
      raw('{"cmd":"x","tty":fals}'),
      raw('{"cmd":"x","tty":nul,"a":1}'),
      raw('{"cmd":"x","tty":[}'),
      raw('{"cmd":"x","zz":[1,{"a":[tru]}]}'),
      exec({ cmd: 'echo hi', tty: 'yes' }, error),
      exec({ cmd: 'echo hi', tty: null }, error),
      exec({ cmd: 'echo hi', tty: 'a"b\\cé\n' }, error),
      raw('{"cmd":"x","tty":"\\u0001\\u007f\\t\\r"}'),
      raw('{"cmd":"x","tty":0.1}'),
      raw('{"cmd":"x","tty":123456789012345678901234.5}'),
      exec({ cmd: 'echo hi', login: 'no' }, error),
      exec({ cmd: 'echo hi', yield_time_ms: null }, error),
      exec({ cmd: 'echo hi', yield_time_ms: -5 }, error),
      exec({ cmd: 'echo hi', yield_time_ms: 1.5 }, error),
      exec({ cmd: 'echo hi', max_output_tokens: -1 }, error),
      raw('{"cmd":"echo hi","max_output_tokens":2.0}'),
      raw('{"cmd":"echo hi","max_output_tokens":-0}'),
      raw('{"cmd":"x","tty":true,"max_output_tokens":1e400}'),
      raw('{"cmd":"x","yield_time_ms":18446744073709551616}'),
      raw('{"cmd":"x","yield_time_ms":-9223372036854775809}'),
      exec({ cmd: 'echo hi', sandbox_permissions: 'bogus' }, error),
      exec({ cmd: 'echo hi', sandbox_permissions: 5 }, error),
      raw('{"cmd":"x","sandbox_permissions":[1]}'),
      exec({ cmd: 'echo hi', workdir: 7 }, error),
      exec({ tty: 'x', workdir: 7 }, error),
      exec({ cmd: 'echo hi', prefix_rule: [1] }, error),
      exec({ cmd: 'echo hi', prefix_rule: 'git' }, error),
      raw('{"cmd":"x","prefix_rule":["a",]}'),
      raw('{"cmd":"x","prefix_rule":["a" "b"]}'),
      exec({ cmd: 'echo hi', additional_permissions: 5 }, error),
      exec({ cmd: 'echo hi', additional_permissions: { network: 5 } }, error),
      exec({ cmd: 'echo hi', additional_permissions: { bogus: 1 } }, error),
      exec(
        {
          cmd: 'echo hi',
          workdir: null,
          shell: null,
          login: null,
          max_output_tokens: null,
          justification: null,
          prefix_rule: null,
          sandbox_permissions: null,
        },
        exited([text('hi\n')]),
      ),
      raw(
        '  {"cmd":"echo x"  ,  "zz":1.5e999 , "sandbox_permissions" : {"use_default":null} }  ',
        exited([text('x\n')]),
      ),
      raw('{"cmd":"echo \\u00e9\\ud83d\\ude00"}', exited([text('é😀\n')])),
      ...['1e15', '1e16', '1.5e16', '123456789.123', '0.0001', '0.00001', '1e-7', '1.5e300', '5e-324']
        .concat(['0.1', '100.0', '-1.5', '1e21', '-0.0', '1.7976931348623157e308'])
        .map((n) => raw(`{"cmd":"x","yield_time_ms":${n}}`)),
    ],
    turn_policy: TOKENS_10K,
  },
  {
    name: 'args-login-disabled',
    description: 'allow_login_shell=false: login refused (after the justification check)',
    config: ['allow_login_shell=false'],
    parse_options: { approvalPolicy: 'never', allowLoginShell: false },
    turn_policy: TOKENS_10K,
    steps: [
      exec({ cmd: 'echo hi', login: true }, error),
      exec({ cmd: 'echo hi', justification: 'x', login: true }, error),
      exec({ cmd: 'echo hi', login: true, sandbox_permissions: 'require_escalated' }, error),
      exec({ cmd: 'echo hi', login: false }, exited([text('hi\n')])),
    ],
  },
  {
    name: 'args-write-stdin',
    description: 'write_stdin argument errors',
    turn_policy: TOKENS_10K,
    steps: [
      write({}, error),
      write({ session_id: '5' }, error),
      write({ session_id: 3000000000 }, error),
      write({ session_id: -2147483649 }, error),
      write({ session_id: 1.5 }, error),
      rawWrite('5'),
      rawWrite('{"chars":5,"session_id":"x"}'),
      write({ session_id: 999 }, { kind: 'manager' }),
      write({ session_id: 12, chars: null }, { kind: 'manager' }),
    ],
  },
];

const SPEC_VARIANTS = [
  { name: 'default', oracle: {} },
  { name: 'exec_permission_approvals', oracle: { enable: ['exec_permission_approvals'] } },
  { name: 'login_disabled', oracle: { config: ['allow_login_shell=false'] } },
];

function save(name, value) {
  const file = path.join(here, 'fixtures', `${name}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(value, null, 1)}\n`);
  process.stderr.write(`[record] wrote ${path.relative(process.cwd(), file)}\n`);
}

const recordedWith = { codex: '0.169.0', oracle: 'shared/tools/codex-oracle.mjs' };
let problems = 0;

for (const fixture of FIXTURES) {
  if (only && !only.includes(fixture.name)) continue;
  const scenario = {
    name: fixture.name,
    steps: fixture.steps.map(({ input, ...step }) => step),
  };
  const options = { config: fixture.config ?? [], ...(fixture.model ? { model: fixture.model } : {}) };
  const result = await runScenario(scenario, options);
  for (const anomaly of result.anomalies) {
    problems++;
    process.stderr.write(`[record] ${fixture.name}: ${anomaly}\n`);
  }
  save(fixture.name, {
    name: fixture.name,
    description: fixture.description,
    recorded_with: { ...recordedWith, model: fixture.model ?? 'gpt-5.5', config: fixture.config ?? [] },
    turn_policy: fixture.turn_policy,
    parse_options: fixture.parse_options ?? {},
    steps: result.records.map((record, i) => {
      const step = fixture.steps[i];
      return {
        call: record.call,
        ...(step.raw_arguments !== undefined
          ? { raw_arguments: step.raw_arguments }
          : { arguments: record.arguments, raw_arguments: JSON.stringify(record.arguments) }),
        input: step.input,
        output: record.output,
      };
    }),
  });
}

if (!only || only.includes('tool-specs')) {
  const specs = {};
  for (const variant of SPEC_VARIANTS) {
    const dump = fs.mkdtempSync(path.join(os.tmpdir(), 'uexec-record-'));
    const scenario = { name: 'specs', steps: [{ name: 'exec_command', arguments: { cmd: 'true' } }] };
    const result = await runScenario(scenario, {
      ...variant.oracle,
      config: variant.oracle.config ?? [],
      dump,
    });
    problems += result.anomalies.length;
    const body = JSON.parse(fs.readFileSync(path.join(dump, 'specs.req0.json'), 'utf8'));
    fs.rmSync(dump, { recursive: true, force: true });
    specs[variant.name] = body.tools.filter((tool) => ['exec_command', 'write_stdin'].includes(tool.name));
  }
  save('tool-specs', {
    name: 'tool-specs',
    description: 'exec_command / write_stdin as the original sends them to the Responses API',
    recorded_with: recordedWith,
    variants: specs,
  });
}

process.exitCode = problems > 0 ? 1 : 0;
