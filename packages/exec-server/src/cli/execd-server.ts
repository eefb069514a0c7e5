#!/usr/bin/env node
process.stderr.write('not yet\n');
process.exit(1);
