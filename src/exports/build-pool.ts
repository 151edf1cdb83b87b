/**
 * The build on worker threads (--build-threads): the catalog's independent
 * parts (buildParts) are built in a pool of workers (lib/build-worker.js
 * beside the bundle), the largest first, each worker one part at a time;
 * for a whole collection (buildInWorkers) the main thread builds parts too.
 * Each part's bodies are moved to its worker (or, left on disk, read there);
 * each export comes back as its file's bytes, written by the caller as they
 * arrive. The files are byte for byte those of build(): each part is
 * build(collection, memory, part), in a worker or on the main thread, and
 * the reports are merged in catalog order.
 *
 * Run from the TypeScript sources (the tests that call the commands in
 * process) there is no built worker: the caller builds on the main thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RawCollection } from '../collect/types.js';
import { FailedError } from '../errors.js';
import { planRoutes } from '../api/catalog.js';
import type { RouteRecord } from '../api/route-record.js';
import { BodyFile, type Body } from '../collect/body-file.js';
import type { CollectionManifest } from '../collect/manifest.js';
import { build, buildParts, type BuildPart, type BuildSummary, type BuiltExport, type ExportHead } from './build.js';
import type { PartBody, PartMessage, PartTask } from './build-worker.js';
import { OFFER_TASKS, type PartOffer } from './part-offer.js';
import { claim, FREE, TAKEN_BY_MAIN, TAKEN_BY_WORKER } from '../util/claims.js';
import { movable } from '../util/movable.js';
import { Channel } from '../util/channel.js';
import { CollectionReader, mergeLoadReports } from './load.js';
import type { MemoryPolicy } from './memory-policy.js';
import { backendRelease, type BackendRelease } from './release.js';
import type { NullField } from './types.js';

const WORKER_FILE = new URL('./build-worker.js', import.meta.url);

/**
 * Body bytes of the parts in flight at once, as a share of the body bytes
 * submitted so far (one part is always let through, whatever its size): a
 * part holds several times its bytes while it is built. Tuned on 2 cores:
 * two workers then peak at about 2.3× the collection on a replay.
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

/**
 * The worker's file, there to be started. The bundle and its worker are built
 * together (npm run build): a lib/ without it is a broken build, said as such
 * before anything is read.
 */
export function checkBuildWorker(): string {
  return checkWorkerFile(WORKER_FILE);
}

/** A worker's file beside the bundle, or the failure that says the build is broken. */
export function checkWorkerFile(url: URL): string {
  const file = fileURLToPath(url);
  if (!existsSync(file)) throw new FailedError(`${file} is missing: run npm run build, or pass --build-threads 0; nothing was published`);
  return file;
}

/** One export from a worker: what the manifest says of it, and its file's bytes as they arrive. */
export interface PooledExport extends ExportHead {
  /** Iterate it to its end before asking for the next export. */
  readonly chunks: AsyncIterable<Uint8Array>;
}

function bodyBytes(bodies: ReadonlyMap<string, Body>): number {
  let bytes = 0;
  for (const b of bodies.values()) bytes += Buffer.isBuffer(b) ? b.byteLength : b.size;
  return bytes;
}

/** A part ready to be built: its bodies (moved out of the collection when consumed), and the manifest's word on them. */
interface ReadyPart {
  readonly part: BuildPart;
  readonly manifest: CollectionManifest;
  readonly bodies: ReadonlyMap<string, Body>;
  readonly bytes: number;
}

/** What the pool leaves once every export was taken: each part's report, and each export's nulls by release (poolSummary picks them). */
export interface PoolOutcome {
  readonly reports: readonly BuildSummary[];
  /** By export position; for a part built without the whole collection in view, every release (the release is picked once all routes are in). */
  readonly nullFields: ReadonlyArray<Readonly<Partial<Record<BackendRelease, NullField[]>>>>;
}

/**
 * Worker threads building the parts they are given (`submit`), the largest
 * ready part first, with at most IN_FLIGHT_SHARE of the body bytes seen so
 * far in flight (or one part, whatever its size). `exports` yields each export as its worker finishes it (in no
 * fixed order; each with its catalog position), until `close` was called and
 * every part is built; its return value is what poolSummary merges.
 */
