import { describe, expect, it } from 'vitest';
import { CATALOG, EXPORTS } from '../../src/exports/catalog.js';
import { cellOf, cellTypeOf, mapHoldsText, sheetColumns, splitEntry } from '../../src/sheets/columns.js';
import type { ReadableManifest } from '../../src/manifests.js';
import { sheetNames, writeSpreadsheets, type SheetSink } from '../../src/sheets/write.js';
import { parseFormats } from '../../src/config/values.js';
import { columnLetters, xmlText } from '../../src/sheets/xlsx.js';
import { MAP_COLUMNS, TIMESTAMP_COLUMNS } from '../helpers/sheet-expectations.js';
import { unzip } from '../helpers/unzip.js';
import { secretMatcher } from '../../src/publish/scan.js';
import { readFileSync } from 'node:fs';
import { FailedError } from '../../src/errors.js';
import { clearSigningSecrets, loadSigningKey } from '../../src/sign/key.js';
import { clearSecrets } from '../../src/util/redact.js';
import { hasSshKeygen, keyDir, makeKey, removeKeys } from '../helpers/ssh-keys.js';

function manifest(exports: Array<{ export: string; count: number }>): ReadableManifest {
  return {
    kind: 'snapshot',
    source: 'replay',
    tool: { name: 'svc-snapshot', version: '1.0.0' },
    baseUrl: 'https://platform.example.org',
    time: '2026-11-21T02:00:00.000Z',
    date: '2026-11-21',
    authMode: 'token',
    realms: { source: 'GET /api/realms', ids: [] },
    routes: [],
    exports: exports.map((e) => ({ ...e, file: `${e.count}-${e.export} (11-21-2026).json`, available: true })),
    nullFields: [{ export: 'users', field: 'role', reason: '=evil() reason' }],
    validation: { issues: 1, samples: [{ route: 'GET /api/users', index: 0, path: 'role', message: 'bad' }] },
    drift: [{ route: 'GET /api/users', unknownFields: ['=cmd|calc', 'tier'] }],
    complete: true,
  };
}

/** Runs writeSpreadsheets into memory and returns the files written. */
async function writeAll(
  m: ReadableManifest,
  data: Record<string, Array<Record<string, unknown>>>,
  formats: Array<'csv' | 'xlsx'>,
  maxRows?: number,
) {
  const files = new Map<string, Buffer>();
  const sink: SheetSink = async (name, chunks) => {
    const parts: Buffer[] = [];
    for await (const c of chunks) parts.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c));
    files.set(name, Buffer.concat(parts));
  };
  const written = await writeSpreadsheets(
    { manifest: m, records: async (e) => data[e.export]! },
    formats,
    sink,
    maxRows !== undefined ? { maxRows } : {},
  );
  return { files, written };
}

const USERS = [
  { id: 'u1', firstName: '=1+1', lastName: 'Weiß', email: '@x', role: null, permissions: [1, 2] },
  { id: 'u2', firstName: 'bell\u0007', lastName: '_x0041_', email: 'b', role: 'Admin', permissions: [] },
  { id: 'u3', firstName: 'c', lastName: 'd', email: 'e', role: 'User', permissions: null },
];

