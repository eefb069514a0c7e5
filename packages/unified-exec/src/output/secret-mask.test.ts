import { describe, expect, test } from 'vitest';
import { MIN_SECRET_VALUE_LENGTH, SecretMasker } from './secret-mask.ts';

// Built from parts so that no scanner mistakes this file for a leak.
const AWS_KEY_ID = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5'.repeat(3)}abcdef`;
const GITLAB_TOKEN = `glpat-${'x1Y2z3'.repeat(4)}`;
const OPENAI_KEY = `sk-proj-${'Ab12Cd34Ef'.repeat(4)}`;
const ANTHROPIC_KEY = `sk-ant-api03-${'Zz09Yy18Xx'.repeat(4)}`;
const SLACK_TOKEN = ['xoxb', '123456789012', '1234567890123', 'AbCdEfGhIjKlMnOpQrStUvWx'].join('-');
const JWT = [
  'eyJhbGciOiJIUzI1NiJ9',
  'eyJzdWIiOiIxMjM0NTY3ODkwIn0',
  'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
].join('.');
const PEM = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEowIBAAKCAQEA1234',
  'abcdEFGH5678==',
  '-----END RSA PRIVATE KEY-----',
].join('\r\n');

describe('SecretMasker', () => {
  const masker = new SecretMasker({ env: {} });

  test.each([
    ['aws-access-key-id', AWS_KEY_ID],
    ['github-token', GITHUB_TOKEN],
    ['gitlab-token', GITLAB_TOKEN],
    ['openai-api-key', OPENAI_KEY],
    ['anthropic-api-key', ANTHROPIC_KEY],
    ['slack-token', SLACK_TOKEN],
    ['jwt', JWT],
    ['private-key', PEM],
  ])('masks a %s and leaves the text around it alone', (kind, secret) => {
    const result = masker.mask(`before ${secret} after\nnext line`);
    expect(result).toEqual({ text: `before [redacted ${kind}] after\nnext line`, masked: 1 });
  });

  test('text without secrets comes back as the same string', () => {
    const text = 'commit 3f2a9c1d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f\nsk-short ghp_tooShort AKIA1234 eyJ.x.y\n';
    const result = masker.mask(text);
    expect(result.masked).toBe(0);
    expect(result.text).toBe(text);
  });

  test('values of secret variables are masked by name; ordinary and short values are not', () => {
    const env = {
      MY_API_TOKEN: 'tok-Quite-Long-Value-1',
      DB_PASSWORD: 'correct horse battery',
      SHORT_SECRET: 'x'.repeat(MIN_SECRET_VALUE_LENGTH - 1),
      GIT_AUTHOR_NAME: 'Ada Lovelace Esq.',
      HOME: '/home/somebody/long',
    };
    const withEnv = new SecretMasker({ env, credentialFormats: false });
    const text = `t=tok-Quite-Long-Value-1 p=correct horse battery s=${env.SHORT_SECRET} a=Ada Lovelace Esq. h=/home/somebody/long`;
    expect(withEnv.mask(text)).toEqual({
      text: `t=[redacted env:MY_API_TOKEN] p=[redacted env:DB_PASSWORD] s=${env.SHORT_SECRET} a=Ada Lovelace Esq. h=/home/somebody/long`,
      masked: 2,
    });
  });

  test('a value that contains another is masked whole; special characters are literal', () => {
    const withEnv = new SecretMasker({
      env: { OUTER_SECRET: 'abc.def+ghi(jkl)', INNER_KEY: 'def+ghi(' },
      credentialFormats: false,
    });
    expect(withEnv.mask('abc.def+ghi(jkl) and def+ghi( and abcXdef+ghi(jkl)')).toEqual({
      text: '[redacted env:OUTER_SECRET] and [redacted env:INNER_KEY] and abcX[redacted env:INNER_KEY]jkl)',
      masked: 3,
    });
  });

  test('multi-byte text around a secret keeps every character', () => {
    const text = `héllo → ${AWS_KEY_ID} ✓ 日本語`;
    expect(masker.mask(text).text).toBe('héllo → [redacted aws-access-key-id] ✓ 日本語');
  });
});
