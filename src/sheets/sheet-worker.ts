/**
 * A worker thread of the spreadsheets (src/sheets/sheet-pool.ts): for each
 * export it is given, reads the export file, sends back its CSV file's bytes
 * as they are made and its sheets compressed (deflateSheets, as the main
 * thread makes them). Bundled as lib/sheet-worker.js.
 */
import { parentPort } from 'node:worker_threads';
import { FailedError } from '../errors.js';
import { collectGarbage } from '../exports/memory-policy.js';
import { movable } from '../util/movable.js';
import type { SheetMessage, SheetOffer } from './sheet-pool.js';
import { claimLargestFree, TAKEN_BY_WORKER } from '../util/claims.js';
import { readExportRecords } from './snapshot-dir.js';
import { deflateSheets } from './write.js';
import { ZipTooLargeError } from './zip.js';

/** CSV text per message: few messages, little waiting in the queue. */
const CHUNK_CHARS = 1 << 20;

async function run(offer: SheetOffer, id: number, post: (m: SheetMessage, transfer?: ArrayBuffer[]) => void): Promise<void> {
  const entry = offer.exports[id]!;
  const records = await readExportRecords(offer.dir, entry, { verify: offer.verify });
  const sheets = await deflateSheets(entry, records, offer.plans[id]!, async (file, chunks) => {
    post({ type: 'csv-file', id, file });
    let pieces: string[] = [];
    let chars = 0;
    const flush = () => {
      if (pieces.length === 0) return;
      const bytes = movable(Buffer.from(pieces.join(''), 'utf8'));
      pieces = [];
      chars = 0;
      post({ type: 'csv', id, bytes }, [bytes]);
    };
    for await (const piece of chunks) {
      if (typeof piece !== 'string') {
        flush();
        const bytes = movable(piece);
        post({ type: 'csv', id, bytes }, [bytes]);
        continue;
      }
      pieces.push(piece);
      chars += piece.length;
      if (chars >= CHUNK_CHARS) flush();
    }
    flush();
  });
  const transfer: ArrayBuffer[] = [];
  const pages = sheets.pages.map((p) => ({ content: p.content, chunks: p.chunks.map((c) => movable(c)) }));
  for (const p of pages) transfer.push(...p.chunks);
  post({ type: 'done', id, columns: sheets.columns, pages }, transfer);
}

/** Takes the largest export nobody has, makes it, and again, until none is left; then says it is idle. */
async function runOffer(offer: SheetOffer, post: (m: SheetMessage, transfer?: ArrayBuffer[]) => void): Promise<void> {
  const state = new Int32Array(offer.state);
  for (let i = claimLargestFree(state, offer.sizes, TAKEN_BY_WORKER); i !== undefined; i = claimLargestFree(state, offer.sizes, TAKEN_BY_WORKER)) {
    try {
      await run(offer, i, post);
    } catch (err) {
      // A domain failure (a damaged file, a token in a sheet) keeps its message; anything else is a bug, said as one.
      const kind = err instanceof FailedError ? 'failed' : err instanceof ZipTooLargeError ? 'too-large' : 'bug';
      post({ type: 'error', id: i, kind, message: err instanceof Error ? err.message : String(err) });
      return;
    }
    // The export's garbage goes before the next is read: the worker's heap stays one export's.
    collectGarbage();
  }
  post({ type: 'idle' });
}

parentPort?.on('message', (offer: SheetOffer) => {
  void runOffer(offer, (m, transfer) => parentPort!.postMessage(m, transfer));
});
