/**
 * docs/findings.md, generated from the rule declarations
 * (`node --import tsx scripts/gen-docs.ts`). A unit test checks that the
 * committed file equals this output.
 */
import { RULES } from '../../src/findings/catalog.js';
import { SEVERITIES, compareRules, type RuleDef } from '../../src/findings/define.js';
import { DEFAULT_EXPIRING_DAYS } from '../../src/findings/evaluate.js';
import { FINDINGS_CSV_COLUMNS } from '../../src/findings/csv.js';
import { FINDING_ID_NAMESPACE } from '../../src/findings/identity.js';
import { DEFAULT_WAIVERS_MAX_DAYS, WAIVERS_MAX_BYTES } from '../../src/findings/waivers.js';

const INTRO = `# Findings

<!-- Generated from src/findings/rules/ by scripts/gen-docs.ts; do not edit by hand. -->

Rules over a snapshot's exports that name what an auditor or an administrator
must act on. Each rule is declared as data in
\`src/findings/rules/\`: its id, severity, description, exact meaning, the spec
lines it rests on, the export columns it reads, and the check, a function over
those columns of the export records (never over the raw responses).

- \`svc-snapshot --findings\` (live or \`--replay\`) evaluates the rules over the
  export files just written and adds \`_findings.json\` to the snapshot.
- \`svc-snapshot findings <snapshot-dir>\` evaluates an existing snapshot and
  writes nothing: a text table, or with \`--json\` the object \`_findings.json\`
  holds. Every export file of the directory is checked against the manifest's
  \`sha256\` as it is read, each once: a snapshot whose exports were edited is
  refused (exit 1).
- \`--fail-on <severity>\` (both) exits 6 when a finding of that severity or
  higher exists that is not waived (see *Waivers*); the snapshot is published either way. Severities, highest
  first: ${SEVERITIES.map((s) => `\`${s}\``).join(', ')}. It fails closed: a rule
  of that severity or higher that could not be evaluated (see *Not evaluated*)
  exits 6 too, the warning naming each such rule and why (five at most, then
  how many more), since a rule that could not look may hide what it would have
  found. \`--fail-on-unevaluated=false\` (or \`--fail-on-unevaluated false\`)
  fails on findings alone; any value but \`true\` or \`false\` is a usage error
  (exit 2), and so is the option without \`--fail-on\`. A bad value of either is
  refused before anything is collected or published. A rule evaluated in
  part (its \`reason\` says what it left out) was evaluated, and does not
  count as one that was not.
- \`--expiring-days <n>\` (both, default ${DEFAULT_EXPIRING_DAYS}): the window of \`certification-expiring\`.
- \`--findings-inherit-levels\` (the default) and \`--no-findings-inherit-levels\`
  (\`snapshot\` with \`--findings\` or \`--format html\`, \`findings\`, \`report\`):
  which reading of a project's security level the certification rules take
  (see *Security levels and child projects*). \`_findings.json\` does not
  record it: \`svc-snapshot findings\` gives a snapshot's file again when run
  with the reading the snapshot was taken with (the default, unless the
  nightly job says otherwise).

**Time.** Every rule compares with the snapshot's time (the manifest's
\`time\`, when the collection was taken), never the clock of the run: a replay
of a collection gives the findings of the live run, and \`svc-snapshot
findings\` run a year later gives the same ones. "Passed" means strictly before
that time. Timestamps are epoch milliseconds (spec, section 2).

**Not evaluated.** A rule is evaluated only when every export it reads is
available and complete and no column it reads is listed in the manifest's
\`nullFields\`. Otherwise it is listed with \`"evaluated": false\`, the reason
(the export's or the column's, as the manifest gives it, which names the
route that failed or was skipped) and \`"count": null\`: never as zero
findings, nor as fewer findings. A 3.13.8 backend serves no security levels,
requirements, certifications or project memberships and no team usage, so
there no rule is evaluated (each says which export or column it lacks). Under
\`--allow-partial\` a failed route makes the rules that read from it not
evaluated: an export it leaves unavailable, a column it leaves null (a join's
route), and an export it leaves *incomplete* (a per-realm route that failed in
one realm of several: the export is published with the realms that answered
and a reason starting \`incomplete:\`, and a rule over it would see part of the
site). An export a rule reads as *optional* (marked so below: the running VMs,
written with \`--include vms\`) does not stop the rule when the snapshot does not
hold it (taken without \`--include vms\`): the rule is evaluated over the rest,
and its \`reason\` says what was left out and why (\`"evaluated": true\` with a
reason). A snapshot that holds it but not whole (its route failed in a realm, a
column is null) has the rule not evaluated: it was asked for.

**Security levels and child projects.** The spec gives a project a
\`securityLevel\` and a \`parent\`, and does not say whether a child project
is held to its parent's level. Both readings are defensible, so a setting
chooses, and the default is the stricter one (a missed
finding costs an auditor more than a question):

- *Inheriting* (\`--findings-inherit-levels\`, the default): a project is held
  to its own level and to its parent's, its grandparent's and so on up the
  \`parent\` chain; its own level adds to what it inherits. A member is
  checked once per requirement and project, however many levels of the chain
  name it; the requirement is taken from the nearest project that requires it
  (the project's own level first). A finding of an inherited requirement says
  so in its detail ("which inherits from its parent project "Project 1"
  (proj|…) the security level "Level 1", requiring …"; "its ancestor" when
  the level is further up) and relates that project after the member's. A
  \`parent\` that projects does not list ends the chain; a chain that loops
  holds each project of the loop to the levels of every project of it, and a
  chain of any length is followed without recursion.
- *Own level only* (\`--no-findings-inherit-levels\`, the reading before the
  setting existed): a project is held to its own \`securityLevel\` alone; a
  child project without a level holds its members to nothing.

On the first night of the shipped recordings (\`recordings/platform-3.14.1\`)
Project 2 is a child of Project 1 (Level 1: three requirements) and has no
level; Project 4, a child of Project 2, has Level 2 (one requirement, also in
Level 1). Inheriting gives 12 more high findings than the own-level reading:
18 \`certification-missing\` instead of 7 and 2 \`certification-expired\`
instead of 1.

**Inherited memberships.** A project membership may be listed more than once
for a user and project (\`duplicate\`: the membership is also inherited); every
rule that reads project_memberships takes each user and project once.

## _findings.json

\`\`\`json
{
  "time": "2026-11-21T02:00:00.000Z",
  "rules": [ { "id": "certification-missing", "severity": "high", "evaluated": true, "count": 18 },
             { "id": "quota-exceeded", "severity": "medium", "evaluated": false,
               "reason": "teams.usage_vms_cores is null in this snapshot: …", "count": null } ],
  "findings": [ { "id": "6f1c…-5…", "rule": "certification-missing", "severity": "high",
                  "state": "open", "firstSeen": "2026-11-21T02:00:00.000Z",
                  "subject": { "export": "project_memberships", "key": ["proj|…", "<user id>", "<membership id>"] },
                  "related": [ { "export": "projects", "key": ["proj|…"] } ],
                  "detail": "user …, member of project \\"Project 1\\" …, holds no certification for it",
                  "display": { "user": "Priya Tanaka", "email": "priya.tanaka.10@example.org", "project": "Project 1",
                               "requirement": "Requirement 1: Clinical data course", "level": "Level 1" },
                  "waived": { "reason": "NDA and course booked", "owner": "security-office@example.org",
                              "expires": "2026-12-15" } } ]
}
\`\`\`

With a previous night the object also has \`previous\` (\`{ "time", "source" }\`)
after \`time\`, and \`resolved\` (and \`carried\`, below) after \`findings\`; with \`--waivers\`, \`waivers\`
(the file's \`sha256\`, its number of \`entries\`, and the waivers \`stale\`,
\`endingSoon\` and \`ended\`, each with its \`line\`, \`rule\`, match, \`owner\`
and \`expires\`) and, per rule, \`waived\` (how many of its \`count\` are waived).
\`$defs.findings\` of [summary-schema.json](summary-schema.json) is its JSON
Schema (draft 2020-12), for \`_findings.json\` and \`svc-snapshot findings
--json\` alike.

A row is named by its export and the values of the export's key columns, in
the order docs/exports.md lists them, as text. Rules are sorted by severity
(highest first) and id; findings by severity, rule and subject key (then the
related rows and the detail), comparing UTF-16 code units, so the bytes depend
on the snapshot alone. In the file, each rule and each finding is one line of
compact JSON (a night's file compares with another's line by line). Values from the data are kept exactly in the JSON and
escaped on the terminal.
`;

