import type { RouteDef } from './catalog.js';
import { checkJson } from '../exports/fast/json-scan.js';
import { FAST_PATHS } from '../exports/fast/switches.js';
import { escapeControl } from '../util/escape.js';
import { redact } from '../util/redact.js';
import { describeJsonError } from '../util/json-error.js';

/** A body that is not JSON of the route's shape; the message names the route and what arrived. */
export class BodyError extends Error {
  readonly detail: string;
  constructor(readonly route: string, detail: string) {
    // Redacted when built, as HttpError: the start of a body may echo a token.
    super(redact(`${route}: ${detail}`));
    this.name = 'BodyError';
    this.detail = redact(detail);
  }
}

export interface DecodeOptions {
  /** The response's Content-Type, when it came from a server. */
  readonly contentType?: string;
  /**
   * Whether the message may quote the start of the body (escaped). A body
   * read from a file is never quoted: the file may not be what its name says.
   */
  readonly quote?: boolean;
  /**
   * What a list's elements must be: `objects` (default) for the management
   * API, whose every list route returns records; `any` where the items have a
   * model of their own that says so (the audit service's query rows).
   */
  readonly elements?: 'objects' | 'any';
}

function describeStart(body: Buffer): string {
  const text = escapeControl(body.subarray(0, 120).toString('utf8').replace(/\s+/g, ' ').trim());
  return text.length > 0 ? ` starting "${text.slice(0, 60)}${text.length > 60 ? '…' : ''}"` : '';
}

function describeValue(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a JSON ${typeof value}`;
}

function isRecord(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Parses a 200 body and checks its outer shape (an array of objects, or an
 * object for Get Realms). Records are validated later, one by one, by the
 * build. The one check of a body, shared by a live run and a replay, so that
 * both refuse the same bodies the same way.
 */
export function decodeBody(route: string, def: Pick<RouteDef, 'shape'>, body: Buffer, options: DecodeOptions | string = {}): unknown {
  const opts: DecodeOptions = typeof options === 'string' ? { contentType: options } : options;
  const quote = opts.quote ?? true;
  const type = opts.contentType ? ` (${escapeControl(opts.contentType.split(';')[0]!.slice(0, 60))})` : '';
  const text = body.toString('utf8');
  if (/^\s*</.test(text)) {
    throw new BodyError(route, `expected JSON but received ${body.length} bytes of HTML or XML${type}${quote ? describeStart(body) : ''}; a login page or a proxy's error page answers instead of the API: check the base URL and any proxy`);
  }
  if (body[0] === 0x1f && body[1] === 0x8b) {
    throw new BodyError(route, `expected JSON but received ${body.length} bytes of gzip-compressed data${type}; the server or a proxy compressed the body unasked`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new BodyError(route, `expected JSON but received ${body.length} bytes that do not parse${type} (${describeJsonError(e, text)}); the body may be truncated or not JSON at all`);
  }
  assertShape(route, def, value, opts.elements ?? 'objects');
  return value;
}

function assertShape(route: string, def: Pick<RouteDef, 'shape'>, value: unknown, elements: 'objects' | 'any'): void {
  if (def.shape === 'array') {
    if (!Array.isArray(value)) throw new BodyError(route, `expected a JSON array but received ${describeValue(value)}`);
    if (elements === 'any') return;
    const bad = value.findIndex((v) => !isRecord(v));
    if (bad >= 0) {
      throw new BodyError(route, `expected a JSON array of objects but element ${bad} is ${describeValue(value[bad])}; the body has the wrong shape`);
    }
  }
  if (def.shape === 'object' && !isRecord(value)) {
    throw new BodyError(route, `expected a JSON object but received ${describeValue(value)}`);
  }
}

/**
 * Checks a body without keeping what it parses to, unless `keep`: the
 * byte-level check (checkJson, which builds nothing) vouches for the usual
 * body; anything it does not vouch for goes to JSON.parse, which has the last
 * word and the message. `count` is the number of records of a list.
 */
export function checkBody(route: string, def: Pick<RouteDef, 'shape'>, body: Buffer, opts: DecodeOptions & { keep?: boolean } = {}): { count?: number; value?: unknown } {
  const checked = opts.keep || !FAST_PATHS.jsonScan ? undefined : checkJson(body, def.shape, { objectElements: (opts.elements ?? 'objects') === 'objects' });
  if (checked !== undefined) return def.shape === 'array' ? { count: checked } : {};
  const value = decodeBody(route, def, body, opts);
  return { ...(Array.isArray(value) ? { count: value.length } : {}), ...(opts.keep ? { value } : {}) };
}
