// deploy/helm/execd-server: values checked against the chart's values.schema.json, the templates
// rendered (tests/helpers/helm-lite.ts: helm itself cannot be installed here) and every object
// validated against the Kubernetes schema; the defaults render the same Deployment as the plain
// manifest in deploy/kubernetes. Also the seccomp profile the guide recommends.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { Deployment } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { Service } from 'kubernetes-models/v1';
import { describe, expect, test } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { type ChartContext, HelmLite } from './helpers/helm-lite.ts';

const DEPLOY = join(import.meta.dirname, '..', 'deploy');
const CHART = join(DEPLOY, 'helm', 'execd-server');
const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Record<string, string>;
const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as object;
const validateValues = new Ajv({ allErrors: true, strict: false }).compile(schema);

type Objects = Record<string, Record<string, unknown>>;

/** Deep merge of values overrides onto the defaults (lists are replaced, as helm does). */
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] =
      value && typeof value === 'object' && !Array.isArray(value) && current && typeof current === 'object'
        ? merge(current as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}

/** Renders every template with `overrides` over the defaults: objects by kind, and NOTES.txt. */
function render(
  overrides: Record<string, unknown> = {},
  release = 'repo-a',
): { objects: Objects; notes: string } {
  const values = merge(defaults, overrides);
  expect(validateValues(values), JSON.stringify(validateValues.errors)).toBe(true);
  const context: ChartContext = {
    Values: values,
    Release: { Name: release, Namespace: 'agents', Service: 'Helm' },
    Chart: { Name: chart.name!, Version: chart.version!, AppVersion: chart.appVersion! },
  };
  const templates = join(CHART, 'templates');
  const files = readdirSync(templates);
  const helpers = files
    .filter((file) => file.startsWith('_'))
    .map((file) => readFileSync(join(templates, file), 'utf8'));
  const helm = new HelmLite(context, helpers);
  const objects: Objects = {};
  for (const file of files.filter((name) => name.endsWith('.yaml'))) {
    for (const document of parseAllDocuments(helm.render(readFileSync(join(templates, file), 'utf8')))) {
      expect(document.errors, file).toEqual([]);
      const object = document.toJS() as Record<string, unknown> | null;
      if (object) objects[object.kind as string] = object;
    }
  }
  return { objects, notes: helm.render(readFileSync(join(templates, 'NOTES.txt'), 'utf8')) };
}

function validate(objects: Objects): void {
  expect(() => new Deployment(objects.Deployment as never).validate()).not.toThrow();
  expect(() => new Service(objects.Service as never).validate()).not.toThrow();
  if (objects.NetworkPolicy)
    expect(() => new NetworkPolicy(objects.NetworkPolicy as never).validate()).not.toThrow();
}

