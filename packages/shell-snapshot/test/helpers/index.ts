export { createEnv } from './create-env.ts';
export { type TempHome, tempHome } from './home.ts';
export { commandOf, type LaunchSpec, launch, SHELLS, systemLoginPath } from './launch.ts';
export { childPids, type LaunchOutput, processesMatching, runPipe, runTty, waitFor } from './processes.ts';
