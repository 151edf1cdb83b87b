import { BodyError, decodeBody } from '../body/decode.js';
import { FailedError, type TokenRejectedError } from '../errors.js';
import { auditAuth, tokenRefused } from '../http/auth.js';
import { bodyHint } from '../http/body-hint.js';
import type { Fetched, HttpClient } from '../http/client.js';
import { HttpError } from '../http/errors.js';
import type { Reporter } from '../progress/reporter.js';
import type { PlannedAuditRoute } from './catalog.js';
import type { ResolvedToken } from '../config/values.js';
import { redactedStart } from '../util/redact.js';
import { sha256Hex } from '../util/safe-read.js';

/** One request's entry in `_audit-manifest.json`. */
export interface AuditRouteRecord {
  /** Method and path, e.g. `POST /queries/logins/2037-12-31`; never the token. */
  route: string;
  /** `none` for GET /info, which is sent without the token. */
  auth: 'none' | 'token';
  status: number;
  file: string;
  /** Size and hash of `file` as written. */
  bytes: number;
  sha256: string;
  /** Only where `file` is not the response body itself (query files): size and hash of the body as received. */
  responseBytes?: number;
  responseSha256?: string;
  attempts: number;
  durationMs: number;
}

export interface AuditResponse {
  readonly planned: PlannedAuditRoute;
  readonly fetched: Fetched;
  /** The parsed JSON body; undefined for spreadsheets. */
  readonly json: unknown;
  readonly record: AuditRouteRecord;
}

/** An in-flight request cut short because another one failed first; never the error reported. */
export class CancelledError extends Error {}

const XLSX_ACCEPT =
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet, application/octet-stream;q=0.9, */*;q=0.5';

function header(res: Fetched, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function statusHint(p: PlannedAuditRoute, status: number): string {
  if (status === 400) {
    if (p.def.id === 'objects')
      return ' (bad request: check the object type and ids; the service may not support this type)';
    if (p.def.id === 'query') return ' (bad request: check the --param values)';
    return p.def.id === 'report-object' ? ' (bad request: check the object id)' : ' (bad request)';
  }
  if (status !== 404) return '';
  if (p.def.id === 'objects') return ' (not found: check the object type)';
  if (p.def.id === 'report-object') return ' (not found: check the object id)';
  if (p.def.path.includes('{id}')) return ' (not found, although the service lists this id)';
  return ' (not found: check --audit-url)';
}

function rejected(route: string, status: 401 | 403, token: ResolvedToken): TokenRejectedError {
  return tokenRefused({
    route,
    status,
    token: 'audit token',
    source: token.source,
    why: {
      401: 'it is missing, invalid or expired; create a token in the audit front end',
      403: 'it is not allowed this route; token access covers only what needs no administrator privileges',
    },
  });
}

export interface AuditFetcherDeps {
  readonly http: HttpClient;
  /** Told when a request ends, read or failed (for the metrics of a failed run). */
  readonly onEnded?: (state: 'read' | 'failed') => void;
  readonly reporter: Reporter;
  readonly auditUrl: string;
  readonly token: ResolvedToken;
}

/**
 * One request of the audit service: the token header on data routes, a 200
 * answer of the route's shape, or an error that stops the run (nothing is
 * published from a partial audit collection).
 */
export async function fetchAudit(
  deps: AuditFetcherDeps,
  p: PlannedAuditRoute,
  requestBody?: unknown,
): Promise<AuditResponse> {
  try {
    const res = await fetchAuditOnce(deps, p, requestBody);
    deps.onEnded?.('read');
    return res;
  } catch (err) {
    // A request cancelled because another failed (or the run was interrupted) did not fail itself.
    if (!(err instanceof CancelledError)) deps.onEnded?.('failed');
    throw err;
  }
}

