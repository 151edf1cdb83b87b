/**
 * Where a live run's large bodies go as they arrive: a directory beside the
 * output (the same file system, no tmpfs), named as a staging directory is
 * (`.svc-snapshot-bodies.partial-<pid>-XXXXXX`), made 0700 on the first large
 * body, removed by `remove` (and by the signal and exit hooks until then;
 * after a SIGKILL, by the next run publishing into that directory).
 * Each body is written a chunk at a time, the next chunk read only once the
 * last is written: the socket is paused while the disk catches up, so memory
 * holds a few chunks whatever the body's size (docs/decisions.md).
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { BodyFile } from '../body/file.js';
import { FailedError } from '../errors.js';
import { BODY_SPOOL_BASE, stagingPrefix } from '../publish/leftovers.js';
import { registerStaging, unregisterStaging } from '../publish/registry.js';
import { DIR_MODE, FILE_MODE, writeAll } from '../publish/staging.js';
import { describeFsError } from '../util/fs-error.js';
import { SecretSearch, secretMatcher, type SecretMatcher } from '../publish/scan.js';

export class BodySpool {
  private dir: string | undefined;
  private files = 0;
  private readonly matcher: SecretMatcher | null;

  /**
   * `parent`: the directory the output is published into; `secrets`: the tokens in use, never written to disk;
   * `memoryBytes`: a body longer than this comes here (LARGE_BODY_BYTES unless a test asks for less).
   */
  constructor(
    private readonly parent: string,
    secrets: readonly string[],
    readonly memoryBytes?: number,
  ) {
    this.matcher = secretMatcher(secrets);
  }

  /**
   * `chunks`, the body of `label`, written to a new file of the spool; the file with its size and sha256. A
   * file-system failure is a FailedError naming the file; so is a token among the bytes, found before they are
   * written (a body echoing it could not be published in raw/ anyway).
   */
  async write(label: string, chunks: AsyncIterable<Buffer>): Promise<BodyFile> {
    const dir = this.directory();
    const name = `body-${++this.files}.json`;
    const file = path.join(dir, name);
    const hash = createHash('sha256');
    const search = this.matcher ? new SecretSearch(this.matcher) : undefined;
    let size = 0;
    try {
      const handle = await open(file, 'wx', FILE_MODE);
      try {
        for await (const chunk of chunks) {
          if (search?.push(chunk)) throw secretInBody(label, search.found!);
          hash.update(chunk);
          size += chunk.length;
          await writeAll(handle, chunk);
        }
      } finally {
        await handle.close();
      }
    } catch (err) {
      rmSync(file, { force: true });
      throw fsFailure(err, file);
    }
    return new BodyFile(dir, name, size, hash.digest('hex'));
  }

  /** Removes the spool and every body in it. */
  remove(): void {
    if (this.dir === undefined) return;
    rmSync(this.dir, { recursive: true, force: true });
    unregisterStaging(this.dir);
    this.dir = undefined;
  }

  private directory(): string {
    if (this.dir !== undefined) return this.dir;
    try {
      mkdirSync(this.parent, { recursive: true, mode: DIR_MODE });
      const dir = mkdtempSync(path.join(this.parent, stagingPrefix(BODY_SPOOL_BASE)));
      // Registered at once: a signal from here on removes it.
      registerStaging(dir);
      this.dir = dir;
      chmodSync(dir, DIR_MODE);
      return dir;
    } catch (err) {
      throw fsFailure(err, this.parent);
    }
  }
}

function secretInBody(label: string, kind: string): FailedError {
  return new FailedError(
    `the answer of ${label} holds the ${kind} in use (in one of its spellings), in a body too large to hold in ` +
      `memory; it was not written to disk, and nothing was published. The server echoes it: have that fixed`,
  );
}

/** A file-system failure as the run reports it (the path, what happened, what to do; exit 1); anything else as it is. */
function fsFailure(err: unknown, where: string): unknown {
  const message = describeFsError(err, where);
  return message ? new FailedError(message, { cause: err }) : err;
}
