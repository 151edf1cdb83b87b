import { UsageError } from '../errors.js';
import type { ParamDesc, QueryDesc, QueryParam } from './models.js';
import { parseCalendarDate } from '../config/values.js';

/**
 * How a `--param` value (always text on the command line) becomes the JSON
 * value sent in the body of POST /queries/{id}/{to}.
 *
 * The allowed parameter `type`s are "not shown" in the spec, so the obvious
 * names are recognised (case-insensitive):
 *
 *   number, float, double, decimal, real, numeric  → JSON number
 *   int, integer, long, short, int8…int64, uint…   → JSON number, whole
 *   bool, boolean                                  → true/false (also 1/0, yes/no)
 *   date                                           → "YYYY-MM-DD", checked to be a real date
 *   string, str, text                              → string
 *   <type>[], array, list                          → JSON array, comma-separated items of <type>
 *
 * Any other (or a missing) type follows the JSON type of the parameter's
 * declared default (number, boolean, array of strings), and falls back to a
 * string.
 */
type ParamKind = 'string' | 'number' | 'integer' | 'boolean' | 'date' | 'list';

export interface ParamTypeInfo {
  readonly kind: ParamKind;
  /** Element kind of a list. */
  readonly element?: Exclude<ParamKind, 'list'>;
}

/** Parameters filled from --from and --to rather than --param (README.md, "The audit service"). */
const DATE_PARAMS: Readonly<Record<string, '--from' | '--to'>> = { startDate: '--from', endDate: '--to' };

function scalarKind(type: string): Exclude<ParamKind, 'list'> | undefined {
  const t = type.trim().toLowerCase();
  if (['number', 'float', 'double', 'decimal', 'real', 'numeric'].includes(t)) return 'number';
  if (/^(u?int(8|16|32|64)?|integer|long|short)$/.test(t)) return 'integer';
  if (t === 'bool' || t === 'boolean') return 'boolean';
  if (t === 'date') return 'date';
  if (t === 'string' || t === 'str' || t === 'text') return 'string';
  return undefined;
}

function kindOfValue(value: unknown): Exclude<ParamKind, 'list' | 'date' | 'integer'> {
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  return 'string';
}

export function paramType(type: string | undefined, declaredDefault: unknown): ParamTypeInfo {
  const t = (type ?? '').trim().toLowerCase();
  const listOf = /^(.*)\[\]$/.exec(t)?.[1] ?? /^(?:array|list)(?:<(.*)>)?$/.exec(t)?.[1];
  if (listOf !== undefined || t === 'array' || t === 'list') {
    const first = Array.isArray(declaredDefault) ? declaredDefault[0] : undefined;
    return { kind: 'list', element: (listOf ? scalarKind(listOf) : undefined) ?? kindOfValue(first) };
  }
  const scalar = scalarKind(t);
  if (scalar) return { kind: scalar };
  if (Array.isArray(declaredDefault)) return { kind: 'list', element: kindOfValue(declaredDefault[0]) };
  return { kind: kindOfValue(declaredDefault) };
}

function convertScalar(kind: Exclude<ParamKind, 'list'>, raw: string, what: string): unknown {
  switch (kind) {
    case 'number':
    case 'integer': {
      const n = Number(raw);
      const whole = kind === 'integer';
      if (raw.trim() === '' || !(whole ? Number.isSafeInteger(n) : Number.isFinite(n)))
        throw new UsageError(`${what} must be a ${whole ? 'whole number' : 'number'} (got "${raw}")`);
      return n;
    }
    case 'boolean': {
      const v = raw.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(v)) return true;
      if (['false', '0', 'no'].includes(v)) return false;
      throw new UsageError(`${what} must be true or false (got "${raw}")`);
    }
    case 'date':
      return parseCalendarDate(what, raw);
    case 'string':
      return raw;
  }
}

/** Converts one `--param` value by its declared type (see the comment at the top). */
export function convertParam(what: string, info: ParamTypeInfo, raw: string): unknown {
  if (info.kind !== 'list') return convertScalar(info.kind, raw, what);
  if (raw === '') return [];
  return raw.split(',').map((item) => convertScalar(info.element ?? 'string', item.trim(), what));
}

function declaredDefault(p: QueryParam, global: ReadonlyMap<string, ParamDesc>): { has: boolean; value: unknown } {
  if (p.default !== undefined) return { has: true, value: p.default };
  const g = global.get(p.id);
  if (g && g.default !== undefined) return { has: true, value: g.default };
  return { has: false, value: undefined };
}

/**
 * The body of POST /queries/{id}/{to}: every parameter of the query (spec:
 * "for all parameters of the query"), keyed by parameter id, from its declared
 * default unless `--param` overrides it; startDate and endDate from --from and
 * --to. The query's own `type` and `default` win over those of GET
 * /queries/params for the same id.
 */
export function buildQueryBody(
  query: QueryDesc,
  globalParams: readonly ParamDesc[],
  overrides: ReadonlyMap<string, string>,
  period: { from: string; to: string },
) {
  const global = new Map(globalParams.map((p) => [p.id, p]));
  const body: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const p of query.params) {
    const dateFlag = DATE_PARAMS[p.id];
    if (dateFlag) {
      body[p.id] = dateFlag === '--from' ? period.from : period.to;
      sources[p.id] = dateFlag;
      continue;
    }
    const def = declaredDefault(p, global);
    const raw = overrides.get(p.id);
    if (raw !== undefined) {
      const type = p.type ?? global.get(p.id)?.type;
      const what = `--param ${p.id} (query ${query.id}, type ${type ?? 'not declared'})`;
      body[p.id] = convertParam(what, paramType(type, def.value), raw);
      sources[p.id] = '--param';
    } else if (def.has) {
      body[p.id] = def.value;
      sources[p.id] = 'default';
    } else {
      throw new UsageError(
        `query ${query.id} has no default for its parameter ${p.id}; give one with --param ${p.id}=<value>`,
      );
    }
  }
  return { body, sources };
}

/**
 * Every --param must name a parameter of at least one selected query; it then
 * applies to each selected query that declares it.
 */
export function checkParamNames(queries: readonly QueryDesc[], overrides: ReadonlyMap<string, string>): void {
  const valid = [...new Set(queries.flatMap((q) => q.params.map((p) => p.id)))]
    .filter((id) => !(id in DATE_PARAMS))
    .sort();
  for (const name of overrides.keys()) {
    const dateFlag = DATE_PARAMS[name];
    if (dateFlag) {
      throw new UsageError(
        `--param ${name} is not accepted: ${name} is taken from ${dateFlag}; give the period with --from and --to`,
      );
    }
    if (!valid.includes(name)) {
      const list =
        valid.length > 0 ? `they take: ${valid.join(', ')}` : 'they take no parameters besides startDate and endDate';
      throw new UsageError(`--param ${name}: no query given with --query takes a parameter "${name}"; ${list}`);
    }
  }
}
