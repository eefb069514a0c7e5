import { packageBuild } from '../../tsup.base.ts';

// Entries mirror the exports map one-to-one.
export default packageBuild({ index: 'src/index.ts' });
