/** True under `pnpm test:stress` (`EXECD_STRESS=full`): the suites run their full sizes. */
export const STRESS_FULL: boolean = process.env.EXECD_STRESS === 'full';

/** `full` under `pnpm test:stress`, else the reduced `reduced` that `npm test` runs. */
export function stressSize(reduced: number, full: number): number {
  return STRESS_FULL ? full : reduced;
}
