/**
 * A worker thread of the spreadsheets (src/sheets/sheet-pool.ts): it takes
 * the largest export offered that nobody has taken (within the limit while
 * the build still runs), reads the export file, sends back its CSV file's
 * bytes as they are made and its sheets compressed (deflateSheets, as the
 * main thread makes them), and again, until the build is over and nothing
 * is left. Bundled as lib/sheet-worker.js.
 */
import { parentPort } from 'node:worker_threads';
import { FailedError } from '../errors.js';
import { collectGarbage } from '../exports/memory-policy.js';
import { movable } from '../util/movable.js';
import { SHEET_EXPORTS, SHEET_FLYING, type SheetCommand, type SheetMessage, type SheetSetup } from './sheet-pool.js';
import { claimLargestWithin, isFree } from '../util/claims.js';
import { readExportRecords, type SheetManifestExport } from './snapshot-dir.js';
import { deflateSheets } from './write.js';
import { ZipTooLargeError } from './zip.js';

/** CSV text per message: few messages, little waiting in the queue. */
const CHUNK_CHARS = 1 << 20;

type Post = (m: SheetMessage, transfer?: ArrayBuffer[]) => void;

async function run(setup: SheetSetup, id: number, entry: SheetManifestExport, post: Post): Promise<void> {
  const records = await readExportRecords(setup.dir, entry, { verify: setup.verify });
  const sheets = await deflateSheets(entry, records, setup.plan, async (file, chunks) => {
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

/** What this worker knows of the exports, from the main thread's messages. */
class Offers {
  /** By export position: what was offered. */
  readonly entries: Array<{ entry: SheetManifestExport; kb: number } | undefined> = [];
  lifted = false;
  private busy = false;
  private stopped = false;
  /** SHEET_FLYING and a word per export, shared with the main thread and the other workers. */
  private readonly state: Int32Array;

  constructor(
    private readonly setup: SheetSetup,
    private readonly post: Post,
  ) {
    this.state = new Int32Array(setup.state);
  }

  /** The largest offered export nobody has, its KB counted in SHEET_FLYING: before `lift`, only one that keeps the workers within the limit. */
  private claimNext(): number | undefined {
    return claimLargestWithin(this.state, SHEET_FLYING, SHEET_EXPORTS, this.entries, this.lifted ? undefined : this.setup.earlyKb);
  }

  /** Whether every offered export is taken (once lifted, every export was offered). */
  private allTaken(): boolean {
    return this.entries.every((o, id) => o === undefined || !isFree(this.state, SHEET_EXPORTS + id));
  }

  /** Makes what may be taken now, one export after another; idle once the build is over and nothing is left. */
  async pump(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      for (let id = this.claimNext(); id !== undefined; id = this.claimNext()) {
        const { entry, kb } = this.entries[id]!;
        try {
          await run(this.setup, id, entry, this.post);
        } catch (err) {
          // A domain failure (a damaged file, a token in a sheet) keeps its message; anything else is a bug, said as one.
          const kind = err instanceof FailedError ? 'failed' : err instanceof ZipTooLargeError ? 'too-large' : 'bug';
          this.post({ type: 'error', id, kind, message: err instanceof Error ? err.message : String(err) });
          this.stopped = true;
          return;
        } finally {
          Atomics.sub(this.state, SHEET_FLYING, kb);
        }
        // The export's garbage goes before the next is read: the worker's heap stays one export's.
        collectGarbage();
      }
      if (this.lifted && this.allTaken()) {
        this.stopped = true;
        this.post({ type: 'idle' });
      }
    } finally {
      this.busy = false;
    }
  }
}

let offers: Offers | undefined;

parentPort?.on('message', (c: SheetCommand) => {
  const post: Post = (m, transfer) => parentPort!.postMessage(m, transfer);
  switch (c.type) {
    case 'setup':
      offers = new Offers(c, post);
      return;
    case 'offer':
      if (offers) offers.entries[c.id] = { entry: c.entry, kb: c.kb };
      break;
    case 'lift':
      if (offers) offers.lifted = true;
      break;
    case 'look':
      break;
  }
  void offers?.pump();
});
