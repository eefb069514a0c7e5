import { packageBuild } from '../../tsup.base.ts';

// Entries mirror the exports map (and bin) one-to-one.
export default packageBuild({
  index: 'src/index.ts',
  'server/index': 'src/server/index.ts',
  'cli/execd-server': 'src/cli/execd-server.ts',
  launcher: 'src/cli/launcher-env.ts',
});
