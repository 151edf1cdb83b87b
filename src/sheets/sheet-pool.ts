/**
 * The spreadsheets on worker threads (`snapshot --format`: one by default,
 * N with --build-threads N): started before the build, which offers them
 * each export as soon as its file is written. Each worker
 * (lib/sheet-worker.js beside the bundle) takes the largest offered export
 * nobody has taken (within a limit while the build still runs beside it),
 * reads its file from the staging directory, and sends back its CSV file's
 * bytes as they are made (written here, through the same sink as the main
 * thread's) and its sheets compressed; writeSpreadsheets puts them into the
 * workbook in the manifest's order. Worker and main thread run the same
 * code (deflateSheets), so the files are the same bytes.
 */
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { FailedError } from '../errors.js';
import { checkWorkerFile } from '../exports/build-pool.js';
import { Channel } from '../util/channel.js';
import { isPlainFileName } from '../util/safe-read.js';
import { claim, claimLargestFree, isFree, TAKEN_BY_MAIN, TAKEN_BY_WORKER } from '../util/claims.js';
import type { SheetManifestExport } from './snapshot-dir.js';
import { type DeflatedSheets, type SheetPlan, type SheetSink } from './write.js';
import { ZipTooLargeError, type DeflatedEntry } from './zip.js';

const WORKER_FILE = new URL('./sheet-worker.js', import.meta.url);

/** The workers' file, there to be started (a lib/ without it is a broken build). */
export function checkSheetWorker(): string {
  return checkWorkerFile(WORKER_FILE);
}

/** Whether the workers' file is there (checkSheetWorker without the error). */
export function hasSheetWorker(): boolean {
  try {
    checkSheetWorker();
    return true;
  } catch {
    return false;
  }
}

/** Where the workers read the export files, and how. */
export interface SheetWorkerOptions {
  readonly threads: number;
  /** The directory holding the export files (the staging directory). */
  readonly dir: string;
  /** Whether each file's sha256 is checked against the manifest (not for files this run has just written). */
  readonly verify: boolean;
  /**
   * KB of export files the workers may hold at once before `lift` (while the
   * build still runs beside them, on the main thread); 0: they wait for the
   * build to end. A larger export waits for `lift`.
   */
  readonly earlyKb: number;
}

/** Sent once to each worker: where the claims are, where the files are, what to make of them. */
export interface SheetSetup {
  readonly type: 'setup';
  /** SHEET_FLYING (KB of the exports workers are making), SHEET_EXPORTS… (a word per export: src/util/claims.ts). */
  readonly state: SharedArrayBuffer;
  readonly dir: string;
  readonly verify: boolean;
  readonly earlyKb: number;
  readonly plan: SheetPlan;
}

/**
 * To the workers: an export whose file is written (`offer`, from the build
 * as it goes, or all at once), the build over (`lift`: every export was
 * offered, no limit any more), another worker's export ended (`look`: room
 * under the limit).
 */
export type SheetCommand =
  | SheetSetup
  | { readonly type: 'offer'; readonly id: number; readonly entry: SheetManifestExport; readonly kb: number }
  | { readonly type: 'lift' }
  | { readonly type: 'look' };

export const SHEET_FLYING = 0;
export const SHEET_EXPORTS = 1;

export type SheetMessage =
  /** The export's CSV file is begun, under this name (the same code names it on either thread); its bytes follow. */
  | { readonly type: 'csv-file'; readonly id: number; readonly file: string }
  | { readonly type: 'csv'; readonly id: number; readonly bytes: ArrayBuffer }
  | { readonly type: 'done'; readonly id: number; readonly columns: number; readonly pages: ReadonlyArray<{ readonly content: DeflatedEntry; readonly chunks: readonly ArrayBuffer[] }> }
  | { readonly type: 'idle' }
  | { readonly type: 'error'; readonly id: number; readonly kind: 'failed' | 'too-large' | 'bug'; readonly message: string };

interface Pending {
  readonly promise: Promise<DeflatedSheets>;
  readonly resolve: (v: DeflatedSheets) => void;
  readonly reject: (e: Error) => void;
  settled: boolean;
}

