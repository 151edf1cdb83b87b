/**
 * `svc-snapshot verify <dir>.tar.age`: without an identity, the archive's
 * structure (read.ts says what that covers) and its signature
 * `<dir>.tar.age.sig`; with identities, the output inside checked file by
 * file as verify checks a directory (src/verify, through a Tree built from
 * what the stream gave), its manifest's signature too.
 */
import { lstat, stat } from 'node:fs/promises';
import path from 'node:path';
import type { AllowedSigners } from '../sign/allowed-signers.js';
import { readSignatureFile, signatureState, type SignatureState } from '../sign/manifest-signature.js';
import { escapeControl } from '../util/escape.js';
import { describeJsonError } from '../util/json-error.js';
import { manifestsOf, verifyTree, type DirReport } from '../verify/verify-dir.js';
import type { EntryType, Tree } from '../verify/tree.js';
import { archiveSignatureOf } from './names.js';
import {
  archiveFileProblem,
  ArchiveProblem,
  checkStructure,
  readArchive,
  type Contents,
  type Digests,
} from './read.js';

/** The output inside an archive, as verify reads a directory. */
function contentsTree({ entries }: Contents): Tree {
  const typeAt = (rel: string): EntryType | undefined => {
    if (rel === '') return 'directory';
    const e = entries.get(rel);
    if (e) return e.type;
    // A directory a tar holds files of without an entry of its own.
    for (const name of entries.keys()) if (name.startsWith(`${rel}/`)) return 'directory';
    return undefined;
  };
  return {
    type: async (rel) => typeAt(rel),
    async content(rel) {
      const e = entries.get(rel);
      return e?.type === 'file' ? { size: e.size, sha256: e.sha256 } : { unreadable: 'is not a regular file' };
    },
    async list(rel) {
      const names = new Set<string>();
      for (const name of entries.keys()) {
        if (rel !== '' && !name.startsWith(`${rel}/`)) continue;
        names.add(name.slice(rel === '' ? 0 : rel.length + 1).split('/')[0]!);
      }
      return [...names].map((name) => ({ name, type: typeAt(rel === '' ? name : `${rel}/${name}`)! }));
    },
    async manifest(name) {
      const e = entries.get(name);
      if (e === undefined) return { unreadable: 'does not exist' };
      if (e.type !== 'file') return { unreadable: 'is not a regular file' };
      if (e.bytes === undefined) return { unreadable: 'is larger than 64 MiB, far larger than a manifest' };
      const text = e.bytes.toString('utf8');
      try {
        return { bytes: e.bytes, json: JSON.parse(text) as unknown };
      } catch (err) {
        return { invalid: describeJsonError(err, text) };
      }
    },
    async signature(name) {
      const e = entries.get(name);
      if (e === undefined) return { missing: true };
      if (e.type !== 'file' || e.bytes === undefined) return { unreadable: 'is not a regular file of a signature' };
      return { bytes: e.bytes };
    },
  };
}

/** The archive's own signature `<file>.sig` over the digests of its bytes. */
async function archiveSignature(
  file: string,
  digests: Digests,
  allowed: AllowedSigners | undefined,
  now: Date,
): Promise<SignatureState> {
  const sig = archiveSignatureOf(file);
  const name = path.basename(sig);
  const state = signatureState(name, await readSignatureFile(path.dirname(sig), name), digests, allowed, now);
  const said = state.reason?.replace(/the manifest/g, 'the archive');
  const shown = said !== undefined ? { ...state, reason: said } : state;
  if (allowed !== undefined && shown.state === 'unsigned')
    return { ...shown, reason: `no signature (${name}); --allowed-signers requires one` };
  return shown;
}

const signatureOk = (s: SignatureState, allowed: AllowedSigners | undefined) =>
  s.state === 'valid' || (s.state === 'unsigned' && allowed === undefined);

/** What verify says of one archive (see the file's opening comment). */
export async function verifyArchive(
  file: string,
  identities: readonly string[] | undefined,
  allowed: AllowedSigners | undefined,
  now: Date,
): Promise<DirReport> {
  const failed = (error: string): DirReport => ({
    dir: file,
    kind: 'archive',
    ok: false,
    error,
    files: [],
    signature: { state: 'unsigned', key: null },
  });
  const unopened = await archiveFileProblem(file);
  if (unopened !== undefined) return failed(unopened);
  try {
    if (identities === undefined) {
      const s = await checkStructure(file);
      const signature = await archiveSignature(file, s, allowed, now);
      return {
        dir: file,
        kind: 'archive',
        ok: signatureOk(signature, allowed),
        files: [],
        signature,
        archive: { decrypted: false, bytes: s.bytes, recipients: s.recipients },
      };
    }
    // The archive's bytes are hashed as they are decrypted only when a signature is there to check them against.
    const signed = (await lstat(archiveSignatureOf(file)).catch(() => undefined)) !== undefined;
    const { contents, digests } = await readArchive(file, identities, signed);
    const signature = await archiveSignature(
      file,
      digests ?? { sha256: Buffer.alloc(0), sha512: Buffer.alloc(0) },
      allowed,
      now,
    );
    const tree = contentsTree(contents);
    const kinds = await manifestsOf(tree);
    const bytes = (await stat(file)).size;
    if (kinds.length === 0)
      return {
        ...failed(
          `its directory ${escapeControl(contents.top)}/ holds no manifest of svc-snapshot: it is not an archive of an output`,
        ),
        signature,
      };
    const inner = await verifyTree(file, tree, kinds, allowed, now);
    return {
      ...inner,
      kind: 'archive',
      ok: inner.ok && signatureOk(signature, allowed),
      signature,
      archive: { decrypted: true, bytes },
      contents: inner.kind === 'archive' ? null : inner.kind,
      manifestSignature: inner.signature,
    };
  } catch (err) {
    if (err instanceof ArchiveProblem) return failed(err.message);
    throw err;
  }
}
