/**
 * `_findings.json` as it is read back (docs/findings.md): by `notify
 * <snapshot-dir>`, by the next night's lifecycle and by `history load`; and
 * the in-memory report a run builds, which has these fields and more, as the
 * digest reads it. One schema; the digest's types are inferred from it
 * (read-only: the digest never changes what it is given). Fields of the file
 * it does not name are left out when it is parsed, not refused: no reader
 * reads them.
 */
import { z } from 'zod';
import { SEVERITIES } from '../config/values.js';

const RowRef = z.object({ export: z.string(), key: z.array(z.string()).readonly() });

/** A finding: its rule's fields, and its lifecycle's where present (docs/findings.md). */
const FindingSchema = z.object({
  rule: z.string(),
  severity: z.enum(SEVERITIES),
  subject: RowRef,
  related: z.array(RowRef).readonly().optional(),
  detail: z.string(),
  id: z.string().optional(),
  /**
   * The names a person reads (`user`, `email`, `project`, `team`, `requirement`,
   * `level`, `vms`), shown in their order: any JSON object, typed `object` so
   * that the findings' own FindingDisplay is one.
   */
  display: z.custom<object>((v) => typeof v === 'object' && v !== null && !Array.isArray(v)).optional(),
  state: z.enum(['new', 'open']).optional(),
  firstSeen: z.string().optional(),
  waived: z.object({ reason: z.string(), owner: z.string(), expires: z.string() }).optional(),
});
export type FindingIn = z.infer<typeof FindingSchema>;

/** A waiver of the file as `_findings.json` lists it: ending soon, ended, or stale (matching nothing). */
const WaiverNoteSchema = z.object({
  rule: z.string(),
  owner: z.string(),
  expires: z.string(),
  reason: z.string().optional(),
  id: z.string().optional(),
  subject: z.array(z.string()).readonly().optional(),
});
export type WaiverNote = z.infer<typeof WaiverNoteSchema>;

const FindingsFileSchema = z.object({
  time: z.string(),
  /** The night the states are told against, if any: a waiver ended since then is news. */
  previous: z.object({ time: z.string() }).optional(),
  rules: z.array(z.object({ id: z.string(), evaluated: z.boolean(), reason: z.string().optional() })).readonly(),
  findings: z.array(FindingSchema).readonly(),
  resolved: z.array(FindingSchema).readonly().optional(),
  /** The night before's findings of rules not evaluated tonight: still firing for Alertmanager unless waived, not news. */
  carried: z.array(FindingSchema).readonly().optional(),
  /** With --waivers: the waivers that end within --expiring-days, those ended, those matching nothing. */
  waivers: z
    .object({
      endingSoon: z.array(WaiverNoteSchema).readonly().optional(),
      ended: z.array(WaiverNoteSchema).readonly().optional(),
      stale: z.array(WaiverNoteSchema).readonly().optional(),
    })
    .optional(),
});
export type FindingsIn = z.infer<typeof FindingsFileSchema>;

/** The findings report of `_findings.json`'s text, or undefined when the text is not one. */
export function readFindingsFile(text: string): FindingsIn | undefined {
  try {
    const parsed = FindingsFileSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
