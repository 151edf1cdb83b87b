#!/usr/bin/env node
import { main } from '../lib/main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = 1;
  },
);