export class BuildPool {
  readonly exports: AsyncGenerator<PooledExport, PoolOutcome, void>;
  private readonly file: string;
  private readonly queue = new Channel<PooledExport>();
  private readonly files = new Map<string, Channel<Uint8Array>>();
  private readonly reports: BuildSummary[] = [];
  private readonly nullFields: Array<Record<BackendRelease, NullField[]>> = [];
  private readonly workers = new Set<Worker>();
  private readonly idle: Worker[] = [];
  private readonly ready: ReadyPart[] = [];
  private readonly inFlight = new Map<Worker, number>();
  private flying = 0;
  private seen = 0;
  private nextId = 0;
  private closed = false;
  private failure: Error | undefined;
  /** Parts offered to every worker at once (`offer`), with the claims shared with them. */
  private offered: { readonly parts: Array<ReadyPart | undefined>; readonly state: Int32Array; readonly done: Set<number> } | undefined;

  constructor(
    threads: number,
    /** Whether the bodies submitted may be moved to the workers (the memory policy's consumeBodies); otherwise copied. */
    private readonly consume: boolean,
  ) {
    this.file = checkBuildWorker();
    for (let i = 0; i < Math.max(1, threads); i++) {
      const w = new Worker(this.file, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
      this.workers.add(w);
      w.on('message', (m: PartMessage) => this.onMessage(w, m));
      w.on('error', (err) => this.abort(new Error(`the export build stopped: ${err.message}`)));
      w.on('exit', (code) => {
        if (this.workers.has(w)) this.abort(new Error(`the export build stopped (exit ${code})`));
      });
      this.idle.push(w);
    }
    this.exports = this.run();
  }

  /** A part whose routes are all in: built as soon as a worker is free and the budget allows. */
  submit(part: BuildPart, manifest: CollectionManifest, bodies: ReadonlyMap<string, Body>, bytes = bodyBytes(bodies)): void {
    this.seen += bytes;
    const at = this.ready.findIndex((r) => r.bytes < bytes);
    this.ready.splice(at < 0 ? this.ready.length : at, 0, { part, manifest, bodies, bytes });
    this.dispatchIdle();
  }

  /**
   * Every part at once, for the workers to claim one after another as they
   * are free, without waiting for the main thread (which takes its own with
   * takeLargest); the in-memory bodies are copied into memory they all
   * share. Instead of submit and close, for a collection that is all there.
   */
  offer(parts: ReadonlyArray<{ part: BuildPart; bodies: ReadonlyMap<string, Body>; bytes: number }>, manifest: CollectionManifest): void {
    const sorted = [...parts].sort((a, b) => b.bytes - a.bytes);
    const state = new Int32Array(new SharedArrayBuffer(4 * (OFFER_TASKS + sorted.length)));
    const ready: ReadyPart[] = [];
    const tasks: Array<PartTask & { kb: number }> = [];
    sorted.forEach(({ part, bodies, bytes }, id) => {
      const shared = new Map<string, Body>();
      const described: PartBody[] = [];
      for (const [label, body] of bodies) {
        if (Buffer.isBuffer(body)) {
          const memory = new SharedArrayBuffer(body.byteLength);
          const copy = Buffer.from(memory, 0, body.byteLength);
          body.copy(copy);
          shared.set(label, copy);
          described.push({ label, shared: memory, length: body.byteLength });
        } else {
          shared.set(label, body);
          described.push({ label, file: { dir: body.dir, name: body.name, size: body.size, sha256: body.sha256 } });
        }
      }
      ready.push({ part, manifest, bodies: shared, bytes });
      tasks.push({ id, manifest, part, bodies: described, kb: Math.ceil(bytes / 1024) });
    });
    this.offered = { parts: ready, state, done: new Set() };
    this.closed = true;
    const seenKb = tasks.reduce((sum, t) => sum + t.kb, 0);
    const message: PartOffer = { type: 'offer', state: state.buffer as SharedArrayBuffer, budgetKb: Math.floor(IN_FLIGHT_SHARE * seenKb), tasks };
    for (const w of this.workers) w.postMessage(message);
    this.idle.length = 0;
    // Nothing offered: nothing to wait for.
    this.endOffered(this.offered);
  }

  /** The largest part no worker has taken yet, for the main thread to build; undefined when none is left (or the build failed). */
  takeLargest(): ReadyPart | undefined {
    if (this.failure) return undefined;
    if (this.offered) return this.takeOffered(this.offered);
    const r = this.ready.shift();
    // Taking the last part may be what ends the workers' exports.
    this.dispatchIdle();
    return r;
  }

  private takeOffered(o: NonNullable<BuildPool['offered']>): ReadyPart | undefined {
    for (let i = 0; i < o.parts.length; i++) {
      if (!claim(o.state, OFFER_TASKS + i, TAKEN_BY_MAIN)) continue;
      const r = o.parts[i];
      o.parts[i] = undefined;
      return r;
    }
    this.endOffered(o);
    return undefined;
  }

  /** Ends the workers' exports once every offered part is taken and each one a worker took is done. */
  private endOffered(o: NonNullable<BuildPool['offered']>): void {
    for (let i = 0; i < o.parts.length; i++) {
      const who = Atomics.load(o.state, OFFER_TASKS + i);
      if (who === FREE || (who === TAKEN_BY_WORKER && !o.done.has(i))) return;
    }
    this.terminate();
    this.queue.end();
  }

  /** Throws the failure that stopped the workers, if one did. */
  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  /** No part comes after those submitted. */
  close(): void {
    this.closed = true;
    this.dispatchIdle();
  }


  /** Stops every worker; what was not taken is dropped. */
  terminate(): void {
    for (const w of this.workers) void w.terminate();
    this.workers.clear();
  }

  private async *run(): AsyncGenerator<PooledExport, PoolOutcome, void> {
    try {
      yield* this.queue;
    } finally {
      this.terminate();
    }
    return { reports: this.reports, nullFields: this.nullFields };
  }

  /** Stops every worker and fails what is still to come of the exports with `err` (a failed run); the first failure is kept. */
  abort(err: Error): void {
    this.failure ??= err;
    for (const c of this.files.values()) c.fail(this.failure);
    this.queue.fail(this.failure);
    this.terminate();
  }

  /** Gives idle workers the largest ready parts that fit; ends the exports when every part is done. */
  private dispatchIdle(): void {
    if (this.failure || this.offered) return;
    const budget = IN_FLIGHT_SHARE * this.seen;
    while (this.idle.length > 0) {
      const at = this.ready.findIndex((r) => this.flying === 0 || this.flying + r.bytes <= budget);
      if (at < 0) break;
      this.dispatch(this.idle.pop()!, this.ready.splice(at, 1)[0]!);
    }
    if (this.closed && this.ready.length === 0 && this.inFlight.size === 0) {
      this.terminate();
      this.queue.end();
    }
  }

  private dispatch(w: Worker, r: ReadyPart): void {
    this.inFlight.set(w, r.bytes);
    this.flying += r.bytes;
    const bodies: PartBody[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const [label, body] of r.bodies) {
      if (Buffer.isBuffer(body)) {
        const bytes = this.consume ? movable(body) : new Uint8Array(body).buffer;
        bodies.push({ label, bytes, length: body.byteLength });
        transfer.push(bytes);
      } else {
        bodies.push({ label, file: { dir: body.dir, name: body.name, size: body.size, sha256: body.sha256 } });
      }
    }
    const task: PartTask = { id: this.nextId++, manifest: r.manifest, part: r.part, bodies };
    w.postMessage(task, transfer);
  }

  private onMessage(w: Worker, m: PartMessage): void {
    if (this.failure) return;
    const key = `${m.id}:${'index' in m ? m.index : ''}`;
    switch (m.type) {
      case 'export': {
        const chunks = new Channel<Uint8Array>();
        this.files.set(key, chunks);
        const { type: _t, id: _i, nullFields, ...rest } = m;
        this.nullFields[m.index] = nullFields;
        this.queue.push({ ...rest, chunks });
        break;
      }
      case 'chunk':
        this.files.get(key)?.push(Buffer.from(m.bytes, 0, m.length));
        break;
      case 'end':
        this.files.get(key)?.end();
        this.files.delete(key);
        break;
      case 'done':
        this.reports.push(m.summary);
        if (this.offered) {
          this.offered.done.add(m.id);
          // The main thread's copy of what a worker built is no longer needed.
          this.offered.parts[m.id] = undefined;
          this.endOffered(this.offered);
          break;
        }
        this.flying -= this.inFlight.get(w) ?? 0;
        this.inFlight.delete(w);
        this.idle.push(w);
        this.dispatchIdle();
        break;
      case 'error':
        this.abort(m.failed ? new FailedError(m.message) : new Error(`the export build failed: ${m.message}`));
        break;
    }
  }
}

/** The build's summary from the pool's outcome, once the whole collection (its final manifest) is known. */
export function poolSummary(outcome: PoolOutcome, collection: RawCollection): BuildSummary {
  const release = backendRelease(collection.manifest.routes);
  const merged = mergeLoadReports(outcome.reports, new CollectionReader(collection, false).labels());
  return { nullFields: outcome.nullFields.flatMap((n) => n?.[release] ?? []), ...merged };
}

/** The parts of a collection whose bodies are all there: each with its bodies, taken out of the collection when `consume`. */
export function collectionParts(collection: RawCollection, consume: boolean): Array<{ part: BuildPart; bodies: Map<string, Body> }> {
  const reader = new CollectionReader(collection, false);
  return buildParts().map((part) => {
    const bodies = new Map<string, Body>();
    for (const label of part.routes.flatMap((r) => reader.labelsOf(r))) {
      const body = collection.bodies.get(label);
      if (body === undefined) continue;
      bodies.set(label, body);
      if (consume) collection.bodies.delete(label);
    }
    return { part, bodies };
  });
}

/**
 * The exports of a collection that is all there (a replay, or a live run
 * with --raw), built on the main thread and `threads` workers at once; as
 * the generator's return value, the summary of the whole build. The largest
 * part goes to the main thread (no start-up, the default young generation:
 * the fastest builder), the next ones to the workers; each time the main
 * thread has written its part, it takes the largest part no worker has
 * taken yet. Workers' exports wait until then (their file bytes, in memory).
 * With the memory policy's consumeBodies, each body is moved out of the
 * collection; otherwise copied.
 */
export async function* buildInWorkers(collection: RawCollection, memory: MemoryPolicy, threads: number): AsyncGenerator<PooledExport | BuiltExport, BuildSummary, void> {
  const pool = new BuildPool(threads, memory.consumeBodies);
  const release = backendRelease(collection.manifest.routes);
  const localReports: BuildSummary[] = [];
  const nullFields: Array<Readonly<Partial<Record<BackendRelease, NullField[]>>>> = [];
  let finished = false;
  try {
    // Largest first: a part handed out before the rest are submitted is then the one that would be chosen anyway.
    const parts = collectionParts(collection, memory.consumeBodies)
      .map((p) => ({ ...p, bytes: bodyBytes(p.bodies) }))
      .sort((a, b) => b.bytes - a.bytes);
    const first = parts.shift();
    // Handed over whole: what is in memory is then only the offer's shared copy.
    pool.offer(parts.splice(0), collection.manifest);
    for (let mine: { part: BuildPart; bodies: ReadonlyMap<string, Body> } | undefined = first; mine; mine = pool.takeLargest()) {
      const built = build({ manifest: collection.manifest, bodies: new Map(mine.bodies) }, memory, mine.part);
      let step = built.next();
      for (; !step.done; step = built.next()) {
        yield step.value;
        // The collection is whole: its release is known, and these nulls are for it.
        nullFields[step.value.index] = { [release]: step.value.nullFields };
        pool.throwIfFailed();
      }
      localReports.push(step.value);
    }
    const outcome = yield* pool.exports;
    outcome.nullFields.forEach((n, i) => (nullFields[i] = n));
    finished = true;
    return poolSummary({ reports: [...outcome.reports, ...localReports], nullFields }, collection);
  } catch (err) {
    pool.abort(err instanceof Error ? err : new Error(String(err)));
    throw err;
  } finally {
    // Stopped early (its consumer could not write a file): the workers must not outlive the run.
    if (!finished) pool.terminate();
  }
}

/** Where a live run puts each body it takes until its part is built: a directory inside the staging directory, removed before publishing. */
export interface BodySpool {
  readonly dir: string;
  /** Writes the file `name` inside `dir`. */
  write(name: string, bytes: Buffer): Promise<void>;
}

/**
 * A live collection's parts handed to the pool as their routes arrive
 * (collect's onRoute), so that the build runs beside the downloads: a part
 * is submitted once every route it reads is in, with the manifest's records
 * of those routes and of the realms route. Each body taken is written to the
 * spool and dropped from memory; the worker reads the file back, checking
 * its size and sha256. `finish` submits what is left once the collection is
 * complete (nothing, unless the plan could not be followed: a realm listed
 * twice, where the last body of a label wins).
 */
export class LiveParts {
  private readonly parts = buildParts();
  private realmsRecord: RouteRecord | undefined;
  private realms: CollectionManifest['realms'] | undefined;
  private readonly awaited = new Map<string, number>();
  private readonly remaining: number[] = [];
  private readonly records: RouteRecord[][] = [];
  private readonly bodies: Array<Map<string, Body>> = [];
  private readonly writes: Array<Array<Promise<void>>> = [];
  private readonly submitting: Array<Promise<void>> = [];
  private readonly submitted = new Set<number>();
  private disabled = false;

