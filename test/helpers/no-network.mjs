// Preloaded with --import into a child process: any attempt to open a socket
// (TCP, TLS, a proxy) throws and is recorded in $SVC_TEST_NETLOG.
import net from 'node:net';
import { appendFileSync } from 'node:fs';

const original = net.Socket.prototype.connect;
net.Socket.prototype.connect = function connect(...args) {
  if (process.env.SVC_TEST_NETLOG) appendFileSync(process.env.SVC_TEST_NETLOG, `connect ${JSON.stringify(args[0])}\n`);
  throw new Error('network access is disabled in this test');
};
void original;
