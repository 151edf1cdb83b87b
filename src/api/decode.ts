import type { RouteDef } from './catalog.js';

/** A body that is not JSON of the route's shape; the message names the route and what arrived. */
export class BodyError extends Error {
  constructor(readonly route: string, readonly detail: string) {
    super(`${route}: ${detail}`);
    this.name = 'BodyError';
  }
}

function describeStart(body: Buffer): string {
  const text = body.subarray(0, 120).toString('utf8').replace(/\s+/g, ' ').trim();
  return text.length > 0 ? ` starting "${text.slice(0, 60)}${text.length > 60 ? '…' : ''}"` : '';
}

/**
 * Parses a 200 body and checks its outer shape (an array, or an object for
 * Get Realms). Records are validated later, one by one, by the build.
 */
export function decodeBody(route: string, def: Pick<RouteDef, 'shape'>, body: Buffer, contentType?: string): unknown {
  const type = contentType ? ` (${contentType.split(';')[0]})` : '';
  const text = body.toString('utf8');
  if (/^\s*</.test(text)) {
    throw new BodyError(route, `expected JSON but received ${body.length} bytes of HTML or XML${type}${describeStart(body)}; a login page or a proxy's error page answers instead of the API: check the base URL and any proxy`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new BodyError(route, `expected JSON but received ${body.length} bytes that do not parse${type} (${(e as Error).message.slice(0, 120)}); the body may be truncated`);
  }
  if (def.shape === 'array' && !Array.isArray(value)) {
    throw new BodyError(route, `expected a JSON array but received ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a JSON ${typeof value}`}`);
  }
  if (def.shape === 'object' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new BodyError(route, `expected a JSON object but received ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a JSON ${typeof value}`}`);
  }
  return value;
}