describe('Helm chart', () => {
  test('Chart.yaml and the default values are valid; the defaults render valid objects', () => {
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'execd-server', type: 'application' });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
    const { objects, notes } = render();
    expect(Object.keys(objects).sort()).toEqual(['Deployment', 'NetworkPolicy', 'Service']);
    validate(objects);
    expect(notes).toContain('ws://repo-a.agents.svc:7878');
    expect(notes).not.toContain('<no value>');
  });

  test('the defaults render the plain manifest, with the Service names as allowed hosts', () => {
    const plain = parseAllDocuments(
      readFileSync(join(DEPLOY, 'kubernetes', 'execd-server.yaml'), 'utf8'),
    ).map((document) => document.toJS() as { spec: { template: { spec: Record<string, unknown> } } });
    const rendered = render().objects.Deployment as unknown as (typeof plain)[number];
    const pod = rendered.spec.template.spec as { containers: { args: string[]; image: string }[] };
    const plainPod = plain[0]!.spec.template.spec as { containers: { args: string[]; image: string }[] };
    const args = pod.containers[0]!.args;
    expect(args[args.indexOf('--allowed-host') + 1]).toBe(
      'repo-a,repo-a.agents,repo-a.agents.svc,repo-a.agents.svc.cluster.local',
    );
    const withoutHosts = (list: string[]): string[] =>
      list.filter((_, i) => list[i - 1] !== '--allowed-host');
    expect(withoutHosts(args)).toEqual(withoutHosts(plainPod.containers[0]!.args));
    expect(pod.containers[0]!.image).toBe(plainPod.containers[0]!.image);
    const strip = (spec: Record<string, unknown>) => ({
      ...spec,
      containers: (spec.containers as Record<string, unknown>[]).map(({ args: _a, ...rest }) => rest),
    });
    expect(strip(pod as never)).toEqual(strip(plainPod));
  });

  test('every option renders valid objects: Localhost seccomp, closed egress, named clients, extras', () => {
    const { objects } = render(
      {
        image: { repository: 'registry.example/execd', tag: '1.2.3' },
        server: {
          allowedHosts: ['execd.example'],
          requireSandbox: false,
          prepareSandboxes: true,
          extraArgs: ['--concurrent-requests', '8'],
        },
        networkPolicy: {
          ingressFrom: [{ podSelector: { matchLabels: { role: 'agent' } } }],
          egress: { allowAll: false, egressTo: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' } }] }] },
        },
        seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/execd-bwrap.json' },
        podLabels: { team: 'agents' },
        podAnnotations: { 'example.com/owner': 'platform' },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }],
      },
      'execd-server-b',
    );
    validate(objects);
    const deployment = objects.Deployment as never as Deployment;
    const container = deployment.spec!.template.spec!.containers[0]!;
    expect(container.image).toBe('registry.example/execd:1.2.3');
    expect(container.args).not.toContain('--require-sandbox');
    expect(container.args).toContain('--prepare-sandboxes');
    expect(container.args!.slice(-2)).toEqual(['--concurrent-requests', '8']);
    expect(container.args![container.args!.indexOf('--allowed-host') + 1]).toBe('execd.example');
    expect(container.securityContext?.seccompProfile).toEqual({
      type: 'Localhost',
      localhostProfile: 'profiles/execd-bwrap.json',
    });
    expect(deployment.metadata?.name).toBe('execd-server-b');
    expect(deployment.spec!.template.metadata!.labels).toMatchObject({ team: 'agents' });
    const policy = objects.NetworkPolicy as never as NetworkPolicy;
    expect(policy.spec!.ingress![0]!.from).toEqual([{ podSelector: { matchLabels: { role: 'agent' } } }]);
    expect(policy.spec!.egress).toEqual([
      {
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      },
      { to: [{ ipBlock: { cidr: '10.0.0.0/8' } }] },
    ]);
    expect(render({ networkPolicy: { enabled: false } }).objects.NetworkPolicy).toBeUndefined();
  });

  test('the schema refuses values that would render a broken pod', () => {
    for (const bad of [
      { seccompProfile: { type: 'Localhost' } },
      { server: { port: 70000 } },
      { auth: { existingSecret: '' } },
      { server: { allowedHosts: ['bad host'] } },
      { image: { pullPolicy: 'Sometimes' } },
      { replicas: 2 },
    ]) {
      expect(validateValues(merge(defaults, bad)), JSON.stringify(bad)).toBe(false);
    }
  });
});

test('the plain NetworkPolicy is valid and selects the plain Deployment', () => {
  const policy = parse(readFileSync(join(DEPLOY, 'kubernetes', 'networkpolicy.yaml'), 'utf8')) as Record<
    string,
    unknown
  >;
  expect(() => new NetworkPolicy(policy as never).validate()).not.toThrow();
  const [plain] = parseAllDocuments(
    readFileSync(join(DEPLOY, 'kubernetes', 'execd-server.yaml'), 'utf8'),
  ).map(
    (document) => document.toJS() as { spec: { template: { metadata: { labels: Record<string, string> } } } },
  );
  expect(plain!.spec.template.metadata.labels).toMatchObject(
    (policy as { spec: { podSelector: { matchLabels: Record<string, string> } } }).spec.podSelector
      .matchLabels,
  );
});

describe('seccomp profile', () => {
  const profile = JSON.parse(readFileSync(join(DEPLOY, 'seccomp', 'execd-bwrap.json'), 'utf8')) as {
    defaultAction: string;
    syscalls: { names: string[]; action: string }[];
  };
  const denied = profile.syscalls
    .filter((rule) => rule.action === 'SCMP_ACT_ERRNO')
    .flatMap((rule) => rule.names);

  test('lets bubblewrap build its namespaces and refuses what a container never needs', () => {
    expect(profile.defaultAction).toBe('SCMP_ACT_ALLOW');
    for (const needed of [
      'unshare',
      'clone',
      'clone3',
      'setns',
      'mount',
      'umount2',
      'pivot_root',
      'seccomp',
      'prctl',
    ])
      expect(denied).not.toContain(needed);
    for (const never of [
      'bpf',
      'init_module',
      'kexec_load',
      'keyctl',
      'perf_event_open',
      'userfaultfd',
      'io_uring_setup',
      'open_by_handle_at',
    ])
      expect(denied).toContain(never);
  });
});
