import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { DEFAULT_CAPABILITIES, localEnvironmentInfo } from './environment-info.ts';
import { EXECD_PROVIDER_ID, EXECD_VERSION, platformOs } from './executor-identity.ts';

/** The capability flags Codex 0.169.0's exec-server reports, in its order (capture of a session). */
const ORIGINAL_CAPABILITIES = [
  'networkProxyLaunch',
  'networkProxyReviewDomains',
  'credentialMasking',
  'credentialMaskingCustomProviders',
  'capabilityDiscoverySandbox',
  'fsWatchMissing',
  'capabilityDiscoveryV2',
  'environmentConfigRead',
  'httpHeaderEnvVars',
  'sandboxedFileStreaming',
  'fileWriteStreaming',
  'shellSnapshotV2',
  'windowsMxc',
  'linuxRootWritePreservesDevices',
  'linuxApprovedRootWritePreservesRestrictions',
];

describe('environment/info', () => {
  test('every field the original sends, in its order', () => {
    const info = localEnvironmentInfo({
      env: { SHELL: '/bin/bash', HOME: '/home/u', TMPDIR: '/tmp/t' },
      cwd: '/work',
    });
    expect(Object.keys(info).slice(0, 10)).toEqual([
      'shell',
      'executorVersion',
      'providerId',
      'cwd',
      'userHomeDir',
      'platformOs',
      'prependPathDirs',
      'temporaryDirectories',
      'tempDir',
      'capabilities',
    ]);
    expect(info).toMatchObject({
      shell: { name: 'bash', path: '/bin/bash' },
      executorVersion: EXECD_VERSION,
      providerId: EXECD_PROVIDER_ID,
      cwd: 'file:///work',
      userHomeDir: 'file:///home/u',
      platformOs: platformOs(),
      prependPathDirs: [],
      temporaryDirectories: ['file:///tmp/t'],
      tempDir: 'file:///tmp/t',
    });
  });

  test('every capability of the original is an explicit boolean; only implemented ones are true', () => {
    const keys = Object.keys(DEFAULT_CAPABILITIES);
    expect(keys.slice(0, ORIGINAL_CAPABILITIES.length)).toEqual(ORIGINAL_CAPABILITIES);
    for (const key of ORIGINAL_CAPABILITIES)
      expect(typeof DEFAULT_CAPABILITIES[key as 'windowsMxc']).toBe('boolean');
    expect(DEFAULT_CAPABILITIES).toMatchObject({
      environmentConfigRead: true,
      httpHeaderEnvVars: true,
      windowsMxc: false,
      credentialMasking: false,
    });
  });

  test('the version is the package version; the provider id is a stable sha256', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(EXECD_VERSION).toBe(pkg.version);
    expect(EXECD_PROVIDER_ID).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(localEnvironmentInfo().providerId).toBe(localEnvironmentInfo({ cwd: '/' }).providerId);
  });

  test('platform names as the original', () => {
    expect(platformOs('linux')).toBe('linux');
    expect(platformOs('darwin')).toBe('macos');
    expect(platformOs('win32')).toBe('windows');
  });
});
