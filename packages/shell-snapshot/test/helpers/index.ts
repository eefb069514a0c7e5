export { type TempHome, tempHome } from './home.ts';
export { commandOf, type LaunchSpec, launch, SHELLS, systemLoginPath } from './launch.ts';
export { type LaunchOutput, processesMatching, runPipe, runTty } from './processes.ts';
