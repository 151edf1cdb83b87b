/**
 * What a spreadsheet form of an export should show, computed from the JSON
 * export alone, apart from src/sheets/: the tests compare the program's
 * output (or LibreOffice's reading of it) with these.
 */

/** The timestamp columns of each export: the `ts` fields of spec/management-api.md, by column name. */
export const TIMESTAMP_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  users: [],
  teams: ['created', 'modified', 'startDate', 'endDate'],
  team_memberships: ['lastLogin', 'joined', 'modified'],
  drives: ['created', 'changed', 'attached', 'stateChange'],
  projects: ['created', 'modified'],
  project_memberships: ['added', 'modified', 'expires'],
  resources_by_project: [],
  security_requirements: ['created', 'modified'],
  security_levels: ['created', 'modified'],
  user_profiles: ['joined', 'lastLogin', 'deactivatedUntil', 'expiration', 'passChanged', 'tosAccepted', 'lastEscrow'],
  user_certifications: ['expires', 'created', 'modified'],
  'sub-admin_managed_objects': [],
  vm_images: ['created', 'modified'],
  vm_hardware_setups: ['created', 'modified'],
  licensing_servers: ['created', 'deactivation'],
};

/** The map columns (written as "key=value" strings in JSON). */
export const MAP_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  teams: ['quotas', 'teamQuotas_storage', 'teamQuotas_devices', 'perUserQuotas_storage', 'perUserQuotas_devices'],
  vm_hardware_setups: ['libvirt_devices', 'altvirt_devices'],
};

export type Rec = Record<string, unknown>;

/** The header a sheet of `records` should have: each map column spread into `<column>.<key>`, keys sorted. */
export function expectedHeader(exportName: string, columns: readonly string[], records: readonly Rec[]): string[] {
  const maps = MAP_COLUMNS[exportName] ?? [];
  const out: string[] = [];
  for (const c of columns) {
    if (!maps.includes(c)) {
      out.push(c);
      continue;
    }
    const keys = new Set<string>();
    for (const r of records) for (const e of (r[c] as string[] | null) ?? []) keys.add(e.slice(0, e.lastIndexOf('=')));
    if (keys.size === 0) out.push(c);
    else for (const k of [...keys].sort()) out.push(`${c}.${k}`);
  }
  return out;
}

export type Style = 'csv' | 'libreoffice';

/** The text of one cell, as the CSV file (ISO 8601) or LibreOffice (its date-time format, TRUE/FALSE) shows it. */
export function expectedCell(exportName: string, header: string, record: Rec, style: Style): string {
  const maps = MAP_COLUMNS[exportName] ?? [];
  const map = maps.find((m) => header === m || header.startsWith(`${m}.`));
  let v: unknown;
  if (map !== undefined && header !== map) {
    const key = header.slice(map.length + 1);
    const hit = ((record[map] as string[] | null) ?? []).find((e) => e.slice(0, e.lastIndexOf('=')) === key);
    v = hit === undefined ? null : Number(hit.slice(hit.lastIndexOf('=') + 1));
  } else if (map !== undefined) {
    v = null;
  } else {
    v = record[header];
  }
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return style === 'csv' ? String(v) : v ? 'TRUE' : 'FALSE';
  if (typeof v === 'number') {
    // The workbook shows whole numbers (bytes, counts) with thousands separators; LibreOffice's CSV export writes them as shown.
    if (!(TIMESTAMP_COLUMNS[exportName] ?? []).includes(header))
      return style === 'libreoffice' && Number.isInteger(v) ? v.toLocaleString('en-US') : String(v);
    const iso = new Date(v).toISOString();
    return style === 'csv' ? iso : iso.replace('T', ' ').replace('Z', '');
  }
  const text = Array.isArray(v) ? v.map(String).join('; ') : String(v);
  return style === 'csv' && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}
