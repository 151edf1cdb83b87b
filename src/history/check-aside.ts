/**
 * The checks of an export file that do not decide what is stored, on the
 * second core: that its records are in the export order and, for a first
 * load, that each is laid out exactly as the writer writes it (parsing and
 * stringifying every record again, about as long as SQLite takes to store
 * them). They run in a worker thread (lib/history-check.js beside the bundle)
 * while the main thread stores the records; the load awaits the answer before
 * it commits, so a file that fails them leaves nothing behind.
 *
 * Run from the TypeScript sources (the tests that call the commands in
 * process) there is no built worker: the same function runs on the main
 * thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CheckReply, CheckRequest } from './check-worker.js';
import { fileProblem, type FileProblem } from './texts.js';
import { movable } from '../util/movable.js';

const WORKER_FILE = new URL('./history-check.js', import.meta.url);
const FROM_SOURCES = import.meta.url.endsWith('.ts');

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, { resolve: (problem: FileProblem | undefined) => void; reject: (err: Error) => void }>();

function startWorker(): Worker {
  const path = fileURLToPath(WORKER_FILE);
  // The bundle and its worker are built together (npm run build): a lib/ without it is a broken build, said as such.
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm run build`);
  const w = new Worker(path);
  const failAll = (err: Error) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
    if (worker === w) worker = undefined;
  };
  w.on('message', (reply: CheckReply) => {
    const p = pending.get(reply.id);
    pending.delete(reply.id);
    // Idle, it does not keep the process alive.
    if (pending.size === 0) w.unref();
    p?.resolve(reply.problem ?? undefined);
  });
  w.on('error', (err) => failAll(new Error(`the export file check stopped: ${err.message}`)));
  w.on('exit', (code) => failAll(new Error(`the export file check stopped (exit ${code})`)));
  return w;
}

/**
 * What keeps the file (its bytes, valid UTF-8) from coming back byte for byte,
 * if anything; answered by the worker. The bytes are moved to the worker when
 * they fill their own memory, so a large file is not held twice: the caller
 * must not use them afterwards.
 */
export function fileProblemAside(bytes: Buffer, key: readonly string[], layout: boolean): Promise<FileProblem | undefined> {
  if (FROM_SOURCES) return Promise.resolve().then(() => fileProblem(bytes, key, layout));
  worker ??= startWorker();
  const id = nextId++;
  const w = worker;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    const buffer = movable(bytes);
    const req: CheckRequest = { id, bytes: buffer, length: bytes.byteLength, key: [...key], layout };
    w.postMessage(req, [buffer]);
  });
}
