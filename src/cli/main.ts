#!/usr/bin/env node
import { messageOf } from '../errors/index.js';
import { run } from './program.js';

// The only place that exits the process: everything else returns or throws.
run(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`checkout-kit: ${messageOf(error)}\n`);
    process.exitCode = 2;
  },
);
