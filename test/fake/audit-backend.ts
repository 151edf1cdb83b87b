import { http, HttpResponse, type HttpHandler } from 'msw';
import { AUDIT_ROUTES, type AuditRouteId } from '../../src/audit/catalog.js';
import { makeXlsx, type Cell } from './audit-xlsx.js';

/**
 * The fake audit service (spec/audit-api.md): msw handlers generated from the
 * audit route catalog over a small hand-written, deterministic dataset. The
 * shapes are written from the spec, not imported from src/audit/models.ts, so
 * the fake is an independent check of the models.
 *
 * Tokens here are obviously fake: 22 letters or digits followed by `==`.
 */
export const FAKE_AUDIT_TOKEN = 'FakeAuditToken00000000==';
/** Well-formed but not the service's token: answered with 401. */
export const WRONG_FAKE_AUDIT_TOKEN = 'FakeAuditTokenWrong000==';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

interface ParamSpec {
  id: string;
  name?: string;
  default?: Json;
  desc: string;
  type: string;
}

interface QuerySpec {
  id: string;
  name: string;
  desc: string;
  tags: string[];
  returnTypes: string[];
  returnNames: string[];
  params: ParamSpec[];
  charts: Json[];
}

interface ReportSpec {
  id: string;
  name: string;
  desc: string;
  objType: string;
  objParam: string;
  queryIDs: { query_id: string[]; queryParams: Array<Record<string, Json>> };
}

interface AlertTypeSpec {
  name: string;
  severity: 'info' | 'low' | 'medium' | 'high' | 'critical';
  sType: string;
  sField: string;
}

interface AlertSpec {
  date: string;
  timestamp: number;
  type: string;
  info: Json;
}

interface AuditDataset {
  info: { version: string; name: string };
  params: ParamSpec[];
  tags: Array<{ id: string; name: string; desc: string; cat: string; pri: number }>;
  queries: QuerySpec[];
  reports: ReportSpec[];
  alertTypes: Record<string, AlertTypeSpec>;
  alerts: AlertSpec[];
  logins: Array<[string, string, number]>;
  vmUsage: Array<[string, string, number, boolean]>;
  objects: Record<string, Array<Record<string, Json>>>;
}

const START: ParamSpec = {
  id: 'startDate',
  name: 'Start date',
  default: '1970-01-01',
  desc: 'first day of the period',
  type: 'date',
};
const END: ParamSpec = {
  id: 'endDate',
  name: 'End date',
  default: '2037-12-31',
  desc: 'last day of the period',
  type: 'date',
};

function alert(date: string, hour: number, type: string, info: Json): AlertSpec {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return { date, timestamp: Date.UTC(y, m - 1, d, hour) / 1000, type, info };
}

