/**
 * The build on every core: the catalog's independent parts (buildParts) are
 * built in a pool of worker threads (lib/build-worker.js beside the bundle),
 * the largest first, each worker one part at a time, so that only as many
 * routes are parsed at once as there are workers. Each part's bodies are
 * moved to its worker (or, read back from disk and large, read there); each
 * export comes back as its file's bytes, written by the caller as they
 * arrive. The files are byte for byte those of build(): each part is
 * build(collection, memory, part) in the worker, and the reports are merged
 * in catalog order.
 *
 * Run from the TypeScript sources (the tests that call the commands in
 * process) there is no built worker: the caller builds on the main thread.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RawCollection } from '../collect/types.js';
import { FailedError } from '../errors.js';
import { buildParts, type BuildSummary } from './build.js';
import { movable, type PartBody, type PartMessage, type PartTask } from './build-worker.js';
import { CollectionReader, mergeLoadReports } from './load.js';
import type { MemoryPolicy } from './memory-policy.js';
import type { NullField } from './types.js';

const WORKER_FILE = new URL('./build-worker.js', import.meta.url);

/**
 * Body bytes of the parts in flight at once, as a share of the collection's
 * (or the largest part's, when that is more): a part holds about three times
 * its bytes while it is built, so this keeps the peak within 2.5× the
 * collection whatever the number of workers.
 */
const IN_FLIGHT_SHARE = 0.4;

/**
 * Each worker's young generation: smaller than V8's default, so that two
 * workers' nurseries do not add some 60 MB to the peak (large site: about
 * 370 MB → 320 MB, no slower; README, Performance).
 */
const YOUNG_GENERATION_MB = 16;

/** Whether a pool can be started: only from the built bundle, which has the worker beside it. */
export const POOL_AVAILABLE = !import.meta.url.endsWith('.ts');

/** Workers when --build-threads is not given: one per core, at most 4 (each holds a route's records at a time). */
export function defaultBuildThreads(): number {
  return Math.min(availableParallelism(), 4);
}

/**
 * The worker's file, there to be started. The bundle and its worker are built
 * together (npm run build): a lib/ without it is a broken build, said as such
 * before anything is read.
 */
export function checkBuildWorker(): string {
  const file = fileURLToPath(WORKER_FILE);
  if (!existsSync(file)) throw new FailedError(`${file} is missing: run npm run build, or pass --build-threads 0; nothing was published`);
  return file;
}

/** One export from a worker: what the manifest says of it, and its file's bytes as they arrive. */
export interface PooledExport {
  readonly index: number;
  readonly export: string;
  readonly available: boolean;
  readonly reason?: string;
  readonly proposedRoute?: string;
  readonly count: number;
  readonly nullFields: NullField[];
  /** Iterate it to its end before asking for the next export. */
  readonly chunks: AsyncIterable<Uint8Array>;
}