describe('which columns are timestamps and maps', () => {
  it("takes timestamps from the models (the spec's ts fields) and maps from the catalog, for every export", () => {
    for (const exp of EXPORTS) {
      expect(
        exp.columns.filter((c) => cellTypeOf(exp, c) === 'timestamp').map((c) => c.name),
        exp.name,
      ).toEqual(TIMESTAMP_COLUMNS[exp.name]);
      expect(
        exp.columns.filter((c) => cellTypeOf(exp, c) === 'entries').map((c) => c.name),
        exp.name,
      ).toEqual(MAP_COLUMNS[exp.name] ?? []);
    }
  });

  it('spreads a map into one column per key found, sorted, and keeps a map without keys as one column', () => {
    const teams = [
      { id: 't1', quotas: ['ssd=5', 'a=b=7'], teamQuotas_storage: [] },
      { id: 't2', quotas: ['hdd=1'], teamQuotas_storage: null },
    ];
    expect(sheetColumns('teams', teams).map((c) => c.header)).toEqual([
      'id',
      'quotas.a=b',
      'quotas.hdd',
      'quotas.ssd',
      'teamQuotas_storage',
    ]);
    expect(splitEntry('a=b=7')).toEqual({ key: 'a=b', value: '7' });
  });

  it("knows from the models which maps hold texts (a VM's drives) and which numbers", () => {
    // Every map column the catalog splits, and what its model says its values are.
    const maps = CATALOG.flatMap((exp) =>
      exp.columns
        .filter((c) => cellTypeOf(exp, c) === 'entries')
        .map((c) => `${exp.name}.${c.name}:${mapHoldsText(exp, c) ? 'text' : 'number'}`),
    );
    expect(maps).toEqual([
      'teams.quotas:number',
      'teams.teamQuotas_storage:number',
      'teams.teamQuotas_devices:number',
      'teams.perUserQuotas_storage:number',
      'teams.perUserQuotas_devices:number',
      'vm_hardware_setups.libvirt_devices:number',
      'vm_hardware_setups.altvirt_devices:number',
      'active_vms.drives:text',
      'active_vms.resources_devices:number',
    ]);
  });

  it("keeps a map of texts (a VM's drive ids) exactly in CSV and XLSX, and a map of numbers as numbers", async () => {
    const vm = {
      realmID: 'libvirt',
      id: 'v1',
      drives: ['vda=98765432109876543210', 'vdb=1e3', 'vdc=-0', 'vdd=0815'],
      resources_devices: ['gpu=2'],
    };
    const columns = sheetColumns('active_vms', [vm]);
    expect(columns.map((c) => cellOf(c, vm))).toEqual([
      'libvirt',
      'v1',
      '98765432109876543210',
      '1e3',
      '-0',
      '0815',
      2,
    ]);
    const team = { id: 't1', quotas: ['ssd=1e3', 'hdd=7'] };
    expect(sheetColumns('teams', [team]).map((c) => cellOf(c, team))).toEqual(['t1', 7, 1000]);
    const m = manifest([{ export: 'active_vms', count: 1 }]);
    const { files } = await writeAll(m, { active_vms: [vm] }, ['csv', 'xlsx']);
    expect(files.get('1-active_vms (11-21-2026).csv')!.toString()).toContain(
      "libvirt,v1,98765432109876543210,1e3,'-0,0815,2\r\n",
    );
    const sheet = unzip(files.get('svc-snapshot-2026-11-21.xlsx')!).get('xl/worksheets/sheet2.xml')!.toString();
    expect(sheet).toContain(
      '<t>98765432109876543210</t></is></c><c t="inlineStr"><is><t>1e3</t></is></c>' +
        '<c t="inlineStr"><is><t>-0</t></is></c><c t="inlineStr"><is><t>0815</t></is></c><c s="4"><v>2</v></c>',
    );
  });

  it("uses the catalog's columns for an empty export", () => {
    expect(sheetColumns('users', []).map((c) => c.header)).toEqual(
      EXPORTS.find((e) => e.name === 'users')!.columns.map((c) => c.name),
    );
  });
});

