import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BackslashRuns,
  SCAN_CHUNK_BYTES,
  SecretSearch,
  secretInFileBytes,
  secretMatcher,
} from '../../src/publish/scan.js';
import { MAX_BACKSLASHES, MAX_SPELLING_BYTES, redact, registerSecret, clearSecrets } from '../../src/util/redact.js';

const work = mkdtempSync(join(tmpdir(), 'svc-scan-spellings-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// Secrets of the shapes the tool holds: API tokens (letters, digits, URL-special characters), an audit token, and
// texts with the characters JSON and URLs escape (quote, backslash, slash, space, control, non-ASCII, outside the BMP).
const SECRETS = [
  'abcdefghijklmnopqrstuv12',
  'fake-token-for-tests/+=?&',
  'pa"ss\\wo/rd with space\tand',
  'Grüße-Straße-😀-token',
];

const backslashes = (n: number) => '\\'.repeat(n);
/** Backslash runs the matcher accepts: one (or two, for a backslash itself) up to MAX_BACKSLASHES, and longer runs, which the scan cuts. */
const runArb = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 8 }), weight: 6 },
  { arbitrary: fc.constantFrom(15, 31, 40, MAX_BACKSLASHES - 1, MAX_BACKSLASHES, MAX_BACKSLASHES + 1), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 3 * MAX_BACKSLASHES }), weight: 1 },
);
const hex = (n: number, width: number, upper: boolean) => {
  const h = n.toString(16).padStart(width, '0');
  return upper ? h.toUpperCase() : h;
};

/** Every spelling of one character the byte matcher accepts (src/util/redact.ts), given a backslash run and hex case. */
function spellings(ch: string, run: number, upper: boolean): string[] {
  const out = [Buffer.from(ch, 'utf8').toString('latin1')];
  out.push([...Buffer.from(ch, 'utf8')].map((b) => `%${hex(b, 2, upper)}`).join(''));
  let units = '';
  for (let i = 0; i < ch.length; i++) units += `${backslashes(run)}u${hex(ch.charCodeAt(i), 4, upper)}`;
  out.push(units);
  const short: Record<string, string> = { '"': '"', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't' };
  if (ch === '\\') out.push(backslashes(Math.max(2, run)));
  if (short[ch] !== undefined) out.push(`${backslashes(run)}${short[ch]}`);
  if (ch === ' ') out.push('+');
  return out;
}

/** A secret, each of its characters in one of its spellings, as bytes (latin1: one char per byte). */
const spelledArb = fc.constantFrom(...SECRETS).chain((secret) => {
  const chars = [...secret];
  return fc.tuple(...chars.map(() => fc.tuple(fc.nat(), runArb, fc.boolean()))).map((picks) => ({
    secret,
    spelled: Buffer.from(
      chars
        .map((ch, i) => {
          const [pick, run, upper] = picks[i]!;
          const options = spellings(ch, run, upper);
          return options[pick % options.length]!;
        })
        .join(''),
      'latin1',
    ),
  }));
});

/** Bytes around a secret: text that spells nothing of it, backslashes included (they lengthen a spelling's first run). */
const fillerArb = (max: number) =>
  fc.array(fc.constantFrom(0x20, 0x78, 0x5c, 0x22, 0x0a), { maxLength: max }).map((b) => Buffer.from(b));

/** Runs the search as secretInFileBytes does: pieces of `chunk` bytes. */
function found(secret: string, bytes: Buffer, chunk: number): boolean {
  const search = new SecretSearch(secretMatcher([secret])!, chunk);
  for (let at = 0; at < bytes.length; at += chunk) if (search.push(bytes.subarray(at, at + chunk))) return true;
  return false;
}

