import { useRemoteHarnesses } from './helpers/remote-server.ts';
import { defineBasicScenarios } from './scenarios/basic-scenarios.ts';
import { defineErrorScenarios } from './scenarios/error-scenarios.ts';
import { defineNetworkScenarios } from './scenarios/network-scenarios.ts';
import { defineOracleReplayScenarios } from './scenarios/oracle-replay-scenarios.ts';
import { defineSandboxScenarios } from './scenarios/sandbox-scenarios.ts';
import { defineSessionScenarios } from './scenarios/session-scenarios.ts';
import { defineSnapshotScenarios } from './scenarios/snapshot-scenarios.ts';
import { defineWorkdirScenarios } from './scenarios/workdir-scenarios.ts';

// Every scenario again, through an in-process exec-server on 127.0.0.1:0 and the client, with
// the same expectations as the local suite.
useRemoteHarnesses();

defineBasicScenarios('remote');
defineSessionScenarios('remote');
defineOracleReplayScenarios('remote');
defineSandboxScenarios('remote');
defineErrorScenarios('remote');
defineSnapshotScenarios('remote');
defineNetworkScenarios('remote');
defineWorkdirScenarios('remote');
