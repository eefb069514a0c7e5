// Writes schema/protocol.schema.json from the built package (`pnpm --filter @execd/protocol
// gen:schema` builds first and formats the file after, as biome would). test/json-schema.test.ts
// fails when the checked-in file is stale.
import { writeFile } from 'node:fs/promises';
import * as protocol from '../dist/index.js';
import { buildProtocolJsonSchema, SCHEMA_FILE } from './json-schema.mjs';

const target = new URL(`../${SCHEMA_FILE}`, import.meta.url);
await writeFile(target, `${JSON.stringify(buildProtocolJsonSchema(protocol), null, 2)}\n`);
process.stdout.write(`wrote ${target.pathname}\n`);
