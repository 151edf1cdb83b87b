/**
 * docs/exports.md, generated from the export catalog and the models
 * (`node --import tsx scripts/gen-docs.ts`). A unit test checks that the
 * committed file equals this output.
 */
import { routeById, type RouteDef } from '../../src/api/catalog.js';
import { CATALOG, columnType, type ColumnType } from '../../src/exports/catalog.js';
import { derivedRoutes, type ColumnDef, type ExportDef } from '../../src/exports/define.js';
import { describeType, kindOf, resolvePath } from '../../src/exports/schema.js';
import { cellTypeOf } from '../../src/sheets/columns.js';

const DECISIONS = `## Decisions

- **users and user_profiles.** Both read GET /api/users, one row per account.
  \`users\` holds identity and authorization: id, names, login email, role and
  permission codes. \`user_profiles\` holds everything else the record says about
  the person and the account: contact email, department, position, admin
  comment, and the account state and its history (joined, last login, state,
  deactivation, expiration, credential change, terms of service, escrow).
  \`user_profiles\` repeats \`firstName\`, \`lastName\` and \`email\` so that the
  sheet can be read on its own.
  Each export names the fields it leaves to the other under "Not exported".
- **Nested objects** become one column per field, named by the path with \`_\`
  (\`teamQuotas.cores\` → \`teamQuotas_cores\`, \`libvirt.image.pool\` →
  \`libvirt_image_pool\`). An absent object gives null in all of its columns.
- **Open-ended maps** (legacy \`quotas\`, quota \`storage\` and \`devices\`, brick
  \`devices\`) are written as an array of \`"key=value"\` strings sorted by key
  (UTF-16 code units), e.g. \`["hdd=5000000000000", "ssd=1000000000000"]\`. An
  empty map (for quotas: no limits) is \`[]\`; an absent map is \`null\`.
- **Arrays** of ids or codes stay JSON arrays, in the order received.
- **Settings.** The spec calls the \`settings\` of drives, images and bricks
  frontend settings: they are web-interface state and are not exported, except
  the one key it documents, images' \`settings.driveFormats\`
  (\`settings_driveFormats\`). The \`settings\` of teams and projects are not
  called frontend settings and document no key: each is exported whole as one
  compact JSON text (\`settings\`, object keys sorted at every level, so an
  unchanged object is an unchanged text). Every field left out of an export is
  listed under "Not exported" with the reason.
- **Documented defaults.** Where the spec documents a default for an absent
  field, the export writes the default, not null: drives' \`noBackup\` (true),
  bricks' \`libvirt.pty\` (false), \`libvirt.nic\`
  (\`virtio\`), \`libvirt.clockOffset\` (\`localtime\` for a brick whose
  \`format\` is \`windows\`, else \`utc\`), images' \`version\` (0 for a base
  image). A libvirt default applies only to a brick that has a libvirt
  configuration. Where the spec gives an absent field a meaning that is not a
  value (an image \`limit\`: no limit; a quota: no limit; a brick \`video\`:
  none; a certification's \`expires\`: no expiry), the column stays null and
  its note says what null means. A brick's \`noQuota\` ("default false") is
  required in the spec, so a brick without it is a validation issue, not a
  default. A value of the wrong type is null whether or not a default exists
  (it was sent; see validation below).
- **Undocumented enum values** (a drive \`state\` the spec does not list, a new
  \`imageType\`) are kept as received and counted under \`validation\` in the
  manifest: a new value is useful data and a backend upgrade shows up in the
  manifest. Any other value of the wrong type (a number where a string is
  declared, a string timestamp) is written as \`null\` and counted; only that
  column is nulled, or the whole column when the bad value sits inside one of
  its arrays or maps. Samples name the route, record index, path and zod's
  message, never the value.
- **A running VM whose \`realmID\` names another realm** than the
  \`GET /api/vms/{realm}/active\` that listed it is exported under the
  route's realm (the route is what was asked for; the realm is part of the
  key \`active_vms\` is sorted and diffed by) and counted under \`validation\` (path \`realmID\`, the
  value not shown), so it shows in the manifest, the summary, the report and
  \`svc_snapshot_validation_issues\`; \`--strict\` refuses it like any other
  issue. It is counted without \`--include vms\` too: the route is read and
  checked on every run.
- **Unknown fields** are ignored by the exports and listed under \`drift\` by
  their dotted path (array elements share their array's path, map values
  appear as \`*\`).
- **Absent optional fields** without a documented default are \`null\` in that
  record; they are not listed in \`nullFields\`. A 3.14.1 field is listed there
  as a version gap only when the backend predates 3.14.1, which its 3.14.1
  routes show by answering 404 (and then only if no record carries it). On a
  3.14.1 backend a field no record carries (images that predate
  \`secureBoot\`, an unset \`snapshotPool\`) is just null. When no 3.14.1 route
  was answered at all (no token of their types), the release is unknown: the
  fields are listed only when no record carries any 3.14.1 field of the
  export, with a reason that says so.
- **Usage** groups (\`files\`, \`vms\`, \`drives\`) absent from a usage row mean
  no resources (the spec: "groups with no resources may be absent from a
  row"), so their columns are 0, not null; so are a team's usage columns when
  GET /api/teams/usage was read and has no row for it. They are null (and
  listed in \`nullFields\`) only when the usage route was not read. \`teams\`
  takes a team's row of GET /api/teams/usage by team id, so the \`no-team\` row
  and rows of deleted teams never become teams; \`resources_by_project\` keeps
  every usage row.
- **The VM inventory (\`--include vms\`).** GET /api/vms/{realm}/configs,
  GET /api/vms/{realm}/active and GET /api/realms have no export among the
  15 the contract names (configs are counted per brick, \`vmConfigCount\`).
  With \`--include vms\` they are written after the 15 as \`vm_configs\`,
  \`active_vms\` and \`realms\`, by the same rules; without it they are kept
  byte for byte in \`raw/\` only (\`--raw\`, \`collect\`), and the manifest's
  \`include\` (absent without \`--include\`) says which groups a snapshot holds.
  Before 3.14.1 (no GET /api/realms), \`realms\` lists the \`--realms\` ids
  with every other column null and listed in \`nullFields\`. A config whose
  id repeats in two realms is two rows (the key is realm and id).
- **Proposed routes.** \`proposedRoute\` names only GET routes the API
  documents; a column no documented GET route supplies (a brick's
  \`externalServers\` and \`vmType\`) has none, and its reason says what would.
- **Per-realm routes.** When some realms answer and others fail (possible under
  \`--allow-partial\`), \`vm_images\` is published with the realms that answered
  and its \`reason\` starts with \`incomplete:\`; a derivation over a per-realm
  route (\`vmConfigCount\`) is null everywhere rather than undercounted.
- **Sort order** is the key, compared value by value: null first, booleans,
  numbers numerically, strings by UTF-16 code unit (no locale).
`;

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function routeName(def: RouteDef): string {
  return `\`${def.method} ${def.path}\`${def.since ? ` (${def.since})` : ''}`;
}