function auditDataset(): AuditDataset {
  return {
    info: { version: '4.2.0-fake', name: 'Fake Audit Service' },
    params: [
      START,
      END,
      { id: 'user', default: '', desc: 'user id; empty for every user', type: 'string' },
      { id: 'limit', default: 100, desc: 'most rows returned', type: 'int' },
      { id: 'includeSystem', default: false, desc: 'include system VMs', type: 'bool' },
      { id: 'minHours', default: 0.5, desc: 'least running hours', type: 'number' },
      { id: 'severities', default: ['high', 'critical'], desc: 'alert severities counted', type: 'string[]' },
    ],
    tags: [
      { id: 'access', name: 'Access', desc: 'logins and sessions', cat: 'security', pri: 1 },
      { id: 'usage', name: 'Usage', desc: 'resource consumption', cat: 'operations', pri: 2 },
      { id: 'alerts', name: 'Alerts', desc: 'alert statistics', cat: 'security', pri: 3 },
    ],
    queries: [
      {
        id: 'logins',
        name: 'Logins per user and day',
        desc: 'successful logins in the period',
        tags: ['access'],
        returnTypes: ['date', 'string', 'int'],
        returnNames: ['date', 'user', 'logins'],
        params: [
          START,
          END,
          { id: 'user', name: 'User', default: '', desc: 'user id; empty for every user', type: 'string' },
          { id: 'limit', name: 'Limit', default: 100, desc: 'most rows returned', type: 'int' },
        ],
        charts: [{ type: 'bar', x: 'date', y: 'logins' }],
      },
      {
        id: 'vm-usage',
        name: 'VM running hours',
        desc: 'hours each VM ran in the period',
        tags: ['usage'],
        returnTypes: ['string', 'string', 'float', 'bool'],
        returnNames: ['vm', 'owner', 'hours', 'system'],
        params: [
          START,
          END,
          { id: 'includeSystem', name: 'Include system VMs', default: false, desc: 'include system VMs', type: 'bool' },
          { id: 'minHours', name: 'Minimum hours', default: 0.5, desc: 'least running hours', type: 'number' },
        ],
        charts: [],
      },
      {
        id: 'top-alerts',
        name: 'Most frequent alerts',
        desc: 'alert types by count, up to the end date',
        tags: ['alerts'],
        returnTypes: ['string', 'int'],
        returnNames: ['type', 'count'],
        params: [
          { id: 'limit', name: 'Limit', default: 5, desc: 'most rows returned', type: 'int' },
          {
            id: 'severities',
            name: 'Severities',
            default: ['high', 'critical'],
            desc: 'alert severities counted',
            type: 'string[]',
          },
        ],
        charts: [],
      },
    ],
    reports: [
      {
        id: 'monthly-access',
        name: 'Monthly access report',
        desc: 'logins of every user',
        objType: '',
        objParam: '',
        queryIDs: { query_id: ['logins'], queryParams: [{ limit: 100 }] },
      },
      {
        id: 'user-activity',
        name: 'User activity',
        desc: 'everything one user did',
        objType: 'user',
        objParam: 'userId',
        queryIDs: { query_id: ['logins'], queryParams: [{ user: '$userId' }] },
      },
      {
        id: 'vm-inventory',
        name: 'VM inventory',
        desc: 'running hours of every VM',
        objType: '',
        objParam: '',
        queryIDs: { query_id: ['vm-usage'], queryParams: [{}] },
      },
    ],
    alertTypes: {
      'login-failed': { name: 'Failed login', severity: 'medium', sType: 'user', sField: 'user' },
      'admin-login': { name: 'Administrator login', severity: 'info', sType: 'user', sField: 'user' },
      'quota-exceeded': { name: 'Quota exceeded', severity: 'low', sType: 'project', sField: 'project' },
      'cert-expiring': { name: 'Certificate about to expire', severity: 'high', sType: 'server', sField: 'host' },
      'vm-escape': { name: 'Hypervisor escape attempt', severity: 'critical', sType: 'vm', sField: 'vm' },
    },
    alerts: [
      alert('2026-09-28', 8, 'admin-login', { user: 'alice' }),
      alert('2026-10-02', 9, 'login-failed', { user: 'bob', attempts: 3 }),
      alert('2026-10-02', 10, 'login-failed', { user: 'bob', attempts: 5 }),
      alert('2026-10-09', 14, 'quota-exceeded', { project: 'genomics' }),
      alert('2026-10-15', 3, 'cert-expiring', { host: 'ldap.example.org', days: 14 }),
      alert('2026-10-21', 11, 'login-failed', { user: 'carol', attempts: 4 }),
      alert('2026-10-30', 16, 'admin-login', { user: 'alice' }),
      alert('2026-11-03', 1, 'vm-escape', { vm: 'vm-03' }),
      alert('2026-11-05', 12, 'legacy-check', { note: 'type retired from the alert map' }),
      alert('2026-11-08', 9, 'quota-exceeded', { project: 'climate' }),
      alert('2026-11-12', 7, 'login-failed', { user: 'dave', attempts: 6 }),
      alert('2026-11-14', 18, 'cert-expiring', { host: 'audit.example.org', days: 7 }),
      alert('2026-11-20', 22, 'admin-login', { user: 'alice' }),
    ],
    logins: [
      ['2026-10-01', 'alice', 4],
      ['2026-10-01', 'bob', 2],
      ['2026-10-07', 'carol', 1],
      ['2026-10-14', 'alice', 3],
      ['2026-10-20', 'dave', 5],
      ['2026-10-28', 'bob', 1],
      ['2026-11-02', 'alice', 6],
      ['2026-11-09', 'carol', 2],
      ['2026-11-16', 'dave', 3],
      ['2026-11-20', 'alice', 2],
    ],
    vmUsage: [
      ['vm-01', 'alice', 120.5, false],
      ['vm-02', 'bob', 12, false],
      ['vm-03', 'carol', 0.25, false],
      ['vm-04', 'system', 744, true],
    ],
    objects: {
      user: [
        { id: 'alice', name: 'Alice Example', role: 'manager' },
        { id: 'bob', name: 'Bob Example', role: 'user' },
        { id: 'carol', name: 'Carol Example', role: 'user' },
        { id: 'dave', name: 'Dave Example', role: 'user' },
      ],
      vm: [
        { id: 'vm-01', owner: 'alice', cores: 4 },
        { id: 'vm-02', owner: 'bob', cores: 2 },
        { id: 'vm-03', owner: 'carol', cores: 8 },
        { id: 'vm-04', owner: 'system', cores: 1 },
      ],
      // The types a real audit service answers to (the help's examples use them); the lowercase ones above predate them.
      User: [
        { id: 'alice', name: 'Alice Example', role: 'manager' },
        { id: 'bob', name: 'Bob Example', role: 'user' },
      ],
      Team: [{ id: 'team-7', name: 'Research' }],
      Drive: [
        { id: 'drive-01', owner: 'alice', capacity: 107374182400 },
        { id: 'drive-02', owner: 'bob', capacity: 53687091200 },
      ],
      Project: [{ id: 'p-1', name: 'Genomics' }],
    },
  };
}

