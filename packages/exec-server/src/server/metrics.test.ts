import { RpcError } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import type { ProcessNotification } from '../types.ts';
import { ExecServerMetrics } from './metrics.ts';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const exited = (sandboxDenied: boolean): ProcessNotification => ({
  method: 'process/exited',
  params: { processId: 'p', seq: 2, exitCode: 1, sandboxDenied },
});

describe('ExecServerMetrics', () => {
  test('every series exists from the start, at zero', async () => {
    const text = await new ExecServerMetrics().render();
    expect(sample(text, 'execd_sessions{state="attached"}')).toBe(0);
    expect(sample(text, 'execd_sessions{state="detached"}')).toBe(0);
    for (const state of ['starting', 'running', 'exited', 'closed']) {
      expect(sample(text, `execd_processes{state="${state}"}`)).toBe(0);
    }
    expect(sample(text, 'execd_streamed_bytes_total{via="notification"}')).toBe(0);
    expect(sample(text, 'execd_session_events_total{event="resumed"}')).toBe(0);
    expect(sample(text, 'execd_sandbox_denials_total')).toBe(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'process_open_fds')).toBeGreaterThan(0);
  });

  test('prepared sandboxes: read from the pool at scrape time, zero without one', async () => {
    const metrics = new ExecServerMetrics();
    let text = await metrics.render();
    expect(sample(text, 'execd_prepared_sandboxes')).toBe(0);
    expect(sample(text, 'execd_prepared_sandbox_commands_total{start="prepared"}')).toBe(0);
    expect(sample(text, 'execd_prepared_sandboxes_ended_total{reason="unusable"}')).toBe(0);
    let taken = 3;
    metrics.bindPreparedSandboxes(() => ({
      waiting: 2,
      started: 9,
      commands: { prepared: taken, cold: 4 },
      ended: { unusable: 1, died: 0, idle: 5, evicted: 0, closed: 0 },
    }));
    text = await metrics.render();
    expect(sample(text, 'execd_prepared_sandboxes')).toBe(2);
    expect(sample(text, 'execd_prepared_sandbox_commands_total{start="prepared"}')).toBe(3);
    expect(sample(text, 'execd_prepared_sandbox_commands_total{start="cold"}')).toBe(4);
    expect(sample(text, 'execd_prepared_sandboxes_ended_total{reason="idle"}')).toBe(5);
    taken = 7;
    expect(sample(await metrics.render(), 'execd_prepared_sandbox_commands_total{start="prepared"}')).toBe(7);
  });

  test('the fork server: up and its commands by outcome, read at each scrape; 0 without one', async () => {
    const metrics = new ExecServerMetrics();
    expect(sample(await metrics.render(), 'execd_fork_server_up')).toBe(0);
    expect(sample(await metrics.render(), 'execd_fork_server_commands_total{outcome="started"}')).toBe(0);
    let stats = { usable: true, started: 5, failed: 1 };
    metrics.bindForkServer(() => stats);
    let text = await metrics.render();
    expect(sample(text, 'execd_fork_server_up')).toBe(1);
    expect(sample(text, 'execd_fork_server_commands_total{outcome="started"}')).toBe(5);
    expect(sample(text, 'execd_fork_server_commands_total{outcome="failed"}')).toBe(1);
    stats = { usable: false, started: 6, failed: 1 };
    text = await metrics.render();
    expect(sample(text, 'execd_fork_server_up')).toBe(0);
    expect(sample(text, 'execd_fork_server_commands_total{outcome="started"}')).toBe(6);
  });

  test('each instance has its own registry', async () => {
    const a = new ExecServerMetrics();
    const b = new ExecServerMetrics();
    a.observeConnection('open');
    expect(sample(await a.render(), 'execd_connections')).toBe(1);
    expect(sample(await b.render(), 'execd_connections')).toBe(0);
  });

  test('method labels are bounded: anything outside the protocol is "other"', async () => {
    const metrics = new ExecServerMetrics();
    metrics.observeRequest('process/start', 0.002);
    for (let i = 0; i < 50; i++)
      metrics.observeRequest(`junk/${i}`, 0.001, new RpcError('methodNotFound', 'no'));
    const text = await metrics.render();
    expect(sample(text, 'execd_request_duration_seconds_count{method="process/start"}')).toBe(1);
    expect(sample(text, 'execd_request_duration_seconds_count{method="other"}')).toBe(50);
    expect(sample(text, 'execd_request_errors_total{method="other",code="-32601"}')).toBe(50);
    expect(text).not.toContain('junk/');
  });

  test('results, notifications and sessions are counted', async () => {
    const metrics = new ExecServerMetrics();
    metrics.observeResult('process/start', { processId: 'p', sandboxType: 'linuxSeccomp' });
    metrics.observeResult('process/read', {
      chunks: [{ seq: 1, stream: 'stdout', chunk: new Uint8Array(10) }],
    });
    metrics.observeNotificationSent({
      method: 'process/output',
      params: { processId: 'p', seq: 1, stream: 'stdout', chunk: new Uint8Array(7) },
    });
    metrics.observeProcessNotification(exited(true));
    metrics.observeProcessNotification(exited(false));
    metrics.observeSession('created');
    metrics.observeSession('resumed');
    metrics.bindSessions(() => ({
      attached: 2,
      detached: 1,
      tables: [
        {
          list: () => ({
            processes: [
              {
                processId: 'a',
                argv: ['x'],
                cwd: 'file:///',
                tty: false,
                state: 'running',
                nextSeq: 1,
                startedAtMs: 0,
              },
              {
                processId: 'b',
                argv: ['x'],
                cwd: 'file:///',
                tty: false,
                state: 'closed',
                nextSeq: 4,
                startedAtMs: 0,
              },
            ],
          }),
        },
      ],
    }));
    const text = await metrics.render();
    expect(sample(text, 'execd_processes_started_total{sandbox_type="linuxSeccomp"}')).toBe(1);
    expect(sample(text, 'execd_streamed_bytes_total{via="read"}')).toBe(10);
    expect(sample(text, 'execd_streamed_bytes_total{via="notification"}')).toBe(7);
    expect(sample(text, 'execd_sandbox_denials_total')).toBe(1);
    expect(sample(text, 'execd_session_events_total{event="resumed"}')).toBe(1);
    expect(sample(text, 'execd_sessions{state="attached"}')).toBe(2);
    expect(sample(text, 'execd_sessions{state="detached"}')).toBe(1);
    expect(sample(text, 'execd_processes{state="running"}')).toBe(1);
    expect(sample(text, 'execd_processes{state="closed"}')).toBe(1);
  });
});