describe('the pre-publish token scan, every spelling at every offset around a chunk boundary (property)', () => {
  it('finds each secret in each spelling the matcher accepts, starting anywhere from before to after a boundary', () => {
    fc.assert(
      fc.property(
        spelledArb,
        fc.integer({ min: 128, max: 1024 }),
        fillerArb(8),
        fillerArb(8),
        ({ secret, spelled }, chunk, before, after) => {
          const token = Buffer.concat([before, spelled, after]);
          // Every start from "wholly in the first chunk" to "wholly in the second", across the boundary at `chunk`.
          for (let start = Math.max(0, chunk - token.length - 1); start <= chunk + 1; start++) {
            const bytes = Buffer.concat([Buffer.alloc(start, 0x2e), token, Buffer.alloc(chunk, 0x2e)]);
            if (!found(secret, bytes, chunk))
              throw new Error(`not found: ${secret} spelled in ${spelled.length} bytes from ${start}, chunk ${chunk}`);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('does not find a secret of which one character is missing, however it is spelled (the property above cannot pass by matching anything)', () => {
    fc.assert(
      fc.property(spelledArb, fc.integer({ min: 16, max: 400 }), ({ secret, spelled }, chunk) => {
        const shorter = secret.slice(0, -1) + '!';
        const bytes = Buffer.concat([Buffer.alloc(chunk - 3, 0x2e), spelled, Buffer.alloc(chunk, 0x2e)]);
        expect(found(shorter, bytes, chunk)).toBe(false);
        expect(found(secret, bytes, chunk)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it("bounds what a match spans: no spelling with runs of at most MAX_BACKSLASHES is longer than the matcher's longest", () => {
    fc.assert(
      fc.property(spelledArb, ({ secret, spelled }) => {
        const cut = new BackslashRuns().cut(spelled);
        expect(cut.length).toBeLessThanOrEqual(secretMatcher([secret])!.longest);
        expect(secretMatcher([secret])!.longest).toBe(secret.length * MAX_SPELLING_BYTES);
      }),
    );
  });

  it('cuts backslash runs the same whether the bytes come whole or in pieces', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(0x5c, 0x5c, 0x5c, 0x61)), { maxLength: 600 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (bytes, cuts) => {
          const all = Buffer.from(bytes);
          const whole = all
            .toString('latin1')
            .replace(new RegExp(`\\\\{${MAX_BACKSLASHES + 1},}`, 'g'), backslashes(MAX_BACKSLASHES));
          const runs = new BackslashRuns();
          const at = [...new Set(cuts.map((c) => c % (all.length + 1)))].sort((a, b) => a - b);
          const parts: Buffer[] = [];
          for (let i = 0, from = 0; i <= at.length; i++) {
            const to = i < at.length ? at[i]! : all.length;
            parts.push(Buffer.from(runs.cut(all.subarray(from, to))));
            from = to;
          }
          expect(Buffer.concat(parts).toString('latin1')).toBe(whole);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the pre-publish token scan on files', () => {
  const TOKEN = 'abcdefghijklmnopqrstuv12';
  const escaped = (run: number) =>
    [...TOKEN].map((ch) => `${backslashes(run)}u00${ch.charCodeAt(0).toString(16)}`).join('');

  async function inFile(spelled: string, start: number): Promise<boolean> {
    const file = join(work, 'body.json');
    const bytes = Buffer.alloc(2 * SCAN_CHUNK_BYTES, 0x20);
    bytes.write(spelled, start, 'latin1');
    writeFileSync(file, bytes);
    try {
      return (await secretInFileBytes(file, secretMatcher(['another-token-here', TOKEN])!)) === 'token';
    } finally {
      rmSync(file, { force: true });
    }
  }

  it('finds a 24-character token with 40 backslashes before each u00XX (1,080 bytes) starting 700 bytes before the 1 MB boundary', async () => {
    expect(escaped(40)).toHaveLength(1080);
    expect(await inFile(escaped(40), SCAN_CHUNK_BYTES - 700)).toBe(true);
    expect(await inFile(escaped(40), SCAN_CHUNK_BYTES - 540)).toBe(true);
  });

  it('finds it escaped more deeply than the pattern spells (200 backslashes a character, 4,920 bytes), across the boundary too', async () => {
    for (const back of [1, 700, 2460, 4919])
      expect(await inFile(escaped(200), SCAN_CHUNK_BYTES - back), String(back)).toBe(true);
  });

  it('finds a token with a quote and a backslash in a JSON text quoted inside JSON 1 to 10 times, at offsets across the boundary', async () => {
    const secret = 'tok"en\\with/quote-1234';
    let text = JSON.stringify({ token: secret });
    for (let depth = 1; depth <= 10; depth++) {
      text = JSON.stringify({ error: text });
      for (const back of [1, Math.floor(text.length / 2), text.length - 1]) {
        const file = join(work, 'nested.json');
        // A chunk boundary far enough in for the whole text to start before it.
        const boundary = 4096 * Math.ceil((text.length + 1) / 4096);
        const bytes = Buffer.alloc(boundary + text.length + 100, 0x20);
        expect(bytes.write(text, boundary - back, 'latin1')).toBe(text.length);
        writeFileSync(file, bytes);
        expect(
          await secretInFileBytes(file, secretMatcher([secret])!, 4096),
          `depth ${depth}, ${back} bytes before`,
        ).toBe('token');
        rmSync(file, { force: true });
      }
    }
  });

  it('redacts messages the same deep spellings (text mode has no bound: a message is whole in memory)', () => {
    clearSecrets();
    registerSecret(TOKEN);
    try {
      expect(redact(`body: ${escaped(200)}.`)).toBe('body: [redacted].');
    } finally {
      clearSecrets();
    }
  });
});