/**
 * Worker threads making exports' spreadsheet forms for writeSpreadsheets.
 * Started before the build: each export is offered (`offer`) as soon as its
 * file is written, and a worker takes it while the build goes on, within
 * `earlyKb`; `lift` (writeSpreadsheets, once the build is over) lets them
 * take the rest. `claim` is the main thread's way of taking one (false when
 * a worker has it), `result` a worker's export once done, `finished` the end
 * of every worker's export and CSV write. The first failure (a worker's, a
 * write's) stops them all and is thrown by whatever waits.
 */
export class SheetHelpers {
  /** SHEET_FLYING, then who has each export (src/util/claims.ts), shared with the workers. */
  private readonly state: Int32Array;
  private readonly sizes: number[];
  private readonly offered: boolean[];
  private readonly pending = new Map<number, Pending>();
  private readonly csv = new Map<number, Channel<Uint8Array>>();
  private readonly csvFiles = new Map<number, string>();
  private readonly writes: Array<Promise<void>> = [];
  private readonly workers = new Set<Worker>();
  private failure: Error | undefined;

  constructor(
    private readonly o: SheetWorkerOptions,
    /** How many exports the manifest will list (their positions are the ids). */
    count: number,
    readonly plan: SheetPlan,
    private readonly sink: SheetSink,
  ) {
    const file = checkSheetWorker();
    this.state = new Int32Array(new SharedArrayBuffer(4 * (SHEET_EXPORTS + count)));
    this.sizes = new Array<number>(count).fill(0);
    this.offered = new Array<boolean>(count).fill(false);
    const setup: SheetSetup = { type: 'setup', state: this.state.buffer as SharedArrayBuffer, dir: o.dir, verify: o.verify, earlyKb: o.earlyKb, plan };
    for (let t = 0; t < Math.max(1, o.threads); t++) {
      // V8's default young generation: with the build workers' 16 MB, the peak was some 130 MB higher (large site, 560 against 430 MB).
      const w = new Worker(file);
      this.workers.add(w);
      w.on('message', (m: SheetMessage) => this.onMessage(w, m));
      w.on('error', (err) => this.abort(new Error(`the spreadsheets stopped: ${err.message}`)));
      w.on('exit', (code) => {
        if (this.workers.has(w)) this.abort(new Error(`the spreadsheets stopped (exit ${code})`));
      });
      w.postMessage(setup);
    }
  }

  /** Export `i`'s file is written (`bytes` long): the workers may take it. Bound, to be handed to writeExports as is. */
  readonly offer = (i: number, entry: SheetManifestExport, bytes: number): void => {
    if (this.offered[i] || this.failure) return;
    this.offered[i] = true;
    this.sizes[i] = bytes;
    this.post({ type: 'offer', id: i, entry, kb: Math.ceil(bytes / 1024) });
  };

  /** Offers every export not offered yet, ordered by the size of its file in the directory. */
  offerAll(exports: readonly SheetManifestExport[]): void {
    exports.forEach((e, i) => {
      if (this.offered[i]) return;
      let bytes = 0;
      try {
        // A name from a manifest is looked at only as a plain name inside the directory (the reader refuses any other).
        if (isPlainFileName(e.file)) bytes = lstatSync(path.join(this.o.dir, e.file)).size;
      } catch {
        // The size only orders the work: the worker opens the file as the main thread would, and says what is wrong with it.
      }
      this.offer(i, e, bytes);
    });
  }

  /** The build is over and every export offered: the workers take what is left, whatever its size. */
  lift(): void {
    this.post({ type: 'lift' });
  }

  /**
   * Takes the largest export nobody has for the main thread: its heap has
   * grown to the build's already, where a worker's would grow anew to hold
   * it (the spreadsheets' peak memory).
   */
  claimLargest(): number | undefined {
    return claimLargestFree(this.state.subarray(SHEET_EXPORTS), this.sizes, TAKEN_BY_MAIN);
  }

  /**
   * Takes export `i` for the main thread; false when a worker has it (or the
   * main thread already had it). Throws a worker's failure first: the main
   * thread starts nothing more once the run has failed.
   */
  claim(i: number): boolean {
    this.throwIfFailed();
    return claim(this.state, SHEET_EXPORTS + i, TAKEN_BY_MAIN);
  }

  /** The first export from `from` on that nobody has taken. */
  nextUnclaimed(from: number): number | undefined {
    for (let i = from; i < this.sizes.length; i++) if (isFree(this.state, SHEET_EXPORTS + i)) return i;
    return undefined;
  }

