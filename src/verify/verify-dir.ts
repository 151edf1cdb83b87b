/**
 * `svc-snapshot verify` of one directory (docs/verify.md): recognised
 * by its manifest, every file the manifest names checked (a regular file
 * inside the directory, never through a link; its size and sha256, read a
 * buffer at a time), the files present that the manifest does not cover
 * listed, and the signature checked. Reads only: nothing is written, so it
 * works on a read-only copy.
 */
import { stat } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { parseLeftover } from '../publish/leftovers.js';
import { MANIFEST_OF, type OutputKind } from '../manifests.js';
import type { AllowedSigners } from '../sign/allowed-signers.js';
import { SIGNATURE_SUFFIX, signatureState, type SignatureState } from '../sign/manifest-signature.js';
import { escapeControl } from '../util/escape.js';
import { manifestContents, snapshotContents, type Covered, type ManifestContents } from './covered.js';
import { snapshotOfManifest } from '../snapshot/dir.js';
import { WARNING_STATES, type FileState } from './states.js';
import { diskTree, type EntryType, type Tree } from './tree.js';

export { WARNING_STATES } from './states.js';

interface FileReport {
  readonly file: string;
  readonly state: FileState;
  readonly detail?: string;
}

export interface DirReport {
  readonly dir: string;
  /** `archive` for a `.tar.age` (src/archive), whose output's kind is `contents`. */
  readonly kind: OutputKind | 'archive' | null;
  readonly ok: boolean;
  /** Why the directory could not be checked at all (a damaged or doubled manifest). */
  readonly error?: string;
  readonly files: readonly FileReport[];
  readonly signature: SignatureState;
  readonly archive?: { readonly decrypted: boolean; readonly bytes: number; readonly recipients?: number };
  readonly contents?: OutputKind | null;
  /** An archive's: the signature of the manifest inside (`signature` is the archive's own). */
  readonly manifestSignature?: SignatureState;
  /** verify --replay: the restore drill's outcome (src/verify/replay.ts). */
  readonly replay?: ReplayReport;
}

export interface ReplayReport {
  readonly ok: boolean;
  readonly exports: number;
  readonly differs?: {
    readonly export: string;
    readonly file: string;
    readonly key: Readonly<Record<string, unknown>> | null;
    readonly detail: string;
  };
  readonly error?: string;
}

const KINDS = Object.keys(MANIFEST_OF) as OutputKind[];

/**
 * The manifests `dir` holds (by name, whatever their type): at least one, or
 * a usage error (exit 2) for a path that is no output of this tool at all.
 */
export async function manifestsIn(dir: string): Promise<OutputKind[]> {
  // The directory named on the command line may be reached through a link (an archive's "latest"); nothing inside it is.
  const info = await stat(dir).catch((err: NodeJS.ErrnoException) => err);
  if (info instanceof Error)
    throw new UsageError(
      `${escapeControl(dir)} ${info.code === 'ENOENT' ? 'does not exist' : `cannot be read (${info.code ?? 'error'})`}; ` +
        'give snapshot, raw collection or audit collection directories',
    );
  if (!info.isDirectory())
    throw new UsageError(
      `${escapeControl(dir)} is not a directory; give snapshot, raw collection or audit collection directories`,
    );
  const kinds = await manifestsOf(diskTree(dir));
  if (kinds.length === 0) {
    throw new UsageError(
      `${escapeControl(dir)} holds no manifest of svc-snapshot (${KINDS.map((k) => MANIFEST_OF[k]).join(', ')}): ` +
        'it is not a snapshot, raw collection or audit collection',
    );
  }
  return kinds;
}

export async function verifyDir(
  dir: string,
  kinds: readonly OutputKind[],
  allowed: AllowedSigners | undefined,
  now: Date,
): Promise<DirReport> {
  return verifyTree(dir, diskTree(dir), kinds, allowed, now);
}

/** The manifests a tree holds at its top, by name. */
export async function manifestsOf(tree: Tree): Promise<OutputKind[]> {
  const kinds: OutputKind[] = [];
  for (const kind of KINDS) if ((await tree.type(MANIFEST_OF[kind])) !== undefined) kinds.push(kind);
  return kinds;
}

/** verifyDir of an output as `tree` gives it, reported under the name `dir`. */
export async function verifyTree(
  dir: string,
  tree: Tree,
  kinds: readonly OutputKind[],
  allowed: AllowedSigners | undefined,
  now: Date,
): Promise<DirReport> {
  const failed = (kind: OutputKind | null, error: string): DirReport => ({
    dir,
    kind,
    ok: false,
    error,
    files: [],
    signature: { state: 'unsigned', key: null },
  });
  if (kinds.length > 1)
    return failed(
      null,
      `holds ${kinds.length} manifests (${kinds.map((k) => MANIFEST_OF[k]).join(', ')}); ` +
        'an output of svc-snapshot holds one, so this directory is not one as written',
    );
  const kind = kinds[0]!;
  const name = MANIFEST_OF[kind];
  const read = await readContents(dir, tree, kind);
  if (typeof read === 'string') return failed(kind, read);
  const { manifest, contents } = read;
  const files: FileReport[] = [];
  for (const c of contents.covered) files.push(await checkCovered(tree, c));
  files.push(...(await uncovered(tree, kind, contents.covered, contents.later)));
  const sigName = `${name}${SIGNATURE_SUFFIX}`;
  let signature = signatureState(sigName, await tree.signature(sigName), manifest, allowed, now);
  if (allowed !== undefined && signature.state === 'unsigned') {
    signature = { ...signature, reason: `no signature (${sigName}); --allowed-signers requires one` };
  }
  const signatureOk = signature.state === 'valid' || (signature.state === 'unsigned' && allowed === undefined);
  return { dir, kind, ok: signatureOk && files.every((f) => WARNING_STATES.has(f.state)), files, signature };
}