interface AuditFaults {
  /** Report ids whose download answers 200 with a JSON error body instead of a spreadsheet. */
  reportAsJson?: readonly string[];
  /** Every route that needs a token answers this status, whatever token is sent. */
  rejectAll?: 401 | 403;
  /** These routes answer 200 with an HTML login page, as a misconfigured proxy would. */
  htmlLoginPage?: readonly AuditRouteId[];
  /** These routes answer this status with a JSON error body. */
  status?: Partial<Record<AuditRouteId, number>>;
}

export interface AuditBackendOptions {
  readonly token?: string;
  readonly faults?: AuditFaults;
  readonly dataset?: AuditDataset;
}

/** What the fake saw; whether a token came and matched, never its value. */
interface SeenAuditRequest {
  readonly method: string;
  readonly path: string;
  readonly token: 'none' | 'valid' | 'invalid';
  readonly body?: unknown;
}

export interface AuditBackend {
  readonly handlers: HttpHandler[];
  readonly dataset: AuditDataset;
  readonly requests: SeenAuditRequest[];
}

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function error(status: number, message: string): Response {
  return HttpResponse.json({ error: message }, { status });
}

function param(params: Record<string, string | readonly string[] | undefined>, name: string): string {
  const v = params[name];
  return typeof v === 'string' ? v : '';
}

/** The type check a real service would do on a query body, by the declared parameter types. */
function checkType(p: ParamSpec, value: unknown): string | undefined {
  const ok =
    p.type === 'date'
      ? typeof value === 'string' && DATE.test(value)
      : p.type === 'int'
        ? Number.isInteger(value)
        : p.type === 'number'
          ? typeof value === 'number'
          : p.type === 'bool'
            ? typeof value === 'boolean'
            : p.type === 'string[]'
              ? Array.isArray(value) && value.every((x) => typeof x === 'string')
              : typeof value === 'string';
  return ok ? undefined : `parameter ${p.id} must be of type ${p.type}`;
}

function runQuery(data: AuditDataset, q: QuerySpec, endDate: string, body: Record<string, unknown>): Json[][] {
  const from = typeof body.startDate === 'string' ? body.startDate : '1970-01-01';
  const to = typeof body.endDate === 'string' && body.endDate < endDate ? body.endDate : endDate;
  switch (q.id) {
    case 'logins': {
      const user = body.user as string;
      return data.logins
        .filter(([d, u]) => d >= from && d <= to && (user === '' || u === user))
        .slice(0, body.limit as number);
    }
    case 'vm-usage':
      return data.vmUsage.filter(
        ([, , hours, system]) => hours >= (body.minHours as number) && (!system || body.includeSystem === true),
      );
    case 'top-alerts': {
      const severities = body.severities as string[];
      const counts = new Map<string, number>();
      for (const a of data.alerts) {
        const t = data.alertTypes[a.type];
        if (a.date <= endDate && t && severities.includes(t.severity))
          counts.set(a.type, (counts.get(a.type) ?? 0) + 1);
      }
      return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, body.limit as number);
    }
    default:
      return [];
  }
}

function reportSheet(
  data: AuditDataset,
  r: ReportSpec,
  from: string,
  to: string,
  objectId: string | undefined,
): Buffer {
  const queryId = r.queryIDs.query_id[0]!;
  const q = data.queries.find((x) => x.id === queryId)!;
  const body: Record<string, unknown> = { startDate: from, endDate: to };
  for (const p of q.params) if (!(p.id in body)) body[p.id] = p.default;
  if (objectId !== undefined && r.objParam) body.user = objectId;
  const rows: Cell[][] = [
    ['Report', r.name],
    ['Period', from, to],
    ...(objectId !== undefined ? [[r.objParam, objectId]] : []),
    [],
    q.returnNames,
    ...runQuery(data, q, to, body).map((row) => row.map((v): Cell => (typeof v === 'number' ? v : String(v)))),
  ];
  return makeXlsx(r.name, rows);
}