const OVER_TIME = `
## Findings over time

**Ids.** Every finding has an \`id\`, the same on every night and machine
while the finding lasts: the UUID version 5 (RFC 9562, SHA-1) in the
namespace \`${FINDING_ID_NAMESPACE}\` (itself the UUID v5 of
\`svc-snapshot findings\` in RFC 9562's URL namespace) of the name
\`JSON.stringify([rule, subject export, subject key, part])\`: the key values
as \`subject.key\` writes them, and \`part\` what tells apart several findings
of one rule on one subject (each rule below says what, where it can happen),
else \`null\`. For example \`["quota-exceeded","teams",["team|…"],"cores"]\`.

**Names.** \`display\` holds the names a person reads, each present when the
finding is about one: \`user\` (first and last name) and \`email\` (users),
\`project\`, \`team\`, \`requirement\`, \`level\` (the \`name\` of projects,
teams, security_requirements, security_levels) and \`vms\` (the running VMs'
names, active_vms, joined with ", "). A user the users export does not list,
or lists with neither name nor e-mail, is \`deleted user <id>\`; another id
that its export does not list is \`<id> (no project of that id listed)\`; an
export the snapshot cannot give leaves the id itself. Names never stop a rule:
the keys stay exact in \`subject\` and \`related\`. The text output and the
report group the findings by person, then project (one person lacking three
requirements of one project is one entry of three lines); a finding about no
person under its project, team or level. They are read by a person, so they
show names and no ids: a detail's UUIDs and keys are left out (a name in
it stays), a subject is named by its export (its key values are in the JSON
and the CSV), times are ISO 8601 in UTC, sizes in KiB, MiB or GiB. Each
waiver is shown with its owner, reason and end date, and what it matches by
the names the findings it matches share (tonight's, carried, else resolved
ones), else by its \`id\` or \`subject\` as written. A resolved finding shows
the date it was resolved on (the snapshot's) and the date it was first
seen; the carried findings are listed apart, each with why its rule was not
evaluated tonight.

**New, open, resolved.** The previous night is the newest older snapshot
of the same site beside this one (as \`--diff-previous\` finds it), or
\`--previous <dir>\` (\`findings\`, \`report\`). Its findings are those of
its \`_findings.json\` (checked against its manifest) when it was written by
this version, else the rules evaluated over its exports with the same
settings. Findings are matched
by \`id\`: one seen the night before is \`open\`, its \`firstSeen\` carried
from that night's file (or that night's time); any other is \`new\`, with
\`firstSeen\` this snapshot's time. The previous night's findings that are gone
are listed in \`resolved\` (with their \`firstSeen\`), except those of a rule
not evaluated tonight (an input unavailable or incomplete): it could not look,
so they are neither open nor resolved, and are listed in \`carried\` as they
were, but for their waiver: tonight's waivers file decides it, as for
tonight's findings (a waiver ended or removed since no longer applies, one
added tonight does; without \`--waivers\`, none); the next night reads them
as the previous night's findings, so their \`firstSeen\` is kept, and a
waiver of such a rule is not stale. Without a previous
night, findings have no \`state\`. A previous snapshot found beside that
cannot be read is warned about and left out; one given with \`--previous\`
that cannot be read is the command's error, and one taken at or after the
snapshot's time (manifest \`time\`) is a usage error (exit 2) on
\`findings\`, \`report\` and \`notify\`, before anything is printed, written or
sent. The text output and the report
show the new and resolved findings first.

### Waivers

\`--waivers <file>\` (or \`SVC_WAIVERS\`) on \`snapshot\` (with \`--findings\` or
\`--format html\`), \`findings\` and \`report\`:

\`\`\`yaml
waivers:
  - rule: certification-missing
    subject: ["proj|fa021be1-…", "996f25a8-…"]   # the subject key, or its beginning
    reason: NDA and course booked for 4 December
    owner: security-office@example.org
    expires: 2026-12-15
  - rule: quota-exceeded
    id: 6f1c…                                    # or one finding, by its id
    reason: extra cores granted for the campaign
    owner: platform-team@example.org
    expires: 2027-01-31
\`\`\`

- The file is YAML 1.2 (so JSON too), UTF-8, a regular file (never read
  through a symbolic link) of at most ${WAIVERS_MAX_BYTES / 1024 / 1024} MiB,
  holding one member, \`waivers\`. Each entry has \`rule\` (a rule of this page),
  exactly one match, \`id\` or \`subject\` (a list of key values; a shorter list
  matches every subject it begins: \`[project id]\` every member of a project
  for a certification rule), \`reason\` and \`owner\` (plain text on one line: no
  control, line-break, invisible or bidirectional characters), and \`expires\` (\`YYYY-MM-DD\`, required). Nothing
  else: an unknown field (a typo) is refused.
- A waiver applies through the whole of its \`expires\` day (UTC), compared
  with the snapshot's time like everything else. \`expires\` may be at most
  \`--waivers-max-days\` (default ${DEFAULT_WAIVERS_MAX_DAYS}) after today, so
  that every waiver is looked at again within a year.
- A finding a waiver in force matches stays in every output with
  \`waived: { reason, owner, expires }\` (several matching: the one ending
  last). It does not count for \`--fail-on\` nor in
  \`svc_snapshot_findings\`; \`svc_snapshot_findings_waived{rule,severity,site}\`
  counts it. A waiver whose date has passed no longer applies and is no
  error: the finding is active again and carries \`waiverEnded\` (whose
  waiver ended when); the waiver is listed in \`waivers.ended\`. A waiver in
  force that matches no finding is \`stale\`; one ending within
  \`--expiring-days\` is listed in \`endingSoon\`.
- \`waivers.sha256\` in \`_findings.json\` is the file's sha256: a signed snapshot
  shows which waivers were in force.
- An unusable file (not YAML, not UTF-8, no \`waivers\` list, an unknown rule
  or field, no match or two, no \`expires\` or one that is not a date or is too
  far ahead, the same rule and match twice, hostile text, a link, a file too
  large) is a usage error naming the file and the line, exit 2, before
  anything is read or written.

### CSV

\`svc-snapshot findings <dir> --format csv\` prints, and \`--findings --format
csv\` on a snapshot writes beside \`_findings.json\` as \`_findings.csv\` (listed
in the manifest's \`files\`), one row per finding, then one per resolved
finding (state \`resolved\`), one per finding carried for a rule not evaluated
(state \`carried\`, with its waiver of tonight's file, if any), and one per
rule not evaluated (state \`not evaluated\`, its severity and id, the reason
in \`detail\`: a file that lists no finding of a rule never reads as "no
findings" when the rule could not look), with the
spreadsheets' CSV rules (RFC 4180,
UTF-8 with a byte-order mark, a text that would start a formula prefixed with
\`'\`). The columns: ${FINDINGS_CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')}
(\`subject_key\`'s values joined with \`; \`). On stdout, where every byte passes
the terminal's escaping, the rows end with LF and have no byte-order mark.
`;

