// Environments: where commands run (this machine or a remote exec-server), held by id.

export { type Environment, LOCAL_ENVIRONMENT_ID } from './environment.ts';
export { EnvironmentManager } from './environment-manager.ts';
export { LocalEnvironment, type LocalEnvironmentOptions } from './local-environment.ts';
export { RemoteEnvironment } from './remote-environment.ts';
