/**
 * The POSIX tar of an output directory, made the same way every time: every
 * entry under `<dir-name>/`, a directory before what it holds and each
 * directory's entries in byte order of their names (as `tar --sort=name`),
 * owner and group 0 without names, mode 0755 for directories and 0644 for
 * files, every mtime the time the output's manifest records. So the same
 * output gives the same tar, byte for byte. tar-stream writes the headers
 * (ustar; a pax header for a name ustar cannot hold); the files are read a
 * buffer at a time as the tar is pulled, never whole.
 */
import { createReadStream, type Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import tar from 'tar-stream';
import { FailedError } from '../errors.js';
import { escapeControl } from '../util/escape.js';

interface Entry {
  /** `<dir-name>/…`, `/`-separated. */
  readonly name: string;
  readonly abs: string;
  readonly info: Stats;
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Every entry of `dir` under `base`, depth first, each directory's entries in name order; only files and directories. */
async function* entriesOf(abs: string, name: string): AsyncGenerator<Entry> {
  const info = await lstat(abs);
  if (info.isFile()) {
    yield { name, abs, info };
    return;
  }
  if (!info.isDirectory())
    throw new FailedError(
      `${escapeControl(abs)} is ${info.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; ` +
        'an output directory holds only files and directories, so it is not archived',
    );
  yield { name, abs, info };
  for (const child of (await readdir(abs)).sort(byteOrder)) yield* entriesOf(path.join(abs, child), `${name}/${child}`);
}

/** Waits until the entry's stream takes more, or has failed. */
function drained(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/** One file's bytes into its entry, read a buffer at a time; rejects when its size changed since it was listed. */
async function writeFile(pack: tar.Pack, e: Entry, mtime: Date): Promise<void> {
  let failure: Error | undefined;
  const ended = new Promise<void>((resolve, reject) => {
    const entry = pack.entry(
      { name: e.name, type: 'file', size: e.info.size, mode: 0o644, uid: 0, gid: 0, mtime },
      (err) => (err ? reject(err) : resolve()),
    );
    void (async () => {
      try {
        for await (const chunk of createReadStream(e.abs, { highWaterMark: 256 * 1024 }))
          if (!entry.write(chunk as Buffer)) await drained(entry);
        entry.end(undefined);
      } catch (err) {
        failure = err as Error;
        entry.destroy(failure);
      }
    })();
  });
  try {
    await ended;
  } catch (err) {
    throw failure ?? err;
  }
}

/** Fills `pack` with the tree of `dir` and finalises it. */
async function fill(pack: tar.Pack, dir: string, mtime: Date): Promise<void> {
  for await (const e of entriesOf(dir, path.basename(dir))) {
    if (e.info.isDirectory()) {
      await new Promise<void>((resolve, reject) =>
        pack.entry({ name: `${e.name}/`, type: 'directory', mode: 0o755, uid: 0, gid: 0, mtime }, (err) =>
          err ? reject(err) : resolve(),
        ),
      );
      continue;
    }
    await writeFile(pack, e, mtime);
  }
  pack.finalize();
}

/**
 * The tar of `dir` (see the file's opening comment), as a stream that reads
 * the files only as fast as it is pulled; a file that cannot be read, or a
 * link or device found in the directory, errors the stream.
 */
export function tarOf(dir: string, mtime: Date): ReadableStream<Uint8Array> {
  const pack = tar.pack();
  fill(pack, dir, mtime).catch((err: Error) => pack.destroy(err));
  const chunks = pack[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
    },
    cancel() {
      pack.destroy();
    },
  });
}