describe('the workbook', () => {
  it('is a valid ZIP whose first sheet is About, then one sheet per export, continued on "<export> (2)" past the row limit', async () => {
    const m = manifest([
      { export: 'users', count: 3 },
      { export: 'teams', count: 0 },
    ]);
    const { files, written } = await writeAll(m, { users: USERS, teams: [] }, ['csv', 'xlsx'], 2);
    expect(written.map((w) => w.file)).toEqual([
      '3-users (11-21-2026).csv',
      '0-teams (11-21-2026).csv',
      'svc-snapshot-2026-11-21.xlsx',
    ]);
    const parts = unzip(files.get('svc-snapshot-2026-11-21.xlsx')!);
    const workbook = parts.get('xl/workbook.xml')!.toString();
    expect([...workbook.matchAll(/<sheet name="([^"]+)"/g)].map((x) => x[1])).toEqual([
      'About',
      'users',
      'users (2)',
      'teams',
    ]);
    const page1 = parts.get('xl/worksheets/sheet2.xml')!.toString();
    const page2 = parts.get('xl/worksheets/sheet3.xml')!.toString();
    expect(page1.match(/<row /g)).toHaveLength(3);
    expect(page2.match(/<row /g)).toHaveLength(2);
    for (const page of [page1, page2]) {
      expect(page).toContain('state="frozen"');
      expect(page).toMatch(/<autoFilter ref="A1:F\d"\/>/);
    }
    expect(page2).toContain('u3');
    expect(workbook).toContain(
      `<definedName name="_xlnm._FilterDatabase" localSheetId="2" hidden="1">'users (2)'!$A$1:$F$2</definedName>`,
    );
  });

  it('writes no formula anywhere: every text is an inline string, hostile or not', async () => {
    const m = manifest([{ export: 'users', count: 3 }]);
    const { files } = await writeAll(m, { users: USERS }, ['xlsx']);
    const parts = unzip(files.get('svc-snapshot-2026-11-21.xlsx')!);
    for (const [name, data] of parts) {
      expect(data.toString(), name).not.toMatch(/<f[ >]/);
      expect(data.toString(), name).not.toMatch(/t="(str|s)"/);
    }
    const sheet = parts.get('xl/worksheets/sheet2.xml')!.toString();
    // A cell carries its reference only after an empty cell (ECMA-376 makes it optional); LibreOffice reads both (test/e2e/spreadsheets.test.ts).
    expect(sheet).toContain(
      '<row r="2"><c t="inlineStr"><is><t>u1</t></is></c><c t="inlineStr"><is><t>=1+1</t></is></c>',
    );
    expect(sheet).toContain('bell_x0007_');
    expect(sheet).toContain('_x005F_x0041_');
    // Arrays are joined; a null is an empty cell (no <c> at all).
    expect(sheet).toContain('<t>1; 2</t>');
    expect(sheet).not.toMatch(/<c r="E2"/);
    expect(sheet).toMatch(/<\/c><c r="F2" t="inlineStr">/);
    const about = parts.get('xl/worksheets/sheet1.xml')!.toString();
    expect(about).toContain('=cmd|calc; tier');
    expect(about).toContain('UTC');
  });

  it('writes numbers and booleans as typed cells and timestamps as date-times in UTC', async () => {
    const m = manifest([{ export: 'security_levels', count: 1 }]);
    const rec = {
      id: 's',
      name: 'n',
      desc: 'd',
      created: Date.UTC(2026, 10, 21, 12, 0, 0),
      modified: null,
      requirements: ['r'],
    };
    const { files } = await writeAll(m, { security_levels: [rec] }, ['xlsx']);
    const sheet = unzip(files.get('svc-snapshot-2026-11-21.xlsx')!).get('xl/worksheets/sheet2.xml')!.toString();
    // 2026-11-21 12:00 UTC is serial day 46347.5 of the 1900 date system.
    expect(sheet).toContain('<c s="2"><v>46347.5</v></c><c r="F2" t="inlineStr"><is><t>r</t></is></c></row>');
  });

  it('gives the same bytes for the same snapshot', async () => {
    const m = manifest([{ export: 'users', count: 3 }]);
    const a = await writeAll(m, { users: USERS }, ['xlsx']);
    const b = await writeAll(m, { users: USERS }, ['xlsx']);
    expect(a.files.get('svc-snapshot-2026-11-21.xlsx')!.equals(b.files.get('svc-snapshot-2026-11-21.xlsx')!)).toBe(
      true,
    );
  });

  it('refuses to write a token into the workbook, which compression would hide from the scan of the published files', async () => {
    const m = manifest([{ export: 'users', count: 3 }]);
    const sink: SheetSink = async (_name, chunks) => {
      for await (const _c of chunks);
    };
    const run = (needle: string) =>
      writeSpreadsheets({ manifest: m, records: async () => USERS }, ['xlsx'], sink, {
        secrets: secretMatcher([needle]),
      });
    await expect(run('Weiß')).rejects.toThrow(
      /a token was found in the workbook svc-snapshot-2026-11-21\.xlsx being written/,
    );
    await expect(run('not-in-the-data')).resolves.toHaveLength(1);
  });

  it.runIf(hasSshKeygen())(
    "refuses the signing key's secret in the workbook, saying it is the key's and what to do, never showing it",
    async () => {
      const keys = keyDir();
      try {
        const key = makeKey(keys, 'nightly');
        loadSigningKey(key, '--sign-key');
        const m = manifest([{ export: 'users', count: 3 }]);
        const sink: SheetSink = async (_name, chunks) => {
          for await (const _c of chunks);
        };
        const leaked = USERS.map((u, i) => (i === 1 ? { ...u, lastName: readFileSync(key, 'utf8') } : u));
        const err = await writeSpreadsheets({ manifest: m, records: async () => leaked }, ['xlsx'], sink, {
          secrets: secretMatcher(['a-token-not-in-the-data']),
        }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(FailedError);
        expect((err as Error).message).toMatch(
          /^the signing key's secret \(--sign-key or SVC_SIGN_KEY\).* was found in the workbook svc-snapshot-2026-11-21\.xlsx being written; nothing was published\..*treat the key as exposed/,
        );
        expect((err as Error).message).not.toMatch(/[A-Za-z0-9+/]{30,}/);
        // The same workbook without the key's text is written.
        await expect(
          writeSpreadsheets({ manifest: m, records: async () => USERS }, ['xlsx'], sink, {
            secrets: secretMatcher([]),
          }),
        ).resolves.toHaveLength(1);
      } finally {
        clearSigningSecrets();
        clearSecrets();
        removeKeys(keys);
      }
    },
  );

  it('refuses a manifest that names an export this version does not know (names become file names)', async () => {
    const m = manifest([{ export: '../../etc/x', count: 0 }]);
    await expect(writeAll(m, { '../../etc/x': [] }, ['csv'])).rejects.toThrow(/does not know/);
  });
});

