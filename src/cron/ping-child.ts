/**
 * Sends one ping described on stdin and prints a warning, if any, on stdout.
 * Run by `sendPingSync` from a signal handler; not a public entry point.
 */
import { sendPing, type PingEvent } from './ping.js';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const { url, ca, timeoutMs, event } = JSON.parse(input) as {
  url: string;
  ca: string[] | null;
  timeoutMs: number;
  event: PingEvent;
};
const warning = await sendPing({ url, ca: ca ?? undefined, timeoutMs }, event);
if (warning) process.stdout.write(`${warning}\n`);
