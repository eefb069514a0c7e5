/**
 * The HTTP header an executor dialing out (`execd-server --connect … --environment-id ID`) sends
 * on its WebSocket upgrade, and by which the accepting host (`acceptExecServers`) routes it to an
 * environment. Lower-case, as Node reports request headers.
 */
export const ENVIRONMENT_ID_HEADER: string = 'x-execd-environment-id';
