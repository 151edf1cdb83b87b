/**
 * Real receivers of the notifications, started on free ports of 127.0.0.1
 * and removed after: Debian's prometheus-alertmanager, and an SMTP server
 * (aiosmtpd, Debian's python3-aiosmtpd) that requires STARTTLS under the test
 * CA and parses each message back with Python's e-mail parser.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { tmpDir } from './run-cli.js';
import type { TestCerts } from '../fake/certs.js';

export const ALERTMANAGER = '/usr/bin/prometheus-alertmanager';
/** Debian's Python, with python3-aiosmtpd: a python3 earlier on PATH (pyenv) may not have it. */
const PYTHON = '/usr/bin/python3';

async function waitFor(check: () => Promise<boolean>, what: string, child: ChildProcess, log: () => string) {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}): ${log()}`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start: ${log()}`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export interface Alertmanager {
  readonly url: string;
  alerts(
    query?: string,
  ): Promise<Array<{ labels: Record<string, string>; endsAt: string; startsAt: string; status: { state: string } }>>;
  silence(matchers: Record<string, string>): Promise<void>;
  /** Alertmanager's own clock (its Date header): it keeps the machine's time when the suite runs under faketime. */
  now(): Promise<Date>;
  close(): Promise<void>;
}

export async function startAlertmanager(): Promise<Alertmanager> {
  const dir = tmpDir('svc-am-');
  const port = await freePort();
  const config = join(dir, 'alertmanager.yml');
  writeFileSync(config, "route:\n  receiver: 'none'\n  group_wait: 1h\nreceivers:\n  - name: 'none'\n");
  let log = '';
  const child = spawn(
    ALERTMANAGER,
    [
      `--config.file=${config}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await fetch(`${url}/-/ready`)).ok,
    'alertmanager',
    child,
    () => log,
  );
  const now = async () => new Date((await fetch(`${url}/-/ready`)).headers.get('date')!);
  return {
    url,
    now,
    alerts: async (query = '') => (await fetch(`${url}/api/v2/alerts${query}`)).json() as never,
    silence: async (matchers) => {
      const at = (await now()).getTime();
      const res = await fetch(`${url}/api/v2/silences`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          matchers: Object.entries(matchers).map(([name, value]) => ({ name, value, isRegex: false, isEqual: true })),
          startsAt: new Date(at - 60_000).toISOString(),
          endsAt: new Date(at + 3600_000).toISOString(),
          createdBy: 'svc-snapshot tests',
          comment: 'known',
        }),
      });
      if (!res.ok) throw new Error(`silence refused: ${res.status} ${await res.text()}`);
    },
    close: () => stop(child),
  };
}

const SMTP_SERVER = String.raw`
import asyncio, json, ssl, sys
from email import message_from_bytes
from email.policy import default
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult

cert, key, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# How this server misbehaves, for the tests of what a failure says (SmtpFailure).
fail = sys.argv[5] if len(sys.argv) > 5 else ""

class Handler:
    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        if fail == "sender":
            return "553 5.7.1 sender address rejected"
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if fail == "recipient":
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        msg = message_from_bytes(envelope.original_content, policy=default)
        parts = [{"type": p.get_content_type(), "content": p.get_content()} for p in msg.walk() if not p.is_multipart()]
        record = {
            "tls": session.ssl is not None,
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "headers": [[k, str(v)] for k, v in msg.items()],
            "subject": str(msg["subject"]),
            "parts": parts,
        }
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")
        return "250 OK"

class RefusingStarttls(SMTP):
    async def smtp_STARTTLS(self, arg):
        await self.push("454 4.7.0 TLS not available due to temporary reason")

class Server(Controller):
    def factory(self):
        if fail == "starttls-refused":
            return RefusingStarttls(self.handler, **self.SMTP_kwargs)
        return super().factory()

context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(cert, key)
kwargs = {"data_size_limit": 50 * 1024 * 1024}
if fail == "auth":
    kwargs["authenticator"] = lambda server, session, envelope, mechanism, data: AuthResult(success=False, handled=False)
no_tls = fail == "no-starttls"
controller = Server(Handler(), hostname="127.0.0.1", port=port, tls_context=None if no_tls else context,
                    require_starttls=not no_tls, server_kwargs=kwargs)
controller.start()
print("ready", flush=True)
sys.stdin.read()
controller.stop()
`;

export interface ReceivedMail {
  tls: boolean;
  mail_from: string;
  rcpt_tos: string[];
  headers: Array<[string, string]>;
  subject: string;
  parts: Array<{ type: string; content: string }>;
}

export interface SmtpReceiver {
  readonly port: number;
  received(): ReceivedMail[];
  close(): Promise<void>;
}

/**
 * How a receiver started for a failure misbehaves: it refuses the sender or
 * the recipient, any login, or STARTTLS (454), or offers no STARTTLS at all.
 */
export type SmtpFailure = 'sender' | 'recipient' | 'auth' | 'starttls-refused' | 'no-starttls';

export async function startSmtpReceiver(certs: TestCerts, failure?: SmtpFailure): Promise<SmtpReceiver> {
  const dir = tmpDir('svc-smtp-');
  const script = join(dir, 'server.py');
  writeFileSync(script, SMTP_SERVER);
  writeFileSync(join(dir, 'cert.pem'), certs.certPem, { mode: 0o600 });
  writeFileSync(join(dir, 'key.pem'), certs.keyPem, { mode: 0o600 });
  const out = join(dir, 'mail.jsonl');
  const port = await freePort();
  let log = '';
  const args = [script, join(dir, 'cert.pem'), join(dir, 'key.pem'), String(port), out, ...(failure ? [failure] : [])];
  const child = spawn(PYTHON, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let ready = false;
  child.stdout!.on('data', (c: Buffer) => (ready ||= c.toString().includes('ready')));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  await waitFor(
    async () => ready,
    'the SMTP receiver',
    child,
    () => log,
  );
  return {
    port,
    received: () =>
      existsSync(out)
        ? readFileSync(out, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as ReceivedMail)
        : [],
    close: async () => {
      child.stdin!.end();
      await stop(child);
    },
  };
}
