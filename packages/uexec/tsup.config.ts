import { packageBuild } from '../../tsup.base.ts';

// Entries mirror the exports map (and bin) one-to-one.
export default packageBuild({
  index: 'src/index.ts',
  'cli/uexec': 'src/cli/uexec.ts',
});
