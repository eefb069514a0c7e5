/**
 * Where a client is:
 * ```
 *  ready --transport lost--> recovering --resumed--> ready
 *    |                            \--deadline or fatal error--> failed
 *    \--close()--> closed  (from any state)
 * ```
 */
export type ClientState = 'ready' | 'recovering' | 'failed' | 'closed';