  constructor(
    private readonly pool: Pick<BuildPool, 'submit' | 'close' | 'abort'>,
    private readonly spool: BodySpool,
  ) {}

  /** collect's onRoute: true when the body was taken. */
  readonly onRoute = (record: RouteRecord, body: Buffer | undefined, realms: CollectionManifest['realms']): boolean => {
    if (!this.realms) this.plan(record, realms);
    if (this.disabled) return false;
    const i = this.awaited.get(record.route);
    if (i === undefined) return false;
    this.awaited.delete(record.route);
    if (record !== this.realmsRecord) this.records[i]!.push(record);
    if (body) {
      const { file, sha256 } = record;
      if (file && sha256) {
        this.writes[i]!.push(this.spool.write(file, body).then(() => void this.bodies[i]!.set(record.route, new BodyFile(this.spool.dir, file, body.byteLength, sha256))));
      } else this.bodies[i]!.set(record.route, body);
    }
    if (--this.remaining[i]! === 0) this.submitWhenWritten(i);
    return body !== undefined;
  };

  /** Submits the parts not submitted yet from the complete collection, and closes the pool; throws what a spool write threw. */
  async finish(collection: RawCollection): Promise<void> {
    await Promise.all(this.submitting);
    // A part left over has none of its bodies taken, or it would be built without them.
    for (let i = 0; i < this.parts.length; i++) {
      if (!this.submitted.has(i) && (this.bodies[i]?.size ?? 0) + (this.writes[i]?.length ?? 0) > 0) {
        throw new Error(`internal: the build part of ${this.parts[i]!.routes.join(', ')} was never complete`);
      }
    }
    const left = collectionParts(collection, true).filter((_, i) => !this.submitted.has(i));
    for (const { part, bodies } of left) this.pool.submit(part, collection.manifest, bodies);
    this.pool.close();
  }

