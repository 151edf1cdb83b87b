/**
 * A worker thread of the export build (src/exports/build-pool.ts): builds the
 * parts it is given, one at a time, each from bodies moved to it, and sends
 * back each export's file text as UTF-8 chunks, then the part's summary.
 * Bundled as lib/build-worker.js.
 */
import { parentPort } from 'node:worker_threads';
import { BodyFile, type Body } from '../collect/body-file.js';
import type { CollectionManifest } from '../collect/manifest.js';
import { FailedError } from '../errors.js';
import { movable } from '../util/movable.js';
import { build, type BuildPart, type BuildSummary, type BuiltExport, type ExportHead } from './build.js';
import type { BackendRelease } from './release.js';
import { OWNED_BODIES_MEMORY, collectGarbage } from './memory-policy.js';
import { EXPORT_BATCH, serializeBatches } from './serialize.js';
import type { NullField } from './types.js';
import { claimNext, endClaim, type PartOffer } from './part-offer.js';

/** A body moved to the worker: its bytes, bytes every builder shares (parts offered to all), or the file that holds them (read back, large). */
export type PartBody =
  | { readonly label: string; readonly bytes: ArrayBuffer; readonly length: number }
  | { readonly label: string; readonly shared: SharedArrayBuffer; readonly length: number }
  | { readonly label: string; readonly file: { readonly dir: string; readonly name: string; readonly size: number; readonly sha256: string } };

export interface PartTask {
  readonly id: number;
  readonly manifest: CollectionManifest;
  readonly part: BuildPart;
  readonly bodies: readonly PartBody[];
}

export type PartMessage =
  | (ExportHead & {
      readonly type: 'export';
      readonly id: number;
      /** By the release the whole collection shows, which the part's routes alone may not (BuiltExport.nullFieldsFor). */
      readonly nullFields: Readonly<Record<BackendRelease, NullField[]>>;
    })
  | { readonly type: 'chunk'; readonly id: number; readonly index: number; readonly bytes: ArrayBuffer; readonly length: number }
  | { readonly type: 'end'; readonly id: number; readonly index: number }
  | { readonly type: 'done'; readonly id: number; readonly summary: BuildSummary }
  | { readonly type: 'error'; readonly id: number; readonly failed: boolean; readonly message: string };

/** Text per chunk sent back: large enough that messages are few, small enough that little waits in the queue. */
const CHUNK_CHARS = 1 << 20;

function bodyOf(b: PartBody): Body {
  if ('file' in b) return new BodyFile(b.file.dir, b.file.name, b.file.size, b.file.sha256);
  return 'shared' in b ? Buffer.from(b.shared, 0, b.length) : Buffer.from(b.bytes, 0, b.length);
}

function runOffer(offer: PartOffer, post: (m: PartMessage, transfer?: ArrayBuffer[]) => void): void {
  const state = new Int32Array(offer.state);
  for (let i = claimNext(offer, state); i !== undefined; i = claimNext(offer, state)) {
    try {
      runPart(offer.tasks[i]!, post);
    } finally {
      endClaim(state, offer.tasks[i]!.kb);
    }
    collectGarbage();
  }
}

const RELEASES: readonly BackendRelease[] = ['3.14.1+', 'before 3.14.1', 'unknown'];

function nullFieldsByRelease(e: BuiltExport): Record<BackendRelease, NullField[]> {
  return Object.fromEntries(RELEASES.map((r) => [r, e.nullFieldsFor(r)])) as Record<BackendRelease, NullField[]>;
}

function runPart(task: PartTask, post: (m: PartMessage, transfer?: ArrayBuffer[]) => void): void {
  const { id } = task;
  const collection = { manifest: task.manifest, bodies: new Map(task.bodies.map((b) => [b.label, bodyOf(b)])) };
  const built = build(collection, OWNED_BODIES_MEMORY, task.part);
  let step = built.next();
  for (; !step.done; step = built.next()) {
    const e = step.value;
    const { index } = e;
    post({ type: 'export', id, index, export: e.export, available: e.available, ...(e.reason !== undefined ? { reason: e.reason } : {}), ...(e.proposedRoute !== undefined ? { proposedRoute: e.proposedRoute } : {}), count: e.count, nullFields: nullFieldsByRelease(e) });
    let pieces: string[] = [];
    let chars = 0;
    const flush = () => {
      if (pieces.length === 0) return;
      const buf = Buffer.from(pieces.join(''), 'utf8');
      pieces = [];
      chars = 0;
      const bytes = movable(buf);
      post({ type: 'chunk', id, index, bytes, length: buf.byteLength }, [bytes]);
    };
    for (const piece of serializeBatches(e.batches(EXPORT_BATCH))) {
      pieces.push(piece);
      chars += piece.length;
      if (chars >= CHUNK_CHARS) flush();
    }
    flush();
    post({ type: 'end', id, index });
  }
  post({ type: 'done', id, summary: step.value });
}

parentPort?.on('message', (task: PartTask | PartOffer) => {
  const post = (m: PartMessage, transfer?: ArrayBuffer[]) => parentPort!.postMessage(m, transfer);
  try {
    if ('type' in task) runOffer(task, post);
    else {
      runPart(task, post);
      // The part's garbage goes before the next part is parsed: the worker's heap stays one part's.
      collectGarbage();
    }
  } catch (err) {
    // A domain failure (a body file changed since it was checked) keeps its message; anything else is a bug, said as one.
    post({ type: 'error', id: 'id' in task ? task.id : -1, failed: err instanceof FailedError, message: err instanceof Error ? err.message : String(err) });
  }
});
