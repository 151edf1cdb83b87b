import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, openSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHORTEST_SECRET, clearSecrets, knownSecrets, redact, registerSecret } from '../../src/util/redact.js';
import { bodyHint } from '../../src/http/body-hint.js';
import { describeNotSpreadsheet } from '../../src/audit/fetch.js';
import { decodeBody } from '../../src/body/decode.js';
import { escapeControl, escapeForTerminal } from '../../src/util/escape.js';
import { secretInFileBytes, SecretSearch, secretMatcher, SCAN_CHUNK_BYTES } from '../../src/publish/scan.js';
import { MAX_REALM_COMPONENT, planRoute, routeById, realmFileComponent } from '../../src/api/catalog.js';
import { withoutUserinfo } from '../../src/config/url.js';
import { parseToken } from '../../src/config/values.js';
import { UsageError } from '../../src/errors.js';
import { describeFsError } from '../../src/util/fs-error.js';
import { describeJsonError } from '../../src/util/json-error.js';
import { HttpClient } from '../../src/http/client.js';
import { HttpError } from '../../src/http/errors.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { getUntrustedCerts } from '../fake/certs.js';

/** One spelling of a character, chosen by `pick`: as is, URL-encoded, JSON \u-escaped, or JSON's short escape. */
function spell(ch: string, pick: number): string {
  const pct = [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  const options = [ch, pick % 2 ? pct.toUpperCase() : pct];
  let u = '';
  for (let i = 0; i < ch.length; i++) u += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
  options.push(pick % 3 === 0 ? u.toUpperCase().replace(/\\U/g, '\\u') : u);
  if (ch === '/') options.push('\\/');
  if (ch === '"') options.push('\\"');
  if (ch === '\\') options.push('\\\\');
  return options[pick % options.length]!;
}

// Secrets as the parsers let them through: at least SHORTEST_SECRET characters (shorter tokens are refused).
const secretArb = fc
  .string({ unit: 'grapheme', minLength: 6, maxLength: 24 })
  .filter((s) => s.trim().length >= 6 && s.length >= SHORTEST_SECRET && !s.includes('[redacted]'));
const spelledArb = secretArb.chain((secret) =>
  fc.array(fc.nat(11), { minLength: [...secret].length, maxLength: [...secret].length }).map((picks) => ({
    secret,
    spelled: [...secret].map((ch, i) => spell(ch, picks[i]!)).join(''),
  })),
);

afterEach(() => clearSecrets());

describe('redaction (property)', () => {
  it('removes a secret in any mix of raw, URL-encoded and JSON-escaped characters', () => {
    fc.assert(
      fc.property(spelledArb, fc.string(), fc.string(), ({ secret, spelled }, before, after) => {
        clearSecrets();
        registerSecret(secret);
        const out = redact(`${before}${spelled}${after}`);
        expect(out).toContain('[redacted]');
        expect(out).not.toContain(spelled);
        expect(out).not.toContain(secret);
      }),
      { numRuns: 300 },
    );
  });

  it('a token too short to redact without garbling every message is refused, and not repeated', () => {
    for (const short of ['t', 'abc', 'x'.repeat(SHORTEST_SECRET - 1)]) {
      clearSecrets();
      registerSecret(short);
      expect(knownSecrets()).toEqual([]);
      expect(redact('svc-snapshot: the token is set')).toBe('svc-snapshot: the token is set');
      let err: unknown;
      try {
        parseToken(short, 'SVC_TOKEN');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe(
        `the token in SVC_TOKEN is ${short.length} character${short.length === 1 ? '' : 's'} long; an API token is longer: check what is set there`,
      );
    }
    expect(parseToken('x'.repeat(SHORTEST_SECRET), '--token')).toEqual({
      value: 'x'.repeat(SHORTEST_SECRET),
      source: '--token',
    });
  });

  it('a message quoting the start of a body never keeps part of a secret the quote would cut', () => {
    const token = 'S3cretTok-ABCDEFGH1234';
    registerSecret(token);
    const route = routeById('users');
    const quotes: Array<(body: Buffer) => string> = [
      (body) => bodyHint(body),
      (body) => describeNotSpreadsheet(body, 'text/html'),
      (body) => {
        try {
          decodeBody(route.id, route, body);
        } catch (e) {
          return (e as Error).message;
        }
        return '';
      },
    ];
    for (const quote of quotes)
      for (let at = 0; at < 260; at++) {
        const body = Buffer.from(`<html>${'E'.repeat(at)}${encodeURIComponent(token)} and more text after it</html>`);
        const message = quote(body);
        expect(message, `at ${at}`).not.toMatch(/S3cret|%53%33/i);
        expect(message, `at ${at}`).not.toContain(token.slice(0, 6));
      }
  });

  it('leaves text without a secret as it is', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        clearSecrets();
        registerSecret('fake-token-for-tests');
        fc.pre(!text.includes('fake-token'));
        expect(redact(text)).toBe(text);
      }),
    );
  });

  it('the pre-publish scan finds every spelling in a file, across a chunk boundary', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-prop-'));
    try {
      await fc.assert(
        fc.asyncProperty(spelledArb, fc.integer({ min: 0, max: 40 }), async ({ secret, spelled }, back) => {
          const file = join(dir, 'f.json');
          const bytes = Buffer.from(spelled, 'utf8');
          const at = Math.max(0, SCAN_CHUNK_BYTES - Math.min(back, bytes.length));
          const buf = Buffer.alloc(at + bytes.length + 10, 0x20);
          bytes.copy(buf, at);
          writeFileSync(file, buf);
          expect(await secretInFileBytes(file, secretMatcher([secret])!)).toBe('token');
        }),
        { numRuns: 60 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the search as a file is written finds every spelling however its bytes are cut into pieces', () => {
    fc.assert(
      fc.property(spelledArb, fc.array(fc.nat(), { maxLength: 6 }), ({ secret, spelled }, cuts) => {
        const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from(spelled, 'utf8'), Buffer.from('"}')]);
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((x, y) => x - y);
        const search = new SecretSearch(secretMatcher([secret])!);
        let found = false;
        for (let i = 0, from = 0; i <= at.length; i++) {
          const to = i < at.length ? at[i]! : bytes.length;
          found = search.push(bytes.subarray(from, to)) || found;
          from = to;
        }
        expect(found).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

/** What escape.ts escapes, by Unicode's properties: controls, the invisible (default ignorable), the line separators. */
const CONTROL = /[\p{Cc}\p{Default_Ignorable_Code_Point}\u2028\u2029\ufff9-\ufffb]/u;

describe('control-character escaping (property)', () => {
  it('leaves no control character, C0, DEL, C1, bidi or line separator, in any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(escapeControl(s)).not.toMatch(CONTROL);
        expect(escapeForTerminal(s).replace(/[\n\t]/g, '')).not.toMatch(CONTROL);
      }),
      { numRuns: 500 },
    );
  });

  it('changes nothing else, and what it writes is a JSON string escape', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const escaped = escapeControl(s);
        // Inside a JSON string, the escapes read back as the original characters.
        const back = JSON.parse(`"${escaped.replace(/\\(?!u[0-9a-f]{4})/g, '\\\\').replace(/"/g, '\\"')}"`) as string;
        expect(back).toBe(s);
      }),
      { numRuns: 500 },
    );
  });

  it('escapes exactly those characters, every code point checked, in a spelling JSON reads back', () => {
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp === 0xd800) cp = 0xe000;
      const c = String.fromCodePoint(cp);
      const e = escapeControl(c);
      const ok = CONTROL.test(c) ? e !== c && JSON.parse(`"${e}"`) === c : e === c;
      if (!ok || escapeForTerminal(c) !== (cp === 9 || cp === 10 ? c : e)) wrong.push(cp.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('escapes soft hyphens, Hangul fillers, variation selectors and tag characters, each as \\uXXXX', () => {
    expect(escapeControl('a\u00adb\u3164c\ufe0fd\u{e0041}\u{e007f}e')).toBe(
      'a\\u00adb\\u3164c\\ufe0fd\\udb40\\udc41\\udb40\\udc7fe',
    );
    expect(escapeControl('\u00a0¬ 𝄞 \u{1d100} \u{1bc00} 😀')).toBe('\u00a0¬ 𝄞 \u{1d100} \u{1bc00} 😀');
  });

  it('escapes ESC, BEL, CSI and bidi overrides as \\uXXXX', () => {
    expect(escapeControl('a\u001b[2Jb\u0007c\u009bd\u202ee\u2028')).toBe('a\\u001b[2Jb\\u0007c\\u009bd\\u202ee\\u2028');
    expect(escapeForTerminal('line 1\nline\t2\r\u001b')).toBe('line 1\nline\t2\\u000d\\u001b');
  });
});

