import { defineBasicScenarios } from './scenarios/basic-scenarios.ts';
import { defineErrorScenarios } from './scenarios/error-scenarios.ts';
import { defineNetworkScenarios } from './scenarios/network-scenarios.ts';
import { defineOracleReplayScenarios } from './scenarios/oracle-replay-scenarios.ts';
import { defineSandboxScenarios } from './scenarios/sandbox-scenarios.ts';
import { defineSessionScenarios } from './scenarios/session-scenarios.ts';
import { defineSnapshotScenarios } from './scenarios/snapshot-scenarios.ts';
import { defineWorkdirScenarios } from './scenarios/workdir-scenarios.ts';

// Every scenario against a local environment (direct spawn).
defineBasicScenarios('local');
defineSessionScenarios('local');
defineOracleReplayScenarios('local');
defineSandboxScenarios('local');
defineErrorScenarios('local');
defineSnapshotScenarios('local');
defineNetworkScenarios('local');
defineWorkdirScenarios('local');
