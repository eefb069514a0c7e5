// deploy/: the Kubernetes manifest validated against the Kubernetes schema, and the Dockerfile
// linted for structure (no container engine runs here).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Service } from 'kubernetes-models/v1';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';

const DEPLOY_DIR = join(import.meta.dirname, '..', 'deploy');

function manifests(): Record<string, unknown>[] {
  const text = readFileSync(join(DEPLOY_DIR, 'kubernetes', 'execd-server.yaml'), 'utf8');
  return parseAllDocuments(text).map((document) => {
    expect(document.errors).toEqual([]);
    return document.toJS() as Record<string, unknown>;
  });
}

/** Dockerfile instructions: continuation lines joined, comments dropped. */
function dockerInstructions(): { keyword: string; args: string }[] {
  const text = readFileSync(join(DEPLOY_DIR, 'Dockerfile'), 'utf8');
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return logical
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .map((line) => {
      const space = line.search(/\s/);
      return { keyword: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() };
    });
}

describe('Kubernetes manifest', () => {
  test('is a Deployment and a Service that validate against the Kubernetes schema', () => {
    const [deployment, service, ...rest] = manifests();
    expect(rest).toEqual([]);
    expect(deployment).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
    expect(service).toMatchObject({ apiVersion: 'v1', kind: 'Service' });
    // validate() throws on any schema violation (types, enums, required fields).
    expect(() => new Deployment(deployment as never).validate()).not.toThrow();
    expect(() => new Service(service as never).validate()).not.toThrow();
  });

  test('one replica, token from a Secret file, probes on /readyz, limits, the securityContext bwrap needs', () => {
    const deployment = new Deployment(manifests()[0] as never);
    const spec = deployment.spec!;
    expect(spec.replicas).toBe(1);
    expect(spec.strategy?.type).toBe('Recreate');
    const pod = spec.template.spec!;
    expect(spec.template.metadata?.labels).toEqual(spec.selector.matchLabels);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    const [container, ...others] = pod.containers;
    expect(others).toEqual([]);
    expect(container!.image).toMatch(/.+:.+/);

    // The listen address is not loopback, so the token is mandatory: read from the mounted Secret.
    const args = container!.args!;
    expect(args.slice(args.indexOf('--listen'), args.indexOf('--listen') + 2)).toEqual([
      '--listen',
      'ws://0.0.0.0:7878',
    ]);
    const tokenFile = args[args.indexOf('--auth-token-file') + 1]!;
    const mount = container!.volumeMounts!.find((candidate) =>
      tokenFile.startsWith(`${candidate.mountPath}/`),
    );
    expect(mount?.readOnly).toBe(true);
    const volume = pod.volumes!.find((candidate) => candidate.name === mount!.name);
    expect(volume?.secret?.secretName).toBe('execd-auth');
    expect(volume?.secret?.items).toEqual([
      { key: 'token', path: tokenFile.slice(mount!.mountPath.length + 1) },
    ]);
    expect(volume?.secret?.defaultMode).toBe(0o440);

    const port = container!.ports!.find((candidate) => candidate.containerPort === 7878);
    // Ready: listening and (--require-sandbox) the sandbox works; alive: listening.
    expect(container!.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect([port?.name, port?.containerPort]).toContain(container!.readinessProbe?.httpGet?.port);
    expect(args).toContain('--require-sandbox');
    expect([port?.name, port?.containerPort]).toContain(container!.livenessProbe?.tcpSocket?.port);
    expect(container!.resources?.limits).toMatchObject({
      cpu: expect.any(String),
      memory: expect.any(String),
    });
    expect(container!.resources?.requests).toMatchObject({
      cpu: expect.any(String),
      memory: expect.any(String),
    });

    // bubblewrap needs user namespaces: seccomp and AppArmor must let unshare/clone through; no
    // capability and no privileged mode are needed.
    expect(container!.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'Unconfined' },
      appArmorProfile: { type: 'Unconfined' },
    });
    expect(container!.securityContext?.capabilities?.add).toBeUndefined();
    // Every writable path the server and its commands use is a volume (the root is read-only).
    const mounted = container!.volumeMounts!.map((candidate) => candidate.mountPath);
    expect(mounted).toEqual(expect.arrayContaining(['/workspace', '/tmp']));
  });

  test('the Service selects the pod and exposes the WebSocket port', () => {
    const [deployment, service] = manifests().map(
      (document) => document as { spec: Record<string, unknown> },
    );
    const selector = (service!.spec as { selector: Record<string, string> }).selector;
    const labels = (deployment!.spec as { template: { metadata: { labels: Record<string, string> } } })
      .template.metadata.labels;
    expect(labels).toMatchObject(selector);
    expect((service!.spec as { ports: unknown[] }).ports).toEqual([
      { name: 'ws', port: 7878, targetPort: 'ws', protocol: 'TCP' },
    ]);
  });
});

describe('Dockerfile', () => {
  const instructions = dockerInstructions();
  const stages = instructions.filter((instruction) => instruction.keyword === 'FROM');
  const runtimeStart = instructions.indexOf(stages.at(-1)!);
  const runtime = instructions.slice(runtimeStart);

  test('is multi-stage: a named build stage, and a runtime stage that copies from it', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const names = stages.map((stage) => /\bAS\s+(\S+)$/i.exec(stage.args)?.[1]);
    expect(names.every((name) => name !== undefined)).toBe(true);
    const copies = runtime.filter(
      (instruction) => instruction.keyword === 'COPY' && /--from=/.test(instruction.args),
    );
    expect(copies.map((copy) => /--from=(\S+)/.exec(copy.args)?.[1])).toEqual(
      expect.arrayContaining([names[0]]),
    );
    // The final stage does not carry the build toolchain: no pnpm install there.
    expect(runtime.some((instruction) => /pnpm install/.test(instruction.args))).toBe(false);
  });

  test('runs as a non-root USER, installs bubblewrap, has a HEALTHCHECK on /readyz and runs execd-server', () => {
    const users = runtime.filter((instruction) => instruction.keyword === 'USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)!.args).not.toMatch(/^(root|0)(:|$)/);
    expect(
      runtime.some((instruction) => instruction.keyword === 'RUN' && /\bbubblewrap\b/.test(instruction.args)),
    ).toBe(true);
    const healthchecks = runtime.filter((instruction) => instruction.keyword === 'HEALTHCHECK');
    expect(healthchecks).toHaveLength(1);
    expect(healthchecks[0]!.args).toMatch(/\/readyz/);
    const entrypoint = runtime.find((instruction) => instruction.keyword === 'ENTRYPOINT');
    expect(JSON.parse(entrypoint!.args)).toEqual(
      expect.arrayContaining(['/opt/execd/dist/cli/execd-server.js']),
    );
    const cmd = JSON.parse(runtime.find((instruction) => instruction.keyword === 'CMD')!.args) as string[];
    expect(cmd).toEqual(expect.arrayContaining(['--listen', '--auth-token-file', '--require-sandbox']));
    expect(
      runtime.some((instruction) => instruction.keyword === 'EXPOSE' && instruction.args === '7878'),
    ).toBe(true);
  });

  test('uses only known instructions', () => {
    const known = new Set([
      'FROM',
      'ARG',
      'ENV',
      'RUN',
      'COPY',
      'WORKDIR',
      'USER',
      'EXPOSE',
      'HEALTHCHECK',
      'ENTRYPOINT',
      'CMD',
      'LABEL',
    ]);
    expect(
      instructions.map((instruction) => instruction.keyword).filter((keyword) => !known.has(keyword)),
    ).toEqual([]);
  });
});