describe('realm ids in file names (property)', () => {
  it('every realm id gives a file name that fits, holds no separator and stays in the directory', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (realm) => {
        const c = realmFileComponent(realm);
        expect(c.length).toBeLessThanOrEqual(MAX_REALM_COMPONENT);
        expect(c).toMatch(/^[A-Za-z0-9._%~-]+$/);
        expect(c === '.' || c === '..').toBe(false);
        for (const id of ['vms-images', 'vms-active', 'vms-configs']) {
          const file = planRoute(routeById(id), realm).file;
          expect(Buffer.byteLength(file, 'utf8')).toBeLessThanOrEqual(255);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a lone surrogate in a realm id (valid JSON) is its WTF-8 bytes in the request and the file name, never a crash', () => {
    const lone = planRoute(routeById('vms-images'), '\ud800x');
    expect(lone.urlPath).toMatch(/=%ED%A0%80x$/);
    expect(realmFileComponent('\ud800x')).toBe('%ED%A0%80x');
    expect(realmFileComponent('\ud800x')).not.toBe(realmFileComponent('\ufffdx'));
    expect(() => planRoute(routeById('vms-active'), 'a\udfff\udc00')).not.toThrow();
    // A pair is one character, encoded as encodeURIComponent does.
    expect(planRoute(routeById('vms-images'), 'r\ud83d\ude00').urlPath).toContain(
      `=${encodeURIComponent('r\ud83d\ude00')}`,
    );
  });

  it('two different realm ids never share a file name', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ minLength: 100, maxLength: 300 })),
          { minLength: 2, maxLength: 30 },
        ),
        (realms) => {
          expect(new Set(realms.map(realmFileComponent)).size).toBe(realms.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a safe id as it is, and cuts a 300-character one with a hash', () => {
    expect(realmFileComponent('libvirt')).toBe('libvirt');
    const long = `r${'x'.repeat(299)}`;
    const c = realmFileComponent(long);
    expect(c).toMatch(/^rx{99}~[0-9a-f]{16}$/);
    expect(realmFileComponent(`${long}y`)).not.toBe(c);
  });
});