function sinceMark(def: RouteDef, path: string, each?: string): string {
  return resolvePath(def.item, path, each).since3141 ? ' (since 3.14.1)' : '';
}

/** The column's type as the docs name it, from the type the catalog declares (columnType). */
function typeText(col: ColumnDef, t: ColumnType): string {
  const src = col.source;
  if (src.kind === 'unavailable') return 'null';
  if (src.kind === 'count' || (src.kind === 'field' && src.as === 'count')) return 'count';
  if (t.entries) return '"key=value" string[]';
  if (src.kind === 'field' && src.as === 'json') return 'string (JSON)';
  return describeType(t.schema);
}

function columnRow(exp: ExportDef, def: RouteDef, col: ColumnDef, i: number): string {
  const src = col.source;
  const t = columnType(exp, col);
  const type = typeText(col, t);
  let source: string;
  switch (src.kind) {
    case 'field':
      source =
        `${src.as === 'count' ? 'number of elements of ' : ''}field \`${src.path}\`${sinceMark(def, src.path, exp.each)}` +
        (src.as === 'entries'
          ? ', map as sorted "key=value" strings'
          : src.as === 'json'
            ? ', object as compact JSON text'
            : '');
      break;
    case 'join':
      source = `derived: \`${src.path}\` of the ${routeName(routeById(src.route))} record whose \`${src.by}\` equals this row's \`${src.on}\``;
      break;
    case 'count': {
      const other = routeById(src.route);
      source = `derived: number of ${routeName(other)} records${other.perRealm ? ', every realm,' : ''} whose \`${src.by}\` equals this row's \`${src.on}\``;
      break;
    }
    case 'realm':
      source = `derived: the realm the record was read from (\`{realm}\` of ${routeName(def)})`;
      break;
    case 'equals':
      source = `derived: whether \`${src.path}\` equals the record's \`${src.other}\` (null when either is absent)`;
      break;
    case 'unavailable':
      source = `**unavailable**: ${src.reason}${src.proposedRoute ? `; proposed route: \`${src.proposedRoute}\`` : ''}`;
      break;
  }
  const d = col.default;
  if (d)
    source += `; absent: ${d.by && d.cases ? `${casesText(d.by, d.cases)}, else ` : ''}\`${JSON.stringify(d.value)}\` (spec: "${d.spec}")`;
  const note = col.note ? ` — ${col.note}` : '';
  return `| ${i + 1} | \`${col.name}\` | ${cell(type)} | ${cell(source + note)} | ${cell(sheetForm(exp, col, t, type))} |`;
}

/** A default chosen by another field: each value and the case it is taken in. */
function casesText(by: string, cases: Readonly<Record<string, unknown>>): string {
  return Object.entries(cases)
    .map(([k, v]) => `\`${JSON.stringify(v)}\` when \`${by}\` is \`${k}\``)
    .join(', ');
}