  /** Whether a worker's export `i` is done (or failed): waiting for it would not wait. */
  settled(i: number): boolean {
    return this.failure !== undefined || this.pending.get(i)?.settled === true;
  }

  /** A worker's export `i`, compressed. */
  result(i: number): Promise<DeflatedSheets> {
    this.throwIfFailed();
    if (Atomics.load(this.state, SHEET_EXPORTS + i) !== TAKEN_BY_WORKER) throw new Error(`internal: export ${i} was not taken by a sheet worker`);
    return this.pendingOf(i).promise;
  }

  /** The CSV file a worker wrote of export `i`, if it did. */
  csvFile(i: number): string | undefined {
    return this.csvFiles.get(i);
  }

  /** Every worker's export done and every CSV file written; throws the first failure. */
  async finished(): Promise<void> {
    this.throwIfFailed();
    const theirs = this.sizes.flatMap((_, i) => (Atomics.load(this.state, SHEET_EXPORTS + i) === TAKEN_BY_WORKER ? [this.pendingOf(i).promise] : []));
    await Promise.all(theirs);
    // Every CSV write was started by then: a worker begins an export's CSV file before it says the export is done.
    await Promise.all(this.writes);
    this.throwIfFailed();
  }

  /** Stops every worker; a CSV file a worker was making is not finished (its write fails, and the run with it). */
  stop(): void {
    for (const w of this.workers) void w.terminate();
    this.workers.clear();
    for (const c of this.csv.values()) c.fail(this.failure ?? new Error('the spreadsheets were stopped'));
  }

  private post(c: SheetCommand): void {
    for (const w of this.workers) w.postMessage(c);
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  private abort(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) if (!p.settled) p.reject(this.failure);
    for (const c of this.csv.values()) c.fail(this.failure);
    this.stop();
  }

  /** Export `i`'s promise, made by whichever comes first: the worker's word, or the main thread asking for it. */
  private pendingOf(i: number): Pending {
    let p = this.pending.get(i);
    if (!p) {
      let resolve!: (v: DeflatedSheets) => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<DeflatedSheets>((res, rej) => ((resolve = res), (reject = rej)));
      // Thrown to whoever waits for it; a run stopped by another failure does not wait.
      promise.catch(() => {});
      const made: Pending = { promise, resolve: (v) => ((made.settled = true), resolve(v)), reject: (e) => ((made.settled = true), reject(e)), settled: false };
      if (this.failure) made.reject(this.failure);
      this.pending.set(i, made);
      p = made;
    }
    return p;
  }

  /** A worker began export `i`'s CSV file: it is written here, through the same sink as the main thread's, as its bytes arrive. */
  private csvBegun(i: number, file: string): void {
    const chunks = new Channel<Uint8Array>();
    this.csv.set(i, chunks);
    const write = this.sink(file, chunks).then(() => void this.csvFiles.set(i, file));
    write.catch((err: unknown) => this.abort(err instanceof Error ? err : new Error(String(err))));
    this.writes.push(write);
  }

  private onMessage(w: Worker, m: SheetMessage): void {
    if (this.failure) return;
    switch (m.type) {
      case 'csv-file':
        this.csvBegun(m.id, m.file);
        break;
      case 'csv':
        this.csv.get(m.id)?.push(Buffer.from(m.bytes));
        break;
      case 'done':
        this.csv.get(m.id)?.end();
        this.csv.delete(m.id);
        this.pendingOf(m.id).resolve({ columns: m.columns, pages: m.pages.map((p) => ({ content: p.content, chunks: p.chunks.map((c) => Buffer.from(c)) })) });
        // Its KB left the limit: a worker waiting for room looks again.
        for (const other of this.workers) if (other !== w) other.postMessage({ type: 'look' } satisfies SheetCommand);
        break;
      case 'idle':
        // Nothing left to take: its memory goes now, not with the others at the end.
        this.workers.delete(w);
        void w.terminate();
        break;
      case 'error':
        this.abort(m.kind === 'failed' ? new FailedError(m.message) : m.kind === 'too-large' ? new ZipTooLargeError(m.message) : new Error(`the spreadsheets failed: ${m.message}`));
        break;
    }
  }
}