/** A queue read by one async iteration; what is pushed before a reader waits is kept. */
class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;

  push(v: T): void {
    this.items.push(v);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  fail(err: Error): void {
    this.error ??= err;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.error) throw this.error;
      if (this.items.length > 0) {
        yield this.items.shift()!;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

/**
 * The exports as the workers finish them (in no fixed order; each with its
 * catalog position), and, as the generator's return value, the summary of
 * the whole build. With the memory policy's consumeBodies, each body is
 * moved out of the collection when its part starts; otherwise copied.
 */
export async function* buildInWorkers(collection: RawCollection, memory: MemoryPolicy, threads: number): AsyncGenerator<PooledExport, BuildSummary, void> {
  const file = checkBuildWorker();
  const reader = new CollectionReader(collection, false);
  const parts = buildParts()
    .map((part) => ({ part, labels: part.routes.flatMap((r) => reader.labelsOf(r)), bytes: part.routes.reduce((n, r) => n + reader.bytes(r), 0) }))
    .sort((a, b) => b.bytes - a.bytes);
  const exports = new Channel<PooledExport>();
  const files = new Map<string, Channel<Uint8Array>>();
  const reports: BuildSummary[] = [];
  const nullFields: NullField[][] = [];
  const workers = new Set<Worker>();
  let failure: Error | undefined;

  const fail = (err: Error) => {
    failure ??= err;
    for (const c of files.values()) c.fail(failure);
    exports.fail(failure);
    for (const w of workers) void w.terminate();
    workers.clear();
  };

  const total = parts.reduce((n, p) => n + p.bytes, 0);
  const budget = Math.max(parts[0]?.bytes ?? 0, IN_FLIGHT_SHARE * total);
  const pending = parts.map((_, i) => i);
  const inFlight = new Map<Worker, number>();
  const idle: Worker[] = [];
  let flying = 0;

  /** The largest pending part that fits in the budget beside those in flight (any, when none is). */
  const nextPart = (): number | undefined => {
    const at = pending.findIndex((i) => flying === 0 || flying + parts[i]!.bytes <= budget);
    return at < 0 ? undefined : pending.splice(at, 1)[0];
  };

  /** Gives idle workers parts while some fit; ends the exports when every part is done. */
  const dispatchIdle = () => {
    while (idle.length > 0) {
      const id = nextPart();
      if (id === undefined) break;
      dispatch(idle.pop()!, id);
    }
    if (pending.length === 0 && inFlight.size === 0) {
      for (const w of workers) void w.terminate();
      workers.clear();
      exports.end();
    }
  };

  const dispatch = (w: Worker, id: number): void => {
    const { part, labels, bytes: partBytes } = parts[id]!;
    inFlight.set(w, partBytes);
    flying += partBytes;
    const bodies: PartBody[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const label of labels) {
      const body = collection.bodies.get(label);
      if (body === undefined) continue;
      if (Buffer.isBuffer(body)) {
        const bytes = memory.consumeBodies ? movable(body) : new Uint8Array(body).buffer;
        bodies.push({ label, bytes, length: body.byteLength });
        transfer.push(bytes);
      } else {
        bodies.push({ label, file: { dir: body.dir, name: body.name, size: body.size, sha256: body.sha256 } });
      }
      if (memory.consumeBodies) collection.bodies.delete(label);
    }
    const task: PartTask = { id, manifest: collection.manifest, part, bodies };
    w.postMessage(task, transfer);
  };

  const onMessage = (w: Worker, m: PartMessage) => {
    if (failure) return;
    const key = `${m.id}:${'index' in m ? m.index : ''}`;
    switch (m.type) {
      case 'export': {
        const chunks = new Channel<Uint8Array>();
        files.set(key, chunks);
        nullFields[m.index] = m.nullFields;
        const { type: _t, id: _i, ...rest } = m;
        exports.push({ ...rest, chunks });
        break;
      }
      case 'chunk':
        files.get(key)?.push(Buffer.from(m.bytes, 0, m.length));
        break;
      case 'end':
        files.get(key)?.end();
        files.delete(key);
        break;
      case 'done':
        reports.push(m.summary);
        flying -= inFlight.get(w) ?? 0;
        inFlight.delete(w);
        idle.push(w);
        dispatchIdle();
        break;
      case 'error':
        fail(m.failed ? new FailedError(m.message) : new Error(`the export build failed: ${m.message}`));
        break;
    }
  };

  const count = Math.max(1, Math.min(threads, parts.length));
  try {
    for (let i = 0; i < count; i++) {
      const w = new Worker(file, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
      workers.add(w);
      w.on('message', (m: PartMessage) => onMessage(w, m));
      w.on('error', (err) => fail(new Error(`the export build stopped: ${err.message}`)));
      w.on('exit', (code) => {
        if (workers.has(w)) fail(new Error(`the export build stopped (exit ${code})`));
      });
      idle.push(w);
    }
    dispatchIdle();
    yield* exports;
  } finally {
    for (const w of workers) void w.terminate();
    workers.clear();
  }
  const merged = mergeLoadReports(reports, reader.labels());
  return { nullFields: nullFields.flat(), ...merged };
}
