import { describe, expect, test } from 'vitest';
import { renderState } from './render-state.ts';

const env = new Map<string, string>();

describe('renderState', () => {
  test('bash: safe options that are on, then aliases, functions last', () => {
    const options = [
      'set -o braceexpand',
      'set +o emacs',
      'set -o errexit',
      'set -o nounset',
      'set -o onecmd',
      'set -o xtrace',
      'set -o verbose',
      'set -o noexec',
      'set -o monitor',
      'set -o noclobber',
      'set -o pipefail',
    ].join('\n');
    const state = renderState('bash', {
      options,
      aliases: "alias ll='ls -l'\n",
      functions: 'unset () \n{ \n    :\n}\n',
      env,
    });
    expect(state).toBe(
      '# Snapshot file\nset -o braceexpand\nset -o noclobber\nset -o pipefail\n' +
        "alias ll='ls -l'\nunset () \n{ \n    :\n}\n",
    );
  });

  test('an empty capture is just the marker', () => {
    expect(renderState('bash', { options: '', aliases: '', functions: '', env })).toBe('# Snapshot file\n');
  });

  test('zsh: setopt lines without invocation or hazardous options; functions before aliases', () => {
    const state = renderState('zsh', {
      options:
        'extendedglob\nlogin\nnohashdirs\nerrexit\nerr_return\nnounset\nnoexec\nxtrace\nsinglecommand\nnorcs\n',
      aliases: 'alias zz=print\n',
      functions: 'zfn () {\n\tprint hi\n}\n',
      env,
    });
    expect(state).toBe(
      '# Snapshot file\nsetopt extendedglob\nsetopt nohashdirs\nzfn () {\n\tprint hi\n}\nalias zz=print\n',
    );
  });

  test('sh: dash alias output (no `alias` word, multi-line values) becomes alias commands', () => {
    const state = renderState('sh', {
      options: 'set -o noglob\nset +o errexit\nset -o interactive\n',
      aliases: "a='x y'\nb='it'\"'\"'s\ntwo'\nalias c='z'\n",
      functions: '',
      env,
    });
    expect(state).toBe(
      "# Snapshot file\nset -o noglob\nalias a='x y'\nalias b='it'\"'\"'s\ntwo'\nalias c='z'\n",
    );
  });
});
