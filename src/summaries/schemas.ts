import { z } from 'zod';
import { FILE_STATES, SIGNATURE_STATES } from '../verify/states.js';
import { SEVERITIES } from '../config/values.js';
import { TOKEN_TYPES } from '../api/catalog.js';

/**
 * The `--json` output of every command, as zod schemas: the single source of
 * the summary types, of docs/summary-schema.json (generated) and of the tests
 * that check real output against it. Strict objects: a new field is a
 * deliberate change of this file and of the schema document.
 */
const count = z.number().int().nonnegative();
/** The night's one set of counts (docs/night.md): active = new + open − waived. */
const NightCounts = z.strictObject({ new: count, open: count, resolved: count, waived: count, active: count });
const RouteCounts = z.strictObject({ ok: count, skipped: count, failed: count });
const Skipped = z.array(z.strictObject({ route: z.string(), reason: z.string() }));
const Failed = z.array(z.strictObject({ route: z.string(), status: z.number().int().nullable(), error: z.string() }));
const Date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);
/** With --keep: the older output directories deleted, oldest first. */
const Pruned = z.array(z.string()).optional();
/**
 * With --notify (or SVC_NOTIFY_FILE): each distinct target, as `<kind> #<n>`
 * in the order first given, whether it took the digest, and why not; the
 * sink is its kind and host (the metrics' label), never its URL.
 */