async function fetchAuditOnce(
  deps: AuditFetcherDeps,
  p: PlannedAuditRoute,
  requestBody?: unknown,
): Promise<AuditResponse> {
  const headers: Record<string, string> = {};
  if (p.def.auth === 'token') Object.assign(headers, auditAuth(deps.token.value));
  if (p.def.shape === 'xlsx') headers.accept = XLSX_ACCEPT;
  let fetched: Fetched;
  deps.reporter.routeStarted(p.label);
  try {
    const post = p.def.method === 'POST';
    if (post) headers['content-type'] = 'application/json';
    const payload = post ? { method: 'POST' as const, body: JSON.stringify(requestBody ?? null) } : {};
    fetched = await deps.http.read({ label: p.label, url: deps.auditUrl + p.urlPath, headers, ...payload });
  } catch (err) {
    if (err instanceof HttpError) {
      if (err.kind === 'aborted') throw new CancelledError(err.message);
      throw new FailedError(`${err.message}; nothing was published`, { cause: err });
    }
    throw err;
  }
  const { status, body } = fetched;
  if (status === 401 || status === 403) {
    if (p.def.auth === 'token') throw rejected(p.label, status, deps.token);
    throw new FailedError(
      `${p.label}: HTTP ${status}, although this route needs no authentication; check --audit-url (a proxy may be ` +
        `asking for a login). Nothing was published.`,
    );
  }
  if (status !== 200) {
    throw new FailedError(
      `${p.label}: HTTP ${status}${statusHint(p, status)}${bodyHint(body, 'the service')}. Nothing was published.`,
    );
  }
  let json: unknown;
  if (p.def.shape === 'xlsx') {
    if (!isSpreadsheet(body)) {
      throw new FailedError(
        `${p.label}: the report did not answer with a spreadsheet (.xlsx) but with ` +
          `${describeNotSpreadsheet(body, header(fetched, 'content-type'))}. Nothing was published.`,
      );
    }
  } else {
    try {
      json = decodeBody(p.label, { shape: p.def.shape === 'array' ? 'array' : 'object' }, body, {
        contentType: header(fetched, 'content-type'),
        elements: 'any',
      });
    } catch (err) {
      if (err instanceof BodyError) throw new FailedError(`${err.message}. Nothing was published.`, { cause: err });
      throw err;
    }
  }
  const record: AuditRouteRecord = {
    route: p.label,
    auth: p.def.auth,
    status,
    file: p.file,
    bytes: body.length,
    sha256: sha256Hex(body),
    attempts: fetched.attempts,
    durationMs: fetched.durationMs,
  };
  const retries = fetched.attempts > 1 ? `, ${fetched.attempts} attempts` : '';
  deps.reporter.info(`ok      ${p.label} (${status}, ${body.length} bytes, ${fetched.durationMs} ms${retries})`);
  return { planned: p, fetched, json, record };
}

/** Every .xlsx is a zip archive, and a zip with entries starts with a local file header. */
const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

export function isSpreadsheet(body: Buffer): boolean {
  return body.length >= ZIP_SIGNATURE.length && body.subarray(0, ZIP_SIGNATURE.length).equals(ZIP_SIGNATURE);
}

function spreadsheetKindOf(body: Buffer): string {
  const text = body.subarray(0, 200).toString('utf8').trimStart();
  if (body.length === 0) return 'an empty body';
  if (/^[[{]/.test(text)) return `${body.length} bytes of JSON`;
  if (text.startsWith('<')) return `${body.length} bytes of HTML or XML`;
  if (body.subarray(0, 2).toString('latin1') === 'PK')
    return `${body.length} bytes of a zip archive with no entries or a damaged header`;
  return `${body.length} bytes that are not a spreadsheet`;
}

/** What arrived instead of a spreadsheet, e.g. `57 bytes of JSON (application/json) starting "{"error":…}"`. */
export function describeNotSpreadsheet(body: Buffer, contentType: string | undefined): string {
  const type = contentType ? ` (${contentType.split(';')[0]!.trim()})` : '';
  const printable = redactedStart(body, 100)
    .replace(/[^\x20-\x7E]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const start = printable !== '' ? ` starting "${printable.slice(0, 100)}${printable.length > 100 ? '…' : ''}"` : '';
  return `${spreadsheetKindOf(body)}${type}${start}`;
}
