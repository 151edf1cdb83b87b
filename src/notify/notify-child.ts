/**
 * Sends one digest described on stdin and prints a ChildResult on stdout.
 * Run by `notifyRunSync` from a signal handler; not a public entry point.
 */
import { notifyRun, type NotifySettings } from './index.js';
import type { RunNotice } from './digest.js';
import type { ChildResult } from './signal.js';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const { notice, settings, now } = JSON.parse(input) as { notice: RunNotice; settings: NotifySettings; now: string };
const result: ChildResult = { results: await notifyRun(notice, settings, new Date(now)) };
process.stdout.write(JSON.stringify(result));
