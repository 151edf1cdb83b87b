/**
 * The worker thread of src/history/check-aside.ts: checks export files while
 * the main thread stores their records. Bundled as lib/history-check.js.
 */
import { parentPort } from 'node:worker_threads';
import { fileProblem, type FileProblem } from './texts.js';

export interface CheckRequest {
  readonly id: number;
  /** The file's bytes, moved to the worker (or copied, when they share memory with other data). */
  readonly bytes: ArrayBuffer;
  readonly length: number;
  readonly key: readonly string[];
  readonly layout: boolean;
}

export interface CheckReply {
  readonly id: number;
  readonly problem: FileProblem | null;
}

parentPort?.on('message', (req: CheckRequest) => {
  const reply: CheckReply = { id: req.id, problem: fileProblem(Buffer.from(req.bytes, 0, req.length), req.key, req.layout) ?? null };
  parentPort!.postMessage(reply);
});