  private plan(realmsRecord: RouteRecord, realms: CollectionManifest['realms']): void {
    this.realmsRecord = realmsRecord;
    this.realms = realms;
    const labels = [realmsRecord.route, ...planRoutes(realms.ids).map((p) => p.label)];
    // Collect fetches exactly these; a label twice would leave two bodies for one route, which only the whole collection settles.
    if (new Set(labels).size !== labels.length) {
      this.disabled = true;
      return;
    }
    const stub: RawCollection = { manifest: { realms, routes: [realmsRecord] } as CollectionManifest, bodies: new Map() };
    const reader = new CollectionReader(stub, false);
    this.parts.forEach((part, i) => {
      const mine = part.routes.flatMap((r) => reader.labelsOf(r));
      for (const label of mine) this.awaited.set(label, i);
      this.remaining[i] = mine.length;
      this.records[i] = [];
      this.bodies[i] = new Map();
      this.writes[i] = [];
    });
    if (labels.some((l) => !this.awaited.has(l))) {
      this.disabled = true;
      return;
    }
    this.parts.forEach((_, i) => {
      if (this.remaining[i] === 0) this.submitWhenWritten(i);
    });
  }

  private submitWhenWritten(i: number): void {
    this.submitted.add(i);
    const ready = Promise.all(this.writes[i]!).then(() => {
      // What the part's build reads of the manifest: the realms, the realms route's record and its own routes' records.
      const manifest = { realms: this.realms!, routes: [this.realmsRecord!, ...this.records[i]!] } as CollectionManifest;
      this.pool.submit(this.parts[i]!, manifest, this.bodies[i]!);
    });
    // A failed write (a full disk) stops the workers; finish throws it.
    ready.catch((err: unknown) => this.pool.abort(err instanceof Error ? err : new Error(String(err))));
    this.submitting.push(ready);
  }
}