function renderRule(rule: RuleDef): string {
  const optional = (r: RuleDef['reads'][number]) =>
    r.optional !== undefined ? ` (optional: ${r.optional}, left out when the snapshot does not hold it)` : '';
  const reads = rule.reads
    .map((r) => `- ${r.export}: ${r.columns.map((c) => `\`${c}\``).join(', ')}${optional(r)}`)
    .join('\n');
  const spec = rule.spec.map((s) => `- ${s.where}: ${s.text}`).join('\n');
  const partText =
    rule.part !== undefined ? `\nSeveral findings of one subject are told apart (in their id) by ${rule.part}.\n` : '';
  const unseenText =
    rule.unseen !== undefined
      ? `\nNever sees, and says so in its \`reason\` whenever it is evaluated: ${rule.unseen}.\n`
      : '';
  return `## ${rule.id}

Severity: **${rule.severity}**. ${rule.description}

${rule.meaning}

Reads:

${reads}
${partText}${unseenText}
Rests on:

${spec}
`;
}

export function renderFindingsMarkdown(): string {
  const rules = [...RULES].sort(compareRules);
  const rows = rules.map((r) => `| [\`${r.id}\`](#${r.id}) | ${r.severity} | ${r.description.replace(/\|/g, '\\|')} |`);
  const table = ['| rule | severity | what it names |', '|---|---|---|', ...rows].join('\n');
  return `${INTRO}${OVER_TIME}\n## The rules\n\n${table}\n\n${rules.map(renderRule).join('\n')}`;
}