/** Handlers for every route of the audit catalog, over `dataset`. */
export function createAuditBackend(options: AuditBackendOptions = {}): AuditBackend {
  const token = options.token ?? FAKE_AUDIT_TOKEN;
  const faults = options.faults ?? {};
  const data = options.dataset ?? auditDataset();
  const requests: SeenAuditRequest[] = [];

  type Params = Record<string, string | readonly string[] | undefined>;
  type Resolver = (p: Params, body: unknown) => Response;
  const json = (value: unknown) => () => HttpResponse.json(value as Json);

  const resolvers: Record<AuditRouteId, Resolver> = {
    info: json(data.info),
    'queries-params': json(data.params),
    'tags-list': json(data.tags),
    'queries-list': json(data.queries),
    'reports-list': json(data.reports),
    'alerts-list': json(data.alertTypes),
    alerts: (p) => {
      const from = param(p, 'from');
      const to = param(p, 'to');
      if (!DATE.test(from) || !DATE.test(to)) return error(400, 'dates must be YYYY-MM-DD');
      return HttpResponse.json(data.alerts.filter((a) => a.date >= from && a.date <= to));
    },
    objects: (p, body) => {
      const list = data.objects[param(p, 'type')];
      if (!list) return error(400, `unknown object type ${param(p, 'type')}`);
      if (!DATE.test(param(p, 'to'))) return error(400, 'end date must be YYYY-MM-DD');
      if (!Array.isArray(body) || !body.every((x) => typeof x === 'string'))
        return error(400, 'body must be an array of ids');
      return HttpResponse.json(body.length === 0 ? list : list.filter((o) => body.includes(o.id as string)));
    },
    query: (p, body) => {
      const q = data.queries.find((x) => x.id === param(p, 'id'));
      if (!q) return error(404, `no query ${param(p, 'id')}`);
      if (!DATE.test(param(p, 'to'))) return error(400, 'end date must be YYYY-MM-DD');
      if (!body || typeof body !== 'object' || Array.isArray(body))
        return error(400, 'body must be a map of parameters');
      const b = body as Record<string, unknown>;
      for (const qp of q.params) {
        if (!(qp.id in b)) return error(400, `missing parameter ${qp.id}`);
        const problem = checkType(qp, b[qp.id]);
        if (problem) return error(400, problem);
      }
      const extra = Object.keys(b).filter((k) => !q.params.some((qp) => qp.id === k));
      if (extra.length > 0) return error(400, `unknown parameter ${extra[0]}`);
      return HttpResponse.json(runQuery(data, q, param(p, 'to'), b));
    },
    report: (p) => report(p, undefined),
    'report-object': (p) => report(p, param(p, 'objectId')),
  };

  function report(p: Params, objectId: string | undefined): Response {
    const r = data.reports.find((x) => x.id === param(p, 'id'));
    if (!r) return error(404, `no report ${param(p, 'id')}`);
    if (r.objParam && objectId === undefined) return error(400, `report ${r.id} needs ${r.objParam}`);
    if (faults.reportAsJson?.includes(r.id))
      return HttpResponse.json({ error: 'report engine unavailable', report: r.id });
    const xlsx = reportSheet(data, r, param(p, 'from'), param(p, 'to'), objectId);
    return new HttpResponse(new Uint8Array(xlsx), {
      status: 200,
      headers: { 'content-type': XLSX_TYPE, 'content-length': String(xlsx.length) },
    });
  }

  const handlers = AUDIT_ROUTES.map((def) => {
    // `*` matches any origin and path prefix, so the same handlers serve any fake server.
    const pattern = `*${def.path.replace(/\{(\w+)\}/g, ':$1')}`;
    const method = def.method === 'GET' ? http.get : http.post;
    return method(pattern, async ({ request, params }) => {
      const sent = request.headers.get('x-access-token');
      const seenToken = sent === null ? 'none' : sent === token ? 'valid' : 'invalid';
      let body: unknown;
      if (def.method === 'POST') {
        try {
          body = await request.json();
        } catch {
          body = undefined;
        }
      }
      requests.push({
        method: def.method,
        path: new URL(request.url).pathname,
        token: seenToken,
        ...(body !== undefined ? { body } : {}),
      });
      const forced = faults.status?.[def.id];
      if (forced !== undefined) return error(forced, `fault: HTTP ${forced}`);
      if (faults.htmlLoginPage?.includes(def.id)) {
        return new HttpResponse('<!doctype html><html><body><form action="/login">Sign in</form></body></html>', {
          headers: { 'content-type': 'text/html' },
        });
      }
      if (def.auth === 'token') {
        if (faults.rejectAll)
          return error(faults.rejectAll, faults.rejectAll === 401 ? 'authentication required' : 'forbidden');
        if (seenToken !== 'valid') return error(401, 'authentication required');
      }
      return resolvers[def.id](params, body);
    });
  });
  return { handlers, dataset: data, requests };
}