/** How the column appears in the CSV files and the workbook (src/sheets/). */
function sheetForm(exp: ExportDef, col: ColumnDef, t: ColumnType, type: string): string {
  const kind = cellTypeOf(exp, col);
  if (kind === 'timestamp') return 'date-time: ISO 8601 UTC in CSV, a UTC date-time cell in XLSX';
  if (kind === 'entries') return `one ${mapValueKind(t)} column per key, \`${col.name}.<key>\``;
  if (type === 'null') return 'empty';
  if (type.endsWith('[]')) return 'text, elements joined with `; `';
  if (type === 'boolean') return 'boolean';
  if (type === 'integer' || type === 'number' || type === 'count') return 'number';
  return 'text';
}

/** What a map column's values are, from its model (a VM's drives map device names to drive ids: text; quotas and device counts: numbers). */
function mapValueKind(t: ColumnType): string {
  const values = describeType(t.schema);
  if (values === 'map of integer' || values === 'map of number') return 'number';
  if (values === 'map of string') return 'text';
  return 'number or text';
}

function exportSection(exp: ExportDef): string {
  const def = routeById(exp.route);
  const lines = [`## ${exp.name}`, '', exp.description, ''];
  const per =
    exp.each && kindOf(resolvePath(def.item, exp.each).schema) === 'record' ? 'value of the map' : 'element of';
  const each = exp.each ? `, one row per ${per} \`${exp.each}\`` : '';
  lines.push(`- Source: ${routeName(def)}${def.perRealm ? ', every realm' : ''}${each}`);
  if (exp.include) lines.push(`- Written only with \`--include ${exp.include}\`, after the 15 exports`);
  if (exp.realmListFallback)
    lines.push(
      `- When ${routeName(def)} is skipped (a backend before 3.14.1, or no token of its type): one row per ` +
        `\`--realms\` id in \`${exp.realmListFallback}\`, every other column null and listed in \`nullFields\` with ` +
        `the route's reason`,
    );
  const joined = [...derivedRoutes(exp)].map(routeById);
  if (joined.length > 0) lines.push(`- Derived from: ${joined.map(routeName).join(', ')}`);
  lines.push(`- Key (sort order): ${exp.key.map((k) => `\`${k}\``).join(', ')}`);
  lines.push('', '| # | column | type | source | CSV / XLSX |', '|---|---|---|---|---|');
  exp.columns.forEach((col, i) => lines.push(columnRow(exp, def, col, i)));
  const omitted = Object.entries(exp.omit);
  if (omitted.length > 0) {
    lines.push('', 'Not exported:', '');
    for (const [path, why] of omitted)
      lines.push(`- \`${path.endsWith('.*') ? `${path.slice(0, -2)}\` (its other keys)` : `${path}\``}: ${why}`);
  }
  return lines.join('\n');
}

/** The full text of docs/exports.md. */
export function renderExportsMarkdown(): string {
  const index = CATALOG.map(
    (e) =>
      `| \`${e.name}\`${e.include ? ` (\`--include ${e.include}\`)` : ''} | ` +
      `${routeName(routeById(e.route))} | ${e.key.map((k) => `\`${k}\``).join(', ')} | ${e.columns.length} |`,
  );
  return [
    '# Exports',
    '',
    '<!-- Generated from src/exports/defs/ by `node --import tsx scripts/gen-docs.ts`; do not edit by hand. -->',
    '',
    'A snapshot writes the first 15 of these exports on every run, as `<count>-<export> (<M>-<D>-<YYYY>).json`;',
    'with `--include vms` it writes `vm_configs`, `active_vms` and `realms` after them.',
    'Each is a JSON array of flat records (2-space indented): every record has the columns below, in this order,',
    'sorted by the key. Values are strings, numbers, booleans, arrays of those, or `null`.',
    'Timestamps are epoch milliseconds, written as received: the models type every timestamp, and nothing else, as',
    '`integer`. Counts computed by the client have type `count`.',
    'A column is read from a field of the source record, derived from another route, or unavailable;',
    'unavailable columns are `null` in every record and listed under `nullFields` in `_snapshot-manifest.json`,',
    'as are derived columns whose route was skipped or failed and 3.14.1 fields an older backend does not send.',
    'An export whose source route was skipped or failed is written as `[]` and marked unavailable with a reason.',
    '',
    'With `--format csv,xlsx` (or `svc-snapshot convert`) each export is also written as CSV and as a sheet of one',
    'workbook; the last column of each table below says how the column appears there. Text is text (never a formula:',
    "CSV prefixes a text starting with `=`, `+`, `-`, `@`, tab or CR with `'`), null is an empty field or cell,",
    "and a map becomes one column per key present in the export, named `<column>.<key>`, holding the map's values:",
    "numbers for quotas and counts, text for a running VM's drive ids (the last column says which). In the workbook,",
    'numbers and booleans are typed cells: whole numbers shown with thousands separators, booleans as TRUE/FALSE',
    '(docs/spreadsheets.md).',
    '',
    '| export | source | key | columns |',
    '|---|---|---|---|',
    ...index,
    '',
    DECISIONS,
    ...CATALOG.map((e) => `${exportSection(e)}\n`),
  ].join('\n');
}
