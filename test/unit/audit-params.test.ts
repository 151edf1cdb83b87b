import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { QueryDesc } from '../../src/audit/models.js';
import { buildQueryBody, checkParamNames, convertParam, paramType } from '../../src/audit/params.js';

describe('audit query parameter types', () => {
  it('recognises the obvious type names', () => {
    expect(paramType('int', undefined)).toEqual({ kind: 'integer' });
    expect(paramType('Integer', undefined)).toEqual({ kind: 'integer' });
    expect(paramType('int64', undefined)).toEqual({ kind: 'integer' });
    expect(paramType('float', undefined)).toEqual({ kind: 'number' });
    expect(paramType('number', undefined)).toEqual({ kind: 'number' });
    expect(paramType('bool', undefined)).toEqual({ kind: 'boolean' });
    expect(paramType('date', undefined)).toEqual({ kind: 'date' });
    expect(paramType('string', 5)).toEqual({ kind: 'string' });
    expect(paramType('string[]', undefined)).toEqual({ kind: 'list', element: 'string' });
    expect(paramType('int[]', undefined)).toEqual({ kind: 'list', element: 'integer' });
    expect(paramType('list', ['a'])).toEqual({ kind: 'list', element: 'string' });
  });

  it('follows the declared default for an unknown or missing type, and falls back to string', () => {
    expect(paramType('duration', 10)).toEqual({ kind: 'number' });
    expect(paramType(undefined, true)).toEqual({ kind: 'boolean' });
    expect(paramType('weird', [1, 2])).toEqual({ kind: 'list', element: 'number' });
    expect(paramType('weird', 'x')).toEqual({ kind: 'string' });
    expect(paramType(undefined, undefined)).toEqual({ kind: 'string' });
  });

  it('converts values and refuses ones that do not fit', () => {
    expect(convertParam('p', { kind: 'integer' }, '42')).toBe(42);
    expect(() => convertParam('p', { kind: 'integer' }, '4.2')).toThrow(UsageError);
    expect(() => convertParam('p', { kind: 'integer' }, '4.2')).toThrow('p must be a whole number (got "4.2")');
    expect(() => convertParam('p', { kind: 'integer' }, '')).toThrow(UsageError);
    expect(convertParam('p', { kind: 'number' }, '0.25')).toBe(0.25);
    expect(() => convertParam('p', { kind: 'number' }, 'abc')).toThrow(UsageError);
    expect(() => convertParam('p', { kind: 'number' }, 'abc')).toThrow('p must be a number (got "abc")');
    expect(convertParam('p', { kind: 'boolean' }, 'YES')).toBe(true);
    expect(convertParam('p', { kind: 'boolean' }, '0')).toBe(false);
    expect(() => convertParam('p', { kind: 'boolean' }, 'maybe')).toThrow(UsageError);
    expect(convertParam('p', { kind: 'date' }, '2026-11-21')).toBe('2026-11-21');
    expect(() => convertParam('p', { kind: 'date' }, '2026-02-30')).toThrow(UsageError);
    expect(convertParam('p', { kind: 'string' }, ' 007 ')).toBe(' 007 ');
    expect(convertParam('p', { kind: 'list', element: 'integer' }, '1, 2,3')).toEqual([1, 2, 3]);
    expect(convertParam('p', { kind: 'list', element: 'string' }, '')).toEqual([]);
  });
});

const LOGINS = QueryDesc.parse({
  id: 'logins',
  name: 'Logins',
  returnTypes: ['date', 'string', 'int'],
  returnNames: ['date', 'user', 'logins'],
  params: [
    { id: 'startDate', type: 'date', default: '1970-01-01' },
    { id: 'endDate', type: 'date', default: '2037-12-31' },
    { id: 'user', type: 'string', default: '' },
    { id: 'limit', default: 100 },
    { id: 'flag' },
  ],
});
const GLOBAL = [
  { id: 'limit', type: 'int', default: 50 },
  { id: 'flag', type: 'bool', default: false },
];
const PERIOD = { from: '2026-11-01', to: '2026-11-30' };

describe('audit query bodies', () => {
  it('sends every parameter: declared defaults, --param overrides, and the period from --from/--to', () => {
    const plan = buildQueryBody(LOGINS, GLOBAL, new Map([['limit', '7']]), PERIOD);
    expect(plan.body).toEqual({ startDate: '2026-11-01', endDate: '2026-11-30', user: '', limit: 7, flag: false });
    expect(plan.sources).toEqual({
      startDate: '--from',
      endDate: '--to',
      user: 'default',
      limit: '--param',
      flag: 'default',
    });
  });

  it('takes a missing type or default from GET /queries/params', () => {
    expect(() => buildQueryBody(LOGINS, GLOBAL, new Map([['limit', '7.5']]), PERIOD)).toThrow(/whole number/);
    expect(buildQueryBody(LOGINS, GLOBAL, new Map([['flag', 'true']]), PERIOD).body.flag).toBe(true);
  });

  it('asks for a value when no default is declared anywhere', () => {
    expect(() => buildQueryBody(LOGINS, [], new Map(), PERIOD)).toThrow(
      /no default for its parameter flag; give one with --param flag=<value>/,
    );
  });

  it('refuses --param names no selected query takes, naming the valid ones, and the period parameters', () => {
    expect(() => checkParamNames([LOGINS], new Map([['colour', 'red']]))).toThrow(/they take: flag, limit, user/);
    expect(() => checkParamNames([LOGINS], new Map([['startDate', '2026-01-01']]))).toThrow(/taken from --from/);
    expect(() => checkParamNames([LOGINS], new Map([['user', 'bob']]))).not.toThrow();
  });
});