const NotifyOutcome = z.strictObject({
  sink: z.string(),
  target: z.string().regex(/^(webhook|alertmanager|slack|teams|email) #\d+$/),
  ok: z.boolean(),
  error: z.string().nullable(),
});
export type NotifyOutcome = z.infer<typeof NotifyOutcome>;
const NotifyOutcomes = z.array(NotifyOutcome).optional();

export const CollectSummary = z.strictObject({
  command: z.literal('collect'),
  outDir: z.string(),
  baseUrl: z.string(),
  date: Date,
  complete: z.boolean(),
  routes: RouteCounts,
  skipped: Skipped,
  failed: Failed,
  pruned: Pruned,
  notify: NotifyOutcomes,
  durationMs: count,
});
export type CollectSummary = z.infer<typeof CollectSummary>;

const SpreadsheetFile = z.strictObject({
  format: z.enum(['csv', 'xlsx']),
  file: z.string(),
  export: z.string().optional(),
});

export const SnapshotSummary = z.strictObject({
  command: z.literal('snapshot'),
  outDir: z.string(),
  source: z.enum(['live', 'replay']),
  baseUrl: z.string(),
  date: Date,
  complete: z.boolean(),
  exports: z.array(
    z.strictObject({
      export: z.string(),
      file: z.string(),
      count,
      available: z.boolean(),
      reason: z.string().optional(),
      /** The file's SHA-256 (hex), as in the snapshot manifest. */
      sha256: Sha256,
      nullFields: z.array(z.string()),
    }),
  ),
  routes: RouteCounts,
  skipped: Skipped,
  failed: Failed,
  validation: z.strictObject({ issues: count }),
  drift: z.array(z.strictObject({ route: z.string(), unknownFields: z.array(z.string()) })),
  /** With --diff-previous: the older snapshot compared against, and what changed (null when there was none). */
  diffPrevious: z
    .strictObject({
      previous: z.string().nullable(),
      changed: z.boolean(),
      exports: z.array(
        z.strictObject({
          export: z.string(),
          added: count,
          removed: count,
          changed: count,
          note: z.string().optional(),
        }),
      ),
    })
    .optional(),
  /** With --format csv or xlsx: the spreadsheet files written beside the exports. */
  spreadsheets: z.array(SpreadsheetFile).optional(),
  /** With --history: the database loaded after publishing (the snapshot stays published when loading fails). */
  history: z
    .strictObject({
      target: z.string(),
      status: z.enum(['loaded', 'already loaded', 'failed']),
      error: z.string().optional(),
    })
    .optional(),
  pruned: Pruned,
  /** With --findings: the night's counts. */
  findings: NightCounts.optional(),
  /** A night older than the newest of its site: its date, and the newer night's. */
  rerun: z.strictObject({ of: Date, newer: Date }).optional(),
  /** Problems in the configuration of what comes after publishing (the waivers file): published all the same, exit 2. */
  problems: z.array(z.string()).optional(),
  notify: NotifyOutcomes,
  durationMs: count,
});
export type SnapshotSummary = z.infer<typeof SnapshotSummary>;

export const ConvertSummary = z.strictObject({
  command: z.literal('convert'),
  snapshot: z.string(),
  outDir: z.string(),
  date: Date,
  files: z.array(SpreadsheetFile),
  durationMs: count,
});
export type ConvertSummary = z.infer<typeof ConvertSummary>;

export const ReportSummary = z.strictObject({
  command: z.literal('report'),
  snapshot: z.string(),
  /** The page written. */
  file: z.string(),
  bytes: count,
});
export type ReportSummary = z.infer<typeof ReportSummary>;

/** `notify --json`: each target by its sink name (never its URL) and what became of the message. */
export const NotifySummary = z.strictObject({
  command: z.literal('notify'),
  test: z.boolean(),
  targets: z.array(
    z.strictObject({
      sink: z.string(),
      target: z.string(),
      state: z.enum(['sent', 'skipped', 'failed']),
      why: z.string().optional(),
    }),
  ),
});
export type NotifySummary = z.infer<typeof NotifySummary>;

const TokenType = z.enum(TOKEN_TYPES);

/**
 * `used: false` (and `ok: null`, no verdict) for http:// to a loopback host, where no TLS is spoken;
 * `ok: null` for an https host that was not reached, where nothing was verified.
 */
const CheckTls = z
  .strictObject({ used: z.boolean(), ok: z.boolean().nullable(), error: z.string().optional() })
  .describe(
    'used: false and ok: null for http:// to a loopback host (no TLS); used: true and ok: null when the host was not reached ' +
      '(not checked); otherwise ok says whether the certificate chain and host name were verified',
  );

export const CheckSummary = z.strictObject({
  reachable: z.boolean(),
  tls: CheckTls,
  release: z.enum(['3.14.1+', 'before 3.14.1', 'unknown']),
  tokens: z.array(
    z.strictObject({
      source: z.string(),
      types: z.array(TokenType),
      reaches: z.array(TokenType),
      refused: z.array(TokenType),
      /** The status each refused type was answered with: 401 refuses the token itself, 403 its type. */
      refusedWith: z.array(z.strictObject({ type: TokenType, status: z.number().int() })).optional(),
      errors: z.array(z.string()).optional(),
    }),
  ),
  realms: z.strictObject({ source: z.string(), ids: z.array(z.string()) }),
  ok: z.boolean(),
});
export type CheckSummary = z.infer<typeof CheckSummary>;

export const CheckAuditSummary = z.strictObject({
  reachable: z.boolean(),
  tls: CheckTls,
  service: z.strictObject({ name: z.string().optional(), version: z.string().optional() }).optional(),
  token: z.strictObject({
    source: z.string(),
    /** null: not known (the service was not reached, or answered 200 with something that is not its list). */
    accepted: z.boolean().nullable(),
    status: z.number().int().optional(),
    /** Why a 200 answer says nothing of the token: what arrived instead of the list of queries. */
    error: z.string().optional(),
  }),
  ok: z.boolean(),
});
export type CheckAuditSummary = z.infer<typeof CheckAuditSummary>;

const Severity = z.enum(['critical', 'high', 'medium', 'low', 'info', 'unknown']);

export const AuditSummary = z.strictObject({
  command: z.literal('audit'),
  outDir: z.string(),
  auditUrl: z.string(),
  service: z.strictObject({ name: z.string(), version: z.string() }),
  date: Date,
  from: Date,
  to: Date,
  files: count,
  alerts: z.strictObject({
    total: count,
    bySeverity: z.strictObject({
      critical: count,
      high: count,
      medium: count,
      low: count,
      info: count,
      unknown: count,
    }),
    byType: z.array(z.strictObject({ type: z.string(), name: z.string().nullable(), severity: Severity, count })),
  }),
  queries: z.array(z.strictObject({ id: z.string(), file: z.string(), rows: count })),
  reports: z.array(z.strictObject({ id: z.string(), objectId: z.string().nullable(), file: z.string(), bytes: count })),
  /** One per --objects: the type, the ids sent (empty: all), the file and how many objects it holds. */
  objects: z.array(
    z.strictObject({
      type: z.string(),
      ids: z.array(z.string()),
      file: z.string(),
      count,
      bytes: count,
      sha256: Sha256,
    }),
  ),
  validationIssues: count,
  pruned: Pruned,
  notify: NotifyOutcomes,
  durationMs: count,
});
export type AuditSummary = z.infer<typeof AuditSummary>;

export const HistoryLoadSummary = z.strictObject({
  command: z.literal('history load'),
  target: z.string(),
  /** Oldest first; a partial snapshot is skipped unless --allow-partial. */
  snapshots: z.array(
    z.strictObject({
      dir: z.string(),
      baseUrl: z.string(),
      time: z.string(),
      status: z.enum(['loaded', 'already loaded', 'skipped']),
      opened: count,
      closed: count,
    }),
  ),
  complete: z.boolean(),
});
export type HistoryLoadSummary = z.infer<typeof HistoryLoadSummary>;

export const HistoryRunsSummary = z.strictObject({
  runs: z.array(
    z.strictObject({
      baseUrl: z.string(),
      time: z.string(),
      date: Date,
      source: z.enum(['live', 'replay']),
      counts: z.record(z.string(), count),
      /** The SHA256 fingerprint of the key whose signature history load --allowed-signers verified; null when not checked. */
      key: z.string().nullable(),
    }),
  ),
});
export type HistoryRunsSummary = z.infer<typeof HistoryRunsSummary>;

export const HistoryLogSummary = z.strictObject({
  export: z.string(),
  key: z.record(z.string(), z.string()),
  versions: z.array(
    z.strictObject({
      from: z.string(),
      to: z.string().nullable(),
      record: z.record(z.string(), z.unknown()),
      changed: z.array(z.string()),
    }),
  ),
});
export type HistoryLogSummary = z.infer<typeof HistoryLogSummary>;

const SignatureSummary = z.strictObject({
  state: z.enum(SIGNATURE_STATES),
  key: z
    .string()
    .regex(/^SHA256:[A-Za-z0-9+/]{43}$/)
    .nullable(),
  reason: z.string().optional(),
});

/**
 * `verify --json`: per directory or archive its kind (null when its
 * manifest could not be read; `archive` for a `.tar.age`), whether
 * everything matched, every file (the ones the manifest names, then those it
 * does not cover) and the signature (`key`: the signing key's SHA256
 * fingerprint, when readable; an archive's is its `.tar.age.sig`). An
 * archive adds what was checked of it (`archive`), and once decrypted the
 * kind of output inside (`contents`) and its manifest's signature. With
 * --replay, what the restore drill found; with --sample, which part was
 * checked of how many. `ok`, `unhashed` and `not covered` do not fail a
 * directory.
 */
export const VerifySummary = z.strictObject({
  dirs: z.array(
    z.strictObject({
      dir: z.string(),
      kind: z.enum(['snapshot', 'collection', 'audit', 'archive']).nullable(),
      ok: z.boolean(),
      error: z.string().optional(),
      files: z.array(z.strictObject({ file: z.string(), state: z.enum(FILE_STATES), detail: z.string().optional() })),
      signature: SignatureSummary,
      archive: z
        .strictObject({
          /** Decrypted with --identity (every file checked), or only its structure checked. */
          decrypted: z.boolean(),
          bytes: z.number().int().nonnegative(),
          recipients: z.number().int().nonnegative().optional(),
        })
        .optional(),
      contents: z.enum(['snapshot', 'collection', 'audit']).nullable().optional(),
      manifestSignature: SignatureSummary.optional(),
      replay: z
        .strictObject({
          ok: z.boolean(),
          /** How many exports were built again and compared. */
          exports: z.number().int().nonnegative(),
          /** The first export that differs, and its first record that differs by its key columns. */
          differs: z
            .strictObject({
              export: z.string(),
              file: z.string(),
              key: z.record(z.string(), z.unknown()).nullable(),
              detail: z.string(),
            })
            .optional(),
          error: z.string().optional(),
        })
        .optional(),
    }),
  ),
  sample: z
    .strictObject({
      n: z.number().int().positive(),
      t: z.number().int().positive(),
      checked: z.number().int().nonnegative(),
      of: z.number().int().nonnegative(),
    })
    .optional(),
});
export type VerifySummary = z.infer<typeof VerifySummary>;

const FindingSeverity = z.enum(SEVERITIES);
const RowRef = z.strictObject({ export: z.string(), key: z.array(z.string()) });

/** The names a person reads beside the keys (docs/findings.md), each present when the finding is about one. */
const FindingDisplay = z.strictObject({
  /** The user's full name; "deleted user <id>" for a user the snapshot lists with no name nor e-mail, or not at all. */
  user: z.string().optional(),
  email: z.string().optional(),
  project: z.string().optional(),
  team: z.string().optional(),
  requirement: z.string().optional(),
  level: z.string().optional(),
  /** The running VMs' names, joined with ", ". */
  vms: z.string().optional(),
});
const Uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
/** A waiver as a finding carries it: its reason, owner and end date (YYYY-MM-DD). */
const WaiverMark = z.strictObject({ reason: z.string(), owner: z.string(), expires: z.string() });
/** A waiver of the waivers file, by its line there. */
const WaiverNote = z.strictObject({
  line: count,
  rule: z.string(),
  id: z.string().optional(),
  subject: z.array(z.string()).optional(),
  owner: z.string(),
  /** Why the waiver was given, as its file says: the digest shows it beside its owner. */
  reason: z.string().optional(),
  expires: z.string(),
});

const Finding = z.strictObject({
  /** UUID v5, stable across nights and machines (docs/findings.md). */
  id: Uuid,
  rule: z.string(),
  severity: FindingSeverity,
  /** With a previous night: new, or open since firstSeen. */
  state: z.enum(['new', 'open']).optional(),
  /** The time of the first snapshot it was seen in (this one's for a new finding). */
  firstSeen: z.string().optional(),
  subject: RowRef,
  related: z.array(RowRef),
  detail: z.string(),
  display: FindingDisplay,
  /** Waived by the waivers file: not counted by --fail-on nor svc_snapshot_findings. */
  waived: WaiverMark.optional(),
  /** A waiver that matched it has ended (its date passed): active again. */
  waiverEnded: WaiverMark.optional(),
});

/** `svc-snapshot findings --json`, and the content of `_findings.json` (docs/findings.md). */
const FindingsSummary = z.strictObject({
  /** The snapshot's time, which every rule compares with. */
  time: z.string(),
  /** The night's counts, as every output gives them. */
  counts: NightCounts,
  /** The night the states are told against (the previous snapshot, or the history database's newest earlier run); absent: none. */
  previous: z.strictObject({ time: z.string(), source: z.enum(['snapshot', 'history']) }).optional(),
  /** With --waivers: the file's sha256, its number of entries, and its waivers that match nothing, end soon, or have ended. */
  waivers: z
    .strictObject({
      sha256: Sha256,
      entries: count,
      stale: z.array(WaiverNote),
      endingSoon: z.array(WaiverNote),
      ended: z.array(WaiverNote),
    })
    .optional(),
  rules: z.array(
    z.strictObject({
      id: z.string(),
      severity: FindingSeverity,
      evaluated: z.boolean(),
      /** Not evaluated: why. Evaluated: what was left out (an optional export the snapshot lacks), when anything was. */
      reason: z.string().optional(),
      /** null when not evaluated: never 0 for "could not look". Waived findings included. */
      count: count.nullable(),
      /** With --waivers: how many of `count` are waived. */
      waived: count.optional(),
    }),
  ),
  findings: z.array(Finding),
  /** With a previous night: its findings that are gone. */
  resolved: z
    .array(
      Finding.omit({ state: true, related: true, waived: true, waiverEnded: true }).extend({ firstSeen: z.string() }),
    )
    .optional(),
  /** The previous night's findings of rules not evaluated this night: not resolved, kept for the next night; waived by this night's waivers. */
  carried: z
    .array(Finding.omit({ state: true, related: true, waiverEnded: true }).extend({ firstSeen: z.string() }))
    .optional(),
});

/**
 * What every command prints with --json when it ends with an error instead
 * of its summary (a usage error, a refused token, a failed or interrupted
 * run): the exit code, the error's message, and what was and was not
 * published. A command that finishes prints its own summary instead, also
 * with a non-zero exit code (collect's 4, check's 3, diff's 5, a snapshot
 * whose --history load failed).
 */
export const FailureSummary = z
  .strictObject({
    /** The command as typed: snapshot, collect, audit, check, diff, convert, history load, … */
    command: z.string(),
    ok: z.literal(false),
    exitCode: z.number().int().min(1).max(255),
    /** The message printed on stderr (secrets redacted). */
    error: z.string(),
    /** Output directories this run published before it failed (a snapshot whose later step failed). */
    published: z.array(z.string()),
    /** Output directories this run was given (--out-dir) or began, and did not publish (an older one of the same name is untouched). */
    notPublished: z.array(z.string()),
    /** What the run leaves behind, in words: "nothing was published", or what stays (snapshots loaded before). */
    outcome: z.string(),
    notify: NotifyOutcomes,
  })
  .describe("Printed instead of the command's summary when it ends with an error (exit 1, 2, 3, 130, 143).");
export type FailureSummary = z.infer<typeof FailureSummary>;

/** Every command's --json output, by command. */
const SUMMARIES = {
  snapshot: SnapshotSummary,
  collect: CollectSummary,
  audit: AuditSummary,
  check: CheckSummary,
  'check --audit': CheckAuditSummary,
  convert: ConvertSummary,
  'history load': HistoryLoadSummary,
  'history runs': HistoryRunsSummary,
  'history log': HistoryLogSummary,
  'history as-of': SnapshotSummary,
  verify: VerifySummary,
  report: ReportSummary,
  findings: FindingsSummary,
  notify: NotifySummary,

  failure: FailureSummary,
} as const;

/** docs/summary-schema.json: JSON Schema (draft 2020-12) of every --json output. */
export function renderSummarySchema(extra: Record<string, z.ZodType> = {}): string {
  const all = { ...SUMMARIES, ...extra };
  const doc = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'svc-snapshot --json output',
    description:
      'Each command prints exactly one JSON object on stdout with --json; $defs holds one schema per command.',
    $defs: Object.fromEntries(
      Object.entries(all).map(([name, schema]) => {
        const { $schema: _ignored, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
        return [name, rest];
      }),
    ),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
