import type { RouteDef } from '../api/catalog.js';
import { checkJson } from './json-scan.js';
import { escapeControl } from '../util/escape.js';
import { redact, redactedStart } from '../util/redact.js';
import { describeJsonError } from '../util/json-error.js';
import { MAX_SLICE_BYTES, SliceJsonError, SliceTooLongError, arraySlices, opensArray } from './slices.js';
import { bufferReader, type ByteReader } from './reader.js';

/** A body that is not JSON of the route's shape; the message names the route and what arrived. */
export class BodyError extends Error {
  readonly detail: string;
  constructor(
    readonly route: string,
    detail: string,
  ) {
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
  /** The size an array body is cut into slices of: arraySlices' own unless a test asks for others. */
  readonly sliceBytes?: number;
}

function describeStart(body: Buffer): string {
  const text = escapeControl(redactedStart(body, 60).replace(/\s+/g, ' ').trim());
  return text.length > 0 ? ` starting "${text.slice(0, 60)}${text.length > 60 ? '…' : ''}"` : '';
}

function describeValue(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a JSON ${typeof value}`;
}

/** Whether a parsed value is a JSON object (a record). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Why a list is not of objects: its first element that is not one, `index` elements of the body coming before the list. */
function notAnObject(list: unknown[], index: number): string | undefined {
  const i = list.findIndex((v) => !isRecord(v));
  if (i < 0) return undefined;
  return `expected a JSON array of objects but element ${index + i} is ${describeValue(list[i])}; the body has the wrong shape`;
}

/** `contentType` as shown in a message: ` (application/json)`, escaped and short; empty without one. */
function typeShown(opts: DecodeOptions): string {
  return opts.contentType ? ` (${escapeControl(opts.contentType.split(';')[0]!.slice(0, 60))})` : '';
}

/**
 * Parses a 200 body and checks its outer shape (an array of objects, or an
 * object for Get Realms). Records are validated later, one by one, by the
 * build. The one check of a body, shared by a live run and a replay, so that
 * both refuse the same bodies the same way. An array body is parsed a slice
 * at a time (decodeSlices), so its size is not limited by V8's longest
 * string; anything else is read whole, up to MAX_SLICE_BYTES.
 */
export function decodeBody(
  route: string,
  def: Pick<RouteDef, 'shape'>,
  body: Buffer,
  opts: DecodeOptions = {},
): unknown {
  const reader = bufferReader(body);
  if (opensArray(reader)) {
    const out: unknown[] = [];
    for (const list of decodeSlices(route, def, reader, opts)) for (const v of list) out.push(v);
    return out;
  }
  const quote = opts.quote ?? true;
  const type = typeShown(opts);
  // Only the start is needed to recognise a page or compressed data; a body too large to be one string never is one.
  const whole = body.length <= MAX_SLICE_BYTES;
  const text = body.toString('utf8', 0, whole ? body.length : 64 * 1024);
  if (/^\s*</.test(text)) {
    throw new BodyError(
      route,
      `expected JSON but received ${body.length} bytes of HTML or ` +
        `XML${type}${quote ? describeStart(body) : ''}; a login page or a proxy's error page answers instead of the ` +
        `API: check the base URL and any proxy`,
    );
  }
  if (body[0] === 0x1f && body[1] === 0x8b) {
    throw new BodyError(
      route,
      `expected JSON but received ${body.length} bytes of gzip-compressed data${type}; the ` +
        `server or a proxy compressed the body unasked`,
    );
  }
  if (!whole) {
    throw new BodyError(
      route,
      `expected a JSON ${def.shape} but received ${body.length} bytes${type} that do not ` +
        `open a JSON array; a body over ${MAX_SLICE_BYTES / 1024 / 1024} MB is only read as an array`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new BodyError(
      route,
      `expected JSON but received ${body.length} bytes that do not parse${type} ` +
        `(${describeJsonError(e, text)}); the body may be truncated or not JSON at all`,
    );
  }
  assertShape(route, def, value, opts.elements ?? 'objects');
  return value;
}

/**
 * The elements of a body that opens an array, a slice at a time, with the
 * checks and messages of decodeBody: a body that is not JSON, not of the
 * route's shape, or with an element that is not an object fails with
 * BodyError, after the slices before the fault were yielded (the caller
 * drops what it made of them). Nothing is yielded for an object route.
 */
export function* decodeSlices(
  route: string,
  def: Pick<RouteDef, 'shape'>,
  reader: ByteReader,
  opts: DecodeOptions = {},
): Generator<unknown[], void, void> {
  const objects = def.shape === 'array' && (opts.elements ?? 'objects') === 'objects';
  let index = 0;
  // As decodeBody of the whole text: a JSON fault anywhere is reported before an element of the wrong kind.
  let bad: string | undefined;
  try {
    for (const list of arraySlices(reader, opts.sliceBytes)) {
      if (objects && bad === undefined) bad = notAnObject(list, index);
      index += list.length;
      if (def.shape === 'array' && bad === undefined) yield list;
    }
  } catch (e) {
    if (e instanceof SliceJsonError) {
      throw new BodyError(
        route,
        `expected JSON but received ${reader.size} bytes that do not ` +
          `parse${typeShown(opts)} (${e.describe}); the body may be truncated or not JSON at all`,
      );
    }
    if (e instanceof SliceTooLongError) {
      throw new BodyError(
        route,
        `received ${reader.size} bytes${typeShown(opts)} in which ${e.message}; records that large are not read`,
      );
    }
    throw e;
  }
  if (def.shape === 'object') throw new BodyError(route, `expected a JSON object but received ${describeValue([])}`);
  if (bad !== undefined) throw new BodyError(route, bad);
}

function assertShape(route: string, def: Pick<RouteDef, 'shape'>, value: unknown, elements: 'objects' | 'any'): void {
  if (def.shape === 'array') {
    if (!Array.isArray(value)) throw new BodyError(route, `expected a JSON array but received ${describeValue(value)}`);
    if (elements === 'any') return;
    const bad = notAnObject(value, 0);
    if (bad !== undefined) throw new BodyError(route, bad);
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
export function checkBody(
  route: string,
  def: Pick<RouteDef, 'shape'>,
  body: Buffer,
  opts: DecodeOptions & { keep?: boolean } = {},
): { count?: number; value?: unknown } {
  const checked = opts.keep
    ? undefined
    : checkJson(body, def.shape, { objectElements: (opts.elements ?? 'objects') === 'objects' });
  if (checked !== undefined) return def.shape === 'array' ? { count: checked } : {};
  if (!opts.keep) {
    const reader = bufferReader(body);
    if (opensArray(reader)) return { count: countSlices(route, def, reader, opts) };
  }
  const value = decodeBody(route, def, body, opts);
  return { ...(Array.isArray(value) ? { count: value.length } : {}), ...(opts.keep ? { value } : {}) };
}

/** checkBody of a body read by range (a large file read back): every slice parsed and dropped; the number of elements. */
export function countSlices(
  route: string,
  def: Pick<RouteDef, 'shape'>,
  reader: ByteReader,
  opts: DecodeOptions = {},
): number {
  let count = 0;
  for (const list of decodeSlices(route, def, reader, opts)) count += list.length;
  return count;
}