describe('URL credentials', () => {
  it('never leave userinfo in the text shown, parsed or not: a password holding // after a mistyped scheme too', () => {
    expect(withoutUserinfo('https:/ :  //@127.0.0.1:8443/x')).toBe('https:/127.0.0.1:8443/x');
    expect(withoutUserinfo('https:/admin:pa//ss@host/')).toBe('https:/host/');
    expect(withoutUserinfo('admin:pa//ss@host/')).toBe('host/');
    expect(withoutUserinfo('https://admin:pa//ss@host/')).toBe('https://host/');
  });

  it('never leave userinfo in the text shown, parsed or not (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 4 }),
        fc.constantFrom('https://', 'http://', '', 'https:/'),
        fc.constantFrom('127.0.0.1:8443/x', '[bad', 'host name/'),
        (user, password, scheme, rest) => {
          fc.pre(!rest.includes('@'));
          const shown = withoutUserinfo(`${scheme}${user}:${password}@${rest}`);
          expect(shown).not.toContain(`:${password}@`);
          expect(shown).not.toContain(`${user}:${password}`);
          expect(shown.endsWith(rest)).toBe(true);
        },
      ),
    );
  });
});

describe('file-system errors', () => {
  it('name the path, what happened and what to do for a real ENOSPC (writing /dev/full)', () => {
    let err: unknown;
    const fd = openSync('/dev/full', 'w');
    try {
      writeSync(fd, 'x');
    } catch (e) {
      err = e;
    } finally {
      closeSync(fd);
    }
    expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    const message = describeFsError(err, '/srv/out/svc-snapshot-2026-11-22/1-users (11-22-2026).json');
    expect(message).toMatch(
      /^no space is left on the device \(ENOSPC\) while writing \/srv\/out\/svc-snapshot-2026-11-22\/1-users \(11-22-2026\)\.json; nothing was published\. Free some space/,
    );
  });

  it('name the path for a real ENAMETOOLONG', () => {
    let err: unknown;
    const path = join(tmpdir(), 'n'.repeat(300));
    try {
      writeFileSync(path, 'x');
    } catch (e) {
      err = e;
    }
    expect(describeFsError(err)).toMatch(
      /a name is too long for the file system \(ENAMETOOLONG\) while writing .*n{300}; nothing was published\. Choose a shorter output directory/,
    );
  });

  it('leave other errors to the caller', () => {
    expect(describeFsError(new Error('boom'))).toBeUndefined();
  });
});

describe('JSON parse errors', () => {
  it('never quote the text', () => {
    for (const text of ['SECRET-CONTENT', '{"a": SECRET}', '<html>SECRET', '"SECRET', '[SECRET]']) {
      let err: unknown;
      try {
        JSON.parse(text);
      } catch (e) {
        err = e;
      }
      expect(describeJsonError(err, text)).not.toMatch(/SECRET/);
    }
  });
});

describe('TLS whatever NODE_TLS_REJECT_UNAUTHORIZED says', () => {
  let untrusted: FakeSite;
  const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  beforeAll(async () => {
    untrusted = await startFakeSite({ certs: getUntrustedCerts() });
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
    await untrusted.close();
  });

  it('the dispatcher refuses an untrusted certificate with the variable set to 0', async () => {
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    // The system store only: the untrusted CA is not in it.
    const c = new HttpClient({ timeoutMs: 5000, retries: 0, concurrency: 1, ca: undefined, userAgent: 'test' });
    const err = await c.read({ label: 'GET /api/users', url: `${untrusted.url}/api/users` }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await c.close();
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).kind).toBe('tls');
    expect(untrusted.backend.requests).toEqual([]);
  });
});
