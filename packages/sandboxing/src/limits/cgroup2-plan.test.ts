import { describe, expect, test } from 'vitest';
import { type Cgroup2State, planCgroup2Parent } from './cgroup2-plan.ts';

const base: Cgroup2State = {
  isRoot: false,
  available: ['cpu', 'io', 'memory', 'pids'],
  enabled: [],
  procs: [100],
  selfPid: 100,
};

describe('planCgroup2Parent', () => {
  test('already enabled: nothing to do', () => {
    const plan = planCgroup2Parent('/c', { ...base, enabled: ['memory', 'pids'], procs: [] });
    expect(plan).toEqual({ enable: [], usable: ['pids', 'memory'], moveToLeaf: 'none', reasons: [] });
  });

  test('the root cgroup may enable controllers while it holds processes', () => {
    const plan = planCgroup2Parent('/c', { ...base, isRoot: true, procs: [1, 100] });
    expect(plan.enable).toEqual(['pids', 'memory']);
    expect(plan.moveToLeaf).toBe('none');
  });

  test('an empty cgroup enables directly', () => {
    expect(planCgroup2Parent('/c', { ...base, procs: [] }).moveToLeaf).toBe('none');
  });

  test('the executor alone in its cgroup moves itself into a leaf', () => {
    const plan = planCgroup2Parent('/c', base);
    expect(plan.moveToLeaf).toBe('self');
    expect(plan.enable).toEqual(['pids', 'memory']);
  });

  test('other processes are moved only when allowed; otherwise the controllers are unusable, with a reason', () => {
    const crowded = { ...base, procs: [1, 100] };
    expect(planCgroup2Parent('/c', crowded, { moveProcessesToLeaf: true }).moveToLeaf).toBe('all');
    const plan = planCgroup2Parent('/c', crowded);
    expect(plan.moveToLeaf).toBe('none');
    expect(plan.enable).toEqual([]);
    expect(plan.usable).toEqual([]);
    expect(plan.reasons).toHaveLength(1);
  });

  test('controllers the parent did not delegate are reported, the others kept', () => {
    const plan = planCgroup2Parent('/c', { ...base, available: ['pids'], procs: [] });
    expect(plan.usable).toEqual(['pids']);
    expect(plan.reasons).toHaveLength(1);
  });
});