/** The manifest's bytes and what it covers, as opening it parses it; or why it cannot be opened. */
async function readContents(
  dir: string,
  tree: Tree,
  kind: OutputKind,
): Promise<{ manifest: Buffer; contents: ManifestContents } | string> {
  const name = MANIFEST_OF[kind];
  const read = await tree.manifest(name);
  if (kind === 'snapshot') {
    const snapshot = snapshotOfManifest(dir, read);
    if ('problem' in snapshot)
      return snapshot.damaged ? `${snapshot.problem}; the snapshot is damaged` : snapshot.problem;
    return { manifest: snapshot.manifestBytes!, contents: snapshotContents(snapshot.files()) };
  }
  if ('unreadable' in read) return `${escapeControl(name)} ${read.unreadable}`;
  if ('invalid' in read) return `${name} is not valid JSON (${read.invalid})`;
  const contents = manifestContents(kind, read.json);
  return typeof contents === 'string' ? escapeControl(contents) : { manifest: read.bytes, contents };
}

/** One file the manifest names: where it is, what it is, its size and hash. */
async function checkCovered(tree: Tree, c: Covered): Promise<FileReport> {
  const report = (state: FileState, detail?: string): FileReport => ({
    file: c.file,
    state,
    ...(detail !== undefined ? { detail } : {}),
  });
  if (c.segments === undefined)
    return report(
      'unsafe name',
      'the manifest names a path outside the directory or with a separator; it was not opened',
    );
  if (c.conflict !== undefined) return report('conflicting entries', c.conflict);
  const parents: string[] = [];
  for (const segment of c.segments.slice(0, -1)) {
    parents.push(segment);
    const type = await tree.type(parents.join('/'));
    if (type === undefined) return report('missing', `${segment}/ does not exist`);
    if (type === 'symbolic link') return report('symbolic link', `${segment}/ is a symbolic link; it was not followed`);
    if (type !== 'directory') return report('not a regular file', `${segment} is not a directory`);
  }
  const rel = c.segments.join('/');
  const type = await tree.type(rel);
  if (type === undefined) return report('missing');
  if (type === 'symbolic link') return report('symbolic link', 'it was not followed');
  if (type !== 'file') return report('not a regular file', describeType(type));
  const content = await tree.content(rel, c.sha256 !== undefined);
  if ('unreadable' in content) return report('unreadable', content.unreadable);
  if (c.bytes !== undefined && content.size !== c.bytes)
    return report('size mismatch', `${content.size} bytes; the manifest says ${c.bytes}`);
  if (c.sha256 === undefined)
    return report('unhashed', 'the manifest records no sha256 for it, so its content was not checked');
  if (content.sha256 !== c.sha256)
    return report('sha256 mismatch', 'its content is not what the manifest recorded: changed or damaged since');
  return report('ok', c.bytes === undefined ? 'sha256 matches; the manifest records no size for it' : undefined);
}

function describeType(type: EntryType): string {
  if (type === 'directory') return 'a directory';
  if (type === 'FIFO' || type === 'socket' || type === 'device') return `a ${type}`;
  return 'not a regular file';
}

const KILLED_TEMP =
  'a temporary file of a convert or report that did not finish: the next convert into this directory removes it ' +
  'once that process is gone, or remove it by hand';

/** The entries present that the manifest does not name: files the tool adds later ("not covered"), anything else unexpected. */
async function uncovered(
  tree: Tree,
  kind: OutputKind,
  covered: readonly Covered[],
  later: ReadonlySet<string>,
): Promise<FileReport[]> {
  const named = new Set(covered.map((c) => c.file));
  const own = new Set([MANIFEST_OF[kind], `${MANIFEST_OF[kind]}${SIGNATURE_SUFFIX}`]);
  const out: FileReport[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await tree.list(rel);
    if ('unreadable' in entries) {
      out.push({ file: rel || '.', state: 'unreadable', detail: entries.unreadable });
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const file = rel ? `${rel}/${e.name}` : e.name;
      if (rel === '' && own.has(e.name)) continue;
      if (named.has(file)) continue;
      // A snapshot's raw/ is walked when it is a real directory; what it holds is judged by the names above.
      if (kind === 'snapshot' && file === 'raw' && e.type === 'directory') {
        await walk(file);
        continue;
      }
      if (later.has(file) && e.type === 'file') {
        out.push({
          file,
          state: 'not covered',
          detail:
            'written by svc-snapshot after the manifest (convert, report, or an older --raw); not in the manifest, so not checked',
        });
        continue;
      }
      if (e.type === 'file' && parseLeftover('temp', e.name)) {
        out.push({ file, state: 'unexpected', detail: KILLED_TEMP });
        continue;
      }
      const what =
        e.type === 'symbolic link'
          ? 'a symbolic link'
          : e.type === 'directory'
            ? 'a directory'
            : e.type === 'file'
              ? 'a file'
              : 'not a regular file';
      out.push({ file, state: 'unexpected', detail: `${what} that svc-snapshot did not write here` });
    }
  };
  await walk('');
  return out;
}
