// The credential-name lists of the child environment policy (spec §7): `createEnv` applies them
// to every child's environment (exec-server, unified-exec) and to every captured shell's
// (shell-snapshot), so both lose the same names.

/**
 * Patterns removed from an inherited environment unless the policy sets `ignoreDefaultExcludes`
 * (case-insensitive `*`/`?` wildcards): the usual shapes of credential names, so that a child
 * never sees them by default. `*KEY*`, `*SECRET*`, `*TOKEN*` are the original's; the rest close
 * names it let through: `DB_PASSWORD`, `PGPASSWORD`, `MYSQL_PWD`-style `*PASSWD*`, `*_CREDENTIALS`,
 * `NPM_CONFIG__AUTH`, `*_COOKIE`, `*SESSION*` (`AWS_SESSION_*`, session ids), `GITHUB_PAT`,
 * `SENTRY_DSN`, `DATABASE_URL` (which embeds a password).
 *
 * Wide on purpose; the names they would catch that hold no secret and that ordinary commands
 * rely on are kept ({@link DEFAULT_EXCLUDE_EXCEPTIONS}). A caller that needs another passes it
 * in the policy's `set` or the request's `env` (never filtered by these), or replaces the list
 * (the exec-server's `defaultEnvExcludes`).
 */
export const DEFAULT_EXCLUDE_PATTERNS: readonly string[] = Object.freeze([
  '*KEY*',
  '*SECRET*',
  '*TOKEN*',
  '*PASSWORD*',
  '*PASSWD*',
  '*CREDENTIAL*',
  '*AUTH*',
  '*COOKIE*',
  '*SESSION*',
  '*_PAT',
  '*DSN*',
  'DATABASE_URL',
]);

/**
 * Names the default excludes match that are not credentials and that commands need: git's
 * identity (`GIT_AUTHOR_*`, `GIT_COMMITTER_*` via `*AUTH*`... and `*SESSION*`), the ssh agent's
 * socket path (the original passes it; reaching the socket is the sandbox's business), X and
 * D-Bus session plumbing. Compared case-insensitively; only the default excludes honour them
 * (a policy's own `exclude` removes them as asked).
 */
export const DEFAULT_EXCLUDE_EXCEPTIONS: readonly string[] = Object.freeze([
  'SSH_AUTH_SOCK',
  'XAUTHORITY',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'DBUS_SESSION_BUS_ADDRESS',
  'DESKTOP_SESSION',
  'SESSION_MANAGER',
  'XDG_SESSION_ID',
  'XDG_SESSION_TYPE',
  'XDG_SESSION_CLASS',
  'XDG_SESSION_DESKTOP',
  'XDG_SESSION_PATH',
  'XDG_SESSION_SEAT',
]);

const EXCEPTION_NAMES = new Set(DEFAULT_EXCLUDE_EXCEPTIONS.map((name) => name.toUpperCase()));

/** True when the default excludes must keep `name` (see {@link DEFAULT_EXCLUDE_EXCEPTIONS}). */
export function isDefaultExcludeException(name: string): boolean {
  return EXCEPTION_NAMES.has(name.toUpperCase());
}

/**
 * Names never passed to a child, whatever the policy says (compared case-insensitively): the
 * executor's own credentials, which a command must not be able to reuse.
 */
export const NON_INHERITABLE_ENV_VARS: readonly string[] = Object.freeze([
  'CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN',
  'NODE_REPL_AUTH_TOKEN',
  'OPENAI_FEDERATION_RULE_ID',
  'OPENAI_IDENTITY_TOKEN_FILE',
  'OPENAI_WORKLOAD_IDENTITY_CONTEXT',
]);

const NON_INHERITABLE_NAMES = new Set(NON_INHERITABLE_ENV_VARS.map((name) => name.toUpperCase()));

/** True when `name` must never reach a child: a case-insensitive match of `NON_INHERITABLE_ENV_VARS`. */
export function isNonInheritableEnvVar(name: string): boolean {
  return NON_INHERITABLE_NAMES.has(name.toUpperCase());
}
