import { packageBuild } from '../../tsup.base.ts';

// Entries mirror the exports map one-to-one, plus the bridge, which runs as its own process
// (`node dist/bridge.js '<config>'`) and is not exported.
export default packageBuild(
  {
    index: 'src/index.ts',
    bridge: 'src/bridge/bridge-main.ts',
  },
  {
    dts: { entry: { index: 'src/index.ts' } },
    // One self-contained file per entry: the bridge process loads nothing but bridge.js.
    splitting: false,
  },
);