describe('helpers', () => {
  it('names sheets and columns as spreadsheets do', () => {
    expect(sheetNames('users', 0, 10)).toEqual(['users']);
    expect(sheetNames('users', 21, 10)).toEqual(['users', 'users (2)', 'users (3)']);
    expect([0, 25, 26, 701, 702].map(columnLetters)).toEqual(['A', 'Z', 'AA', 'ZZ', 'AAA']);
    expect(xmlText('a<b>&c\r\u0000\uD800')).toBe('a&lt;b&gt;&amp;c_x000D__x0000_\uFFFD');
  });

  it('reads --format lists', () => {
    expect(parseFormats('json', '--format')).toEqual([]);
    expect(parseFormats('xlsx,json,csv', '--format')).toEqual(['csv', 'xlsx']);
    expect(() => parseFormats('', '--format')).toThrow(/comma-separated list/);
    expect(() => parseFormats('csv,pdf', '--format')).toThrow(/"pdf" is not one of them/);
  });
});

describe('a text cell', () => {
  it('is cut at the cell limit on a character boundary, never between the halves of a surrogate pair', async () => {
    const { cellText, MAX_CELL_TEXT } = await import('../../src/sheets/xlsx.js');
    const emoji = '\u{1F600}';
    expect(cellText('x'.repeat(MAX_CELL_TEXT - 1) + emoji)).toBe('x'.repeat(MAX_CELL_TEXT - 1));
    expect(cellText('x'.repeat(MAX_CELL_TEXT - 2) + emoji + 'y')).toBe('x'.repeat(MAX_CELL_TEXT - 2) + emoji);
    expect(cellText('x'.repeat(MAX_CELL_TEXT + 5))).toHaveLength(MAX_CELL_TEXT);
    expect(cellText('short')).toBe('short');
  });
});
